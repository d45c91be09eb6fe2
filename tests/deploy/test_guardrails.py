"""The guardrail files (``guardrails/scp.json``, ``guardrails/permissions-boundary.json``).

They name the stack's resources by the names CloudFormation gives them
(``<stack>-<logical id>-<suffix>`` for functions, tables and queues without an explicit
name; the policy parameter ``/<stack>/policy``) and its roles by their path
(``/quotagov/<Region>/<stack>/<function>/``). These tests fill the placeholders as
docs/guardrails.md says, check both files are IAM policy documents, that they name
every resource and role of ``template.yaml`` that way, and play the attacker of the
trust model against them: a developer role holding each of the four rights is refused,
quotagov's own roles keep every right the template grants them.

The Deny evaluation here covers what the files use (``Action``/``Resource`` with
``*`` wildcards, ``ArnNotLike`` on ``aws:PrincipalArn``; IAM User Guide, "IAM JSON
policy elements: Condition operators",
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html).
"""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest

from quotagov_tools.deploy.template import (
    FUNCTION_TYPE,
    function_role,
    function_statements,
    load_template,
    references,
    resources_of_type,
)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
FILES = ("scp.json", "permissions-boundary.json")

STACK, REGION, ACCOUNT, PARTITION = "quotagov", "eu-west-1", "111122223333", "aws"
DEPLOYER = f"arn:aws:iam::{ACCOUNT}:role/deployer"
OPERATOR = f"arn:aws:iam::{ACCOUNT}:role/quotagov-operators"
DEVELOPER = f"arn:aws:iam::{ACCOUNT}:role/developer"  # PowerUserAccess-like
PLACEHOLDER = re.compile(r"<[A-Za-z]+>")


def _fill(text: str, *, deployer: str = DEPLOYER, operator: str = OPERATOR) -> dict[str, Any]:
    """The document with its placeholders filled; an empty role drops out of its list."""
    values = {
        "<StackName>": STACK,
        "<Region>": REGION,
        "<AccountId>": ACCOUNT,
        "<Partition>": PARTITION,
        "<DeployerRoleArn>": deployer,
        "<OperatorRoleArn>": operator,
    }
    document = json.loads(text)

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            for token, replacement in values.items():
                value = value.replace(token, replacement)
            return value
        if isinstance(value, list):
            return [v for v in (fill(item) for item in value) if v != ""]
        if isinstance(value, dict):
            return {key: fill(item) for key, item in value.items()}
        return value

    filled: dict[str, Any] = fill(document)
    return filled


def _document(name: str) -> dict[str, Any]:
    return _fill((ROOT / "guardrails" / name).read_text(encoding="utf-8"))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _denied(document: dict[str, Any], principal: str, action: str, resource: str) -> list[str]:
    """Sids of the Deny statements of ``document`` that refuse this request."""
    found = []
    for statement in document["Statement"]:
        if statement["Effect"] != "Deny":
            continue
        if not any(fnmatchcase(action.lower(), a.lower()) for a in _list(statement["Action"])):
            continue
        if not any(fnmatchcase(resource, r) for r in _list(statement["Resource"])):
            continue
        spared = statement.get("Condition", {}).get("ArnNotLike", {}).get("aws:PrincipalArn", [])
        if any(fnmatchcase(principal, p) for p in _list(spared)):
            continue
        found.append(statement["Sid"])
    return found


def _name(logical_id: str) -> str:
    """The name CloudFormation gives a resource without an explicit one."""
    return f"{STACK}-{logical_id}-1A2B3C4D5E6F"


def _arn(logical_id: str) -> str:
    kind = RESOURCES[logical_id]["Type"]
    if kind == FUNCTION_TYPE:
        return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{_name(logical_id)}"
    if kind == "AWS::DynamoDB::Table":
        return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{_name(logical_id)}"
    if kind == "AWS::SQS::Queue":
        return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{_name(logical_id)}"
    if kind == "AWS::SSM::Parameter":
        name = RESOURCES[logical_id]["Properties"]["Name"]["Fn::Sub"].replace(
            "${AWS::StackName}", STACK
        )
        return f"arn:aws:ssm:{REGION}:{ACCOUNT}:parameter{name}"
    raise AssertionError(f"{logical_id}: {kind} is not named by the guardrails")


def _role_arn(function: str) -> str:
    """The execution role's ARN, its path as the template writes it."""
    role = function_role(TEMPLATE, function)
    if role in RESOURCES:
        path = RESOURCES[role]["Properties"]["Path"]
    else:
        path = RESOURCES[function]["Properties"]["RolePath"]
    text = path["Fn::Sub"].replace("${AWS::Region}", REGION).replace("${AWS::StackName}", STACK)
    return f"arn:aws:iam::{ACCOUNT}:role{text}{STACK}-{role}-ABCDEF"


FUNCTIONS = sorted(resources_of_type(TEMPLATE, FUNCTION_TYPE))
TABLES = sorted(resources_of_type(TEMPLATE, "AWS::DynamoDB::Table"))
QUEUES = sorted(resources_of_type(TEMPLATE, "AWS::SQS::Queue"))


@pytest.mark.parametrize("name", FILES)
def test_each_file_is_an_iam_policy_document(name: str) -> None:
    text = (ROOT / "guardrails" / name).read_text(encoding="utf-8")
    raw = json.loads(text)
    assert raw["Version"] == "2012-10-17"
    sids = [s["Sid"] for s in raw["Statement"]]
    assert len(sids) == len(set(sids))
    for statement in raw["Statement"]:
        assert set(statement) <= {"Sid", "Effect", "Action", "Resource", "Condition"}
        assert statement["Effect"] in {"Allow", "Deny"}
        for action in _list(statement["Action"]):
            assert action == "*" or re.fullmatch(r"[a-z0-9-]+:[A-Za-z*]+", action), action
    # AWS Organizations quota: an SCP holds at most 5,120 characters.
    assert len(json.dumps(raw, separators=(",", ":"))) <= 5120
    filled = json.dumps(_document(name))
    assert not PLACEHOLDER.search(filled), PLACEHOLDER.findall(filled)


def test_the_template_names_its_resources_the_way_the_guardrails_expect() -> None:
    """No explicit name on a function, table or queue (CloudFormation's names start with
    the stack name); every execution role under /quotagov/<Region>/<stack>/."""
    for logical_id in FUNCTIONS:
        assert "FunctionName" not in RESOURCES[logical_id]["Properties"]
    for logical_id in TABLES:
        assert "TableName" not in RESOURCES[logical_id]["Properties"]
    for logical_id in QUEUES:
        assert "QueueName" not in RESOURCES[logical_id]["Properties"]
    assert "OperatorRoleArn" in TEMPLATE["Parameters"]


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize(
    ("action", "kind"),
    [
        ("lambda:InvokeFunction", FUNCTION_TYPE),
        ("dynamodb:PutItem", "AWS::DynamoDB::Table"),
        ("dynamodb:UpdateItem", "AWS::DynamoDB::Table"),
        ("ssm:PutParameter", "AWS::SSM::Parameter"),
        ("sqs:ReceiveMessage", "AWS::SQS::Queue"),
        ("sqs:DeleteMessage", "AWS::SQS::Queue"),
        ("sqs:PurgeQueue", "AWS::SQS::Queue"),
        ("sqs:SetQueueAttributes", "AWS::SQS::Queue"),
        ("dynamodb:DeleteResourcePolicy", "AWS::DynamoDB::Table"),
    ],
)
def test_a_developer_holding_the_right_is_refused_on_every_resource(
    name: str, action: str, kind: str
) -> None:
    """The attacker of the trust model: a role below an admin whose identity policies
    allow ``action`` on the stack's resources. Each request is refused by a Deny (an
    explicit Deny in an SCP or a boundary overrides any Allow)."""
    document = _document(name)
    for logical_id in resources_of_type(TEMPLATE, kind):
        assert _denied(document, DEVELOPER, action, _arn(logical_id)), (logical_id, action)


def test_quotagov_roles_keep_every_right_the_template_grants_them() -> None:
    """The guardrails must not break the stack: no request a function's statements allow
    on its own functions, tables, queues or parameter is denied to its role."""
    scp = _document("scp.json")
    named = set(FUNCTIONS) | set(TABLES) | set(QUEUES) | {"PolicyParameter"}
    checked = 0
    for function in FUNCTIONS:
        role = _role_arn(function)
        for statement in function_statements(TEMPLATE, function):
            if statement.get("Effect") != "Allow":
                continue
            targets = {t for r in _list(statement["Resource"]) for t in references(r)} & named
            for target in targets:
                for action in _list(statement["Action"]):
                    assert _denied(scp, role, action, _arn(target)) == [], (function, action)
                    checked += 1
    assert checked > 50


def test_operators_redrive_and_deployers_deploy_others_do_not() -> None:
    scp = _document("scp.json")
    dlq, table, parameter = (
        _arn("SubmissionDeadLetterQueue"),
        _arn("JobsTable"),
        _arn("PolicyParameter"),
    )
    assert _denied(scp, OPERATOR, "sqs:ReceiveMessage", dlq) == []
    assert _denied(scp, OPERATOR, "dynamodb:UpdateItem", table) == []
    assert _denied(scp, DEPLOYER, "ssm:PutParameter", parameter) == []
    assert _denied(scp, DEPLOYER, "sqs:SetQueueAttributes", dlq) == []
    # the operator may redrive but not rewrite the policy or the queues' policies
    assert _denied(scp, OPERATOR, "ssm:PutParameter", parameter)
    assert _denied(scp, OPERATOR, "sqs:SetQueueAttributes", dlq)
    # a function's role never writes the policy
    assert _denied(scp, _role_arn("JobsApiFunction"), "ssm:PutParameter", parameter)


def test_without_an_operator_role_only_the_stack_roles_are_spared() -> None:
    text = (ROOT / "guardrails" / "scp.json").read_text(encoding="utf-8")
    scp = _fill(text, operator="")
    assert _denied(scp, OPERATOR, "sqs:ReceiveMessage", _arn("SubmissionDeadLetterQueue"))
    assert (
        _denied(
            scp, _role_arn("SubmitWorkerFunction"), "sqs:ReceiveMessage", _arn("SubmissionQueue")
        )
        == []
    )
