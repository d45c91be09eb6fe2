"""What the built template must show for identity and authority.

Read from ``.aws-sam/build/template.yaml`` when ``sam build`` ran (``make test`` runs
it first), else from ``template.yaml``: only the apply function may call
``UpdateServiceJob``; the internet-facing Slack function has no mutating Batch action,
no ``iam:PassRole`` and no audit-table write; the submission and apply queues have
policies naming their only senders; both APIs throttle the Slack and job routes with
limits of their own; the functions that fail submissions tell their owners only
through the owner notice queue.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from quotagov_tools.deploy.checks import default_template
from quotagov_tools.deploy.template import (
    FUNCTION_TYPE,
    function_statements,
    load_template,
    references,
    resources_of_type,
)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(default_template(ROOT))
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
FUNCTIONS = sorted(resources_of_type(TEMPLATE, FUNCTION_TYPE))

#: The operator role's place in a policy's list (``quotagov redrive``), when it is given.
OPERATOR = {"Fn::If": ["HasOperatorRole", {"Ref": "OperatorRoleArn"}, {"Ref": "AWS::NoValue"}]}

#: Batch actions that only read (DescribeServiceJob, ListServiceJobs, GetJobQueueSnapshot...).
READ_PREFIXES = ("batch:Describe", "batch:List", "batch:Get")


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _statements(function: str) -> list[dict[str, Any]]:
    return function_statements(TEMPLATE, function)


def _actions(function: str) -> set[str]:
    return {a for s in _statements(function) for a in _as_list(s["Action"])}


def _actions_on(function: str, logical_id: str) -> set[str]:
    found: set[str] = set()
    for statement in _statements(function):
        if any(logical_id in set(references(r)) for r in _as_list(statement["Resource"])):
            found.update(_as_list(statement["Action"]))
    return found


def test_only_the_apply_function_holds_update_service_job() -> None:
    holders = [f for f in FUNCTIONS if "batch:UpdateServiceJob" in _actions(f)]
    assert holders == ["ApplyDecisionsFunction"]


def test_the_slack_function_only_verifies_and_records() -> None:
    actions = _actions("SlackInteractionsFunction")
    mutating_batch = {
        a for a in actions if a.startswith("batch:") and not a.startswith(READ_PREFIXES)
    }
    assert mutating_batch == set()
    assert "iam:PassRole" not in actions
    assert _actions_on("SlackInteractionsFunction", "AuditTable") == set()
    assert _actions_on("SlackInteractionsFunction", "SubmissionQueue") == set()
    assert _actions_on("SlackInteractionsFunction", "ApplyQueue") == {"sqs:SendMessage"}
    variables = RESOURCES["SlackInteractionsFunction"]["Properties"]["Environment"]["Variables"]
    assert "AUDIT_TABLE" not in variables and "SUBMISSION_QUEUE_URL" not in variables
    assert variables["APPLY_QUEUE_URL"] == {"Ref": "ApplyQueue"}


def test_no_function_that_records_decisions_passes_roles_or_changes_jobs() -> None:
    """The escalation API and the expiry schedule changed job priorities before; now
    neither holds a mutating Batch action."""
    for function in ("EscalationsApiFunction", "EscalationExpiryFunction"):
        actions = _actions(function)
        assert not {
            a for a in actions if a.startswith("batch:") and not a.startswith(READ_PREFIXES)
        }
        assert "iam:PassRole" not in actions


def _deny_senders(queue_policy: str, queue: str) -> list[Any]:
    properties = RESOURCES[queue_policy]["Properties"]
    assert properties["Queues"] == [{"Ref": queue}]
    statements = properties["PolicyDocument"]["Statement"]
    [deny] = [
        s
        for s in statements
        if s["Effect"] == "Deny" and s["Action"] == "sqs:SendMessage" and s["Principal"] == "*"
    ]
    assert deny["Resource"] == {"Fn::GetAtt": [queue, "Arn"]}
    senders: list[Any] = deny["Condition"]["ArnNotEquals"]["aws:PrincipalArn"]
    tls = [s for s in statements if s.get("Condition", {}).get("Bool")]
    assert tls and tls[0]["Condition"]["Bool"] == {"aws:SecureTransport": "false"}
    return senders


def test_the_submission_queue_takes_messages_only_from_the_api() -> None:
    """And from the reconciler, which re-queues only ids of stored QUEUED records."""
    assert _deny_senders("SubmissionQueuePolicy", "SubmissionQueue") == [
        {"Fn::GetAtt": ["JobsApiFunctionRole", "Arn"]},
        {"Fn::GetAtt": ["ReconcilerFunctionRole", "Arn"]},
        OPERATOR,
    ]
    senders = [f for f in FUNCTIONS if "sqs:SendMessage" in _actions_on(f, "SubmissionQueue")]
    assert senders == ["JobsApiFunction", "ReconcilerFunction"]


def test_the_apply_queue_takes_messages_only_from_the_decision_recorders() -> None:
    assert _deny_senders("ApplyQueuePolicy", "ApplyQueue") == [
        {"Fn::GetAtt": ["SlackInteractionsFunctionRole", "Arn"]},
        {"Fn::GetAtt": ["EscalationsApiFunctionRole", "Arn"]},
        OPERATOR,
    ]
    senders = [f for f in FUNCTIONS if "sqs:SendMessage" in _actions_on(f, "ApplyQueue")]
    assert senders == ["EscalationsApiFunction", "SlackInteractionsFunction"]


def test_failed_submissions_reach_their_owners_through_the_function_holding_slack() -> None:
    """The worker and the reconciler fail submissions but hold no Slack secret: they
    may only send notices to OwnerNoticeQueue (its policy names exactly them), which
    ApplyDecisionsFunction, a holder of the secret already, consumes."""
    assert _deny_senders("OwnerNoticeQueuePolicy", "OwnerNoticeQueue") == [
        {"Fn::GetAtt": ["SubmitWorkerFunctionRole", "Arn"]},
        {"Fn::GetAtt": ["ReconcilerFunctionRole", "Arn"]},
        OPERATOR,
    ]
    senders = [f for f in FUNCTIONS if "sqs:SendMessage" in _actions_on(f, "OwnerNoticeQueue")]
    assert senders == ["ReconcilerFunction", "SubmitWorkerFunction"]
    for sender in senders:
        assert _actions_on(sender, "SlackSecret") == set()
        variables = RESOURCES[sender]["Properties"]["Environment"]["Variables"]
        assert "SLACK_SECRET_ARN" not in variables
        assert variables["OWNER_NOTICE_QUEUE_URL"] == {"Ref": "OwnerNoticeQueue"}
        # and no other way to the apply function
        assert _actions_on(sender, "ApplyQueue") == set()
    consumers = [
        f
        for f in FUNCTIONS
        for event in (RESOURCES[f]["Properties"].get("Events") or {}).values()
        if event["Type"] == "SQS"
        and "OwnerNoticeQueue" in set(references(event["Properties"]["Queue"]))
    ]
    assert consumers == ["ApplyDecisionsFunction"]
    assert _actions_on("ApplyDecisionsFunction", "SlackSecret") == {"secretsmanager:GetSecretValue"}
    queue = RESOURCES["OwnerNoticeQueue"]["Properties"]
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {
        "Fn::GetAtt": ["OwnerNoticeDeadLetterQueue", "Arn"]
    }


def _method_settings(api: str) -> dict[tuple[str, str], tuple[int, float]]:
    settings = RESOURCES[api]["Properties"]["MethodSettings"]
    return {
        (s["ResourcePath"], s["HttpMethod"]): (s["ThrottlingBurstLimit"], s["ThrottlingRateLimit"])
        for s in settings
    }


JOB_ROUTES = [
    ("/~1jobs", "POST"),
    ("/~1jobs~1{jobId}", "GET"),
    ("/~1jobs~1{jobId}~1disposition", "POST"),
    ("/~1jobs~1{jobId}~1escalations", "POST"),
]


@pytest.mark.parametrize("api", ["Api", "JwtApi"])
def test_both_apis_throttle_each_job_route_on_its_own(api: str) -> None:
    settings = _method_settings(api)
    assert ("/*", "*") in settings  # the stage ceiling for anything else
    for route in JOB_ROUTES:
        burst, rate = settings[route]
        assert burst > 0 and rate > 0


def test_the_public_slack_route_has_its_own_limit_below_the_stage() -> None:
    settings = _method_settings("Api")
    slack = settings[("/~1slack~1interactions", "POST")]
    stage = settings[("/*", "*")]
    assert slack[0] < stage[0] and slack[1] < stage[1]
    # the job routes' limits are not shared with the Slack route's
    assert all(route in settings for route in JOB_ROUTES)
    assert "/slack/interactions" not in RESOURCES["JwtApi"]["Properties"]["DefinitionBody"]["paths"]


def test_both_apis_serve_the_same_job_routes() -> None:
    """The Cognito (JWT) API declares in OpenAPI the job routes the IAM API's functions
    declare as events: the same routes (``GET /jobs`` included), each to the same
    function; only the Slack route is the IAM API's alone (Slack signs instead)."""
    iam: dict[tuple[str, str], str] = {}
    for name, resource in resources_of_type(TEMPLATE, FUNCTION_TYPE).items():
        for event in (resource["Properties"].get("Events") or {}).values():
            if event["Type"] == "Api" and event["Properties"].get("RestApiId") in (
                None,
                {"Ref": "Api"},
            ):
                iam[(event["Properties"]["Method"].upper(), event["Properties"]["Path"])] = name
    jwt: dict[tuple[str, str], str] = {}
    for path, operations in RESOURCES["JwtApi"]["Properties"]["DefinitionBody"]["paths"].items():
        for method, operation in operations.items():
            uri = operation["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"]
            jwt[(method.upper(), path)] = uri.split("${", 3)[-1].split(".Arn}")[0]
    del iam[("POST", "/slack/interactions")]
    assert jwt == iam
    assert ("GET", "/jobs") in jwt
