"""Every resource policy of the built template, and the ``seal`` rule that keeps them.

Read from ``.aws-sam/build/template.yaml`` when ``sam build`` ran (``make test`` runs
it first), else from ``template.yaml``. The expectations below are written out by hand,
queue by queue and table by table, so a change to who may send, receive, write or read
shows up here as well as in the checker (:mod:`quotagov_tools.deploy.checks.seals`), which
derives the same lists from the grants. The checker is then given faults on purpose.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from quotagov_tools.deploy.checks import check_seals, default_template
from quotagov_tools.deploy.checks.seals import queue_seal, secret_readers, table_seal
from quotagov_tools.deploy.template import function_statements, load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(default_template(ROOT))
OP = "OperatorRoleArn"

#: queue -> (who may send, who may receive/delete/change visibility/purge/move).
QUEUES: dict[str, tuple[set[str], set[str]]] = {
    "SubmissionQueue": (
        {"JobsApiFunctionRole", "ReconcilerFunctionRole", OP},
        {"SubmitWorkerFunctionRole"},
    ),
    "ApplyQueue": (
        {"SlackInteractionsFunctionRole", "EscalationsApiFunctionRole", OP},
        {"ApplyDecisionsFunctionRole"},
    ),
    "OwnerNoticeQueue": (
        {"SubmitWorkerFunctionRole", "ReconcilerFunctionRole", OP},
        {"ApplyDecisionsFunctionRole"},
    ),
    "AuditQueue": (
        {
            "JobsApiFunctionRole",
            "SubmitWorkerFunctionRole",
            "JobStateFunctionRole",
            "EscalationsApiFunctionRole",
            "SlackInteractionsFunctionRole",
            "EscalationExpiryFunctionRole",
            "ApplyDecisionsFunctionRole",
            "ReconcilerFunctionRole",
            OP,
        },
        {"AuditFunctionRole"},
    ),
    "FailedEventsQueue": (
        {"JobStateFunctionRole", "AuditFunctionRole", "AuditDigestFunctionRole"},
        {OP},
    ),
    # Amazon SQS parks messages itself: nobody sends; only the operators redrive.
    "SubmissionDeadLetterQueue": (set(), {OP}),
    "ApplyDeadLetterQueue": (set(), {OP}),
    "OwnerNoticeDeadLetterQueue": (set(), {OP}),
    "AuditDeadLetterQueue": (set(), {OP}),
    # EventBridge parks undeliverable events (a service principal, no role).
    "JobStateEventsDeadLetterQueue": ({"events.amazonaws.com"}, {OP}),
    "AuditEventsDeadLetterQueue": ({"events.amazonaws.com"}, {OP}),
}

#: table -> write action -> the functions (and operator role) allowed it.
TABLES: dict[str, dict[str, set[str]]] = {
    "JobsTable": {
        "dynamodb:PutItem": {"JobsApiFunction", "JobStateFunction", "ApplyDecisionsFunction"},
        "dynamodb:UpdateItem": {
            "JobsApiFunction",
            "SubmitWorkerFunction",
            "JobStateFunction",
            "EscalationsApiFunction",
            "SlackInteractionsFunction",
            "ApplyDecisionsFunction",
            "EscalationExpiryFunction",
            "ReconcilerFunction",
            OP,  # quotagov redrive marks re-queued submissions
        },
        "dynamodb:DeleteItem": set(),
    },
    "EscalationsTable": {
        "dynamodb:PutItem": {"EscalationsApiFunction"},
        "dynamodb:UpdateItem": {
            "EscalationsApiFunction",
            "SlackInteractionsFunction",
            "ApplyDecisionsFunction",
            "EscalationExpiryFunction",
        },
        "dynamodb:DeleteItem": {
            "EscalationsApiFunction",
            "SlackInteractionsFunction",
            "ApplyDecisionsFunction",
            "EscalationExpiryFunction",
        },
    },
    "AuditTable": {
        "dynamodb:PutItem": {"AuditFunction"},
        "dynamodb:UpdateItem": set(),
        "dynamodb:DeleteItem": set(),
    },
    "IdempotencyTable": {
        # the Slack function puts the replay cache's items, and nothing else
        "dynamodb:PutItem": {
            "SubmitWorkerFunction",
            "ApplyDecisionsFunction",
            "SlackInteractionsFunction",
        },
        "dynamodb:UpdateItem": {"SubmitWorkerFunction", "ApplyDecisionsFunction"},
        "dynamodb:DeleteItem": {"SubmitWorkerFunction", "ApplyDecisionsFunction"},
    },
}

NOBODY = ("dynamodb:BatchWriteItem", "dynamodb:PartiQLInsert", "dynamodb:PartiQLUpdate")


def test_the_built_template_passes_the_seal_rule() -> None:
    assert check_seals(TEMPLATE) == []


@pytest.mark.parametrize("queue", sorted(QUEUES))
def test_each_queue_admits_only_its_producers_and_its_consumer(queue: str) -> None:
    """The attacker holds ``sqs:*`` through an identity policy: the queue's explicit
    Denies refuse sending, receiving, deleting, changing visibility, purging and
    moving messages to every principal but these."""
    assert queue_seal(TEMPLATE, queue) == QUEUES[queue]
    assert set(QUEUES) == {
        n for n, r in TEMPLATE["Resources"].items() if r.get("Type") == "AWS::SQS::Queue"
    }


@pytest.mark.parametrize("table", sorted(TABLES))
def test_each_table_refuses_writes_but_by_the_roles_that_own_it(table: str) -> None:
    """The attacker holds ``dynamodb:PutItem`` (or any item write) on the table."""
    spared = table_seal(TEMPLATE, table)
    assert {a: spared[a] for a in TABLES[table]} == TABLES[table]
    for action in NOBODY:
        assert spared[action] == set()


def test_the_signing_secret_is_readable_by_the_slack_function_only() -> None:
    assert secret_readers(TEMPLATE, "SlackSigningSecret") == {"SlackInteractionsFunctionRole"}
    assert secret_readers(TEMPLATE, "SlackSecret") == {
        "JobsApiFunctionRole",
        "JobStateFunctionRole",
        "EscalationsApiFunctionRole",
        "ApplyDecisionsFunctionRole",
        "EscalationExpiryFunctionRole",
        "AuditFunctionRole",
    }


def test_no_function_role_carries_a_managed_policy() -> None:
    """The SQS-triggered functions run as roles the template writes out: no
    ``AWSLambdaSQSQueueExecutionRole`` (receive and delete on every queue)."""
    for function in ("SubmitWorkerFunction", "ApplyDecisionsFunction", "AuditFunction"):
        role = TEMPLATE["Resources"][f"{function}Role"]
        assert role["Type"] == "AWS::IAM::Role"
        assert "ManagedPolicyArns" not in role["Properties"]
        polls = [s for s in function_statements(TEMPLATE, function) if s["Sid"] == "PollOwnQueue"]
        assert [p["Resource"] for p in polls] == [
            [{"Fn::GetAtt": [q, "Arn"]} for q in queues]
            for queues in [
                {
                    "SubmitWorkerFunction": ["SubmissionQueue"],
                    "ApplyDecisionsFunction": ["ApplyQueue", "OwnerNoticeQueue"],
                    "AuditFunction": ["AuditQueue"],
                }[function]
            ]
        ]


def test_tagging_is_allowed_on_create_only() -> None:
    for function in (
        "JobsApiFunction",
        "SubmitWorkerFunction",
        "JobStateFunction",
        "ApplyDecisionsFunction",
    ):
        [tag] = [
            s for s in function_statements(TEMPLATE, function) if "batch:TagResource" in s["Action"]
        ]
        assert tag["Action"] == "batch:TagResource"
        assert tag["Condition"]["Null"] == {"aws:ResourceTag/quotagov:submissionId": "true"}
        assert tag["Resource"] == {
            "Fn::Sub": "arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:service-job/*"
        }


# ------------------------------------------------------------- the rule, given faults


def _statements_of(template: dict[str, Any], queue_policy: str) -> list[dict[str, Any]]:
    statements: list[dict[str, Any]] = template["Resources"][queue_policy]["Properties"][
        "PolicyDocument"
    ]["Statement"]
    return statements


def test_a_queue_without_its_policy_is_found() -> None:
    broken = copy.deepcopy(TEMPLATE)
    del broken["Resources"]["ApplyDeadLetterQueuePolicy"]
    assert [str(f) for f in check_seals(broken)] == [
        "[seal] ApplyDeadLetterQueue: no AWS::SQS::QueuePolicy: "
        "any principal IAM allows may send and receive"
    ]


def test_a_consumer_statement_spared_for_another_role_is_found() -> None:
    broken = copy.deepcopy(TEMPLATE)
    [receive] = [
        s for s in _statements_of(broken, "AuditQueuePolicy") if "sqs:ReceiveMessage" in s["Action"]
    ]
    receive["Condition"]["ArnNotEquals"]["aws:PrincipalArn"].append(
        {"Fn::GetAtt": ["JobsApiFunctionRole", "Arn"]}
    )
    assert [str(f) for f in check_seals(broken)] == [
        "[seal] AuditQueue: receiving is spared for AuditFunctionRole, JobsApiFunctionRole, "
        "but the consumers are AuditFunctionRole"
    ]


def test_a_table_write_granted_without_its_seal_is_found() -> None:
    """A new grant of PutItem on the audit table needs the table's policy to follow
    (and the iam rule refuses a second audit writer anyway)."""
    broken = copy.deepcopy(TEMPLATE)
    statements = broken["Resources"]["ReconcilerFunction"]["Properties"]["Policies"][0]["Statement"]
    statements.append(
        {
            "Sid": "Idem",
            "Effect": "Allow",
            "Action": "dynamodb:PutItem",
            "Resource": {"Fn::GetAtt": ["IdempotencyTable", "Arn"]},
        }
    )
    assert [str(f) for f in check_seals(broken)] == [
        "[seal] IdempotencyTable: dynamodb:PutItem spared for ApplyDecisionsFunction, "
        "SlackInteractionsFunction, SubmitWorkerFunction, granted to ApplyDecisionsFunction, "
        "ReconcilerFunction, SlackInteractionsFunction, SubmitWorkerFunction"
    ]


def test_an_sqs_function_on_a_generated_role_and_a_retagging_right_are_found() -> None:
    broken = copy.deepcopy(TEMPLATE)
    worker = broken["Resources"]["SubmitWorkerFunction"]["Properties"]
    role = broken["Resources"].pop("SubmitWorkerFunctionRole")
    del worker["Role"]
    worker["Policies"] = [
        {"Statement": role["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]}
    ]
    for statement in worker["Policies"][0]["Statement"]:
        statement.pop("Condition", None) if statement["Sid"] == "TagOnCreateOnly" else None
    messages = [str(f) for f in check_seals(broken) if f.resource == "SubmitWorkerFunction"]
    assert messages == [
        "[seal] SubmitWorkerFunction: an SQS event source on a SAM-generated role attaches "
        "AWSLambdaSQSQueueExecutionRole (every queue); name an AWS::IAM::Role",
        "[seal] SubmitWorkerFunction: statement TagOnCreateOnly: batch:TagResource without "
        "the tag-on-create condition (retags existing jobs)",
    ]


def test_a_secret_readable_beyond_its_grants_is_found() -> None:
    broken = copy.deepcopy(TEMPLATE)
    policy = broken["Resources"]["SlackSigningSecretPolicy"]["Properties"]["ResourcePolicy"]
    policy["Statement"][0]["Condition"]["ArnNotEquals"]["aws:PrincipalArn"] = [
        {"Fn::GetAtt": ["SlackInteractionsFunctionRole", "Arn"]},
        {"Fn::GetAtt": ["ApplyDecisionsFunctionRole", "Arn"]},
    ]
    assert [str(f) for f in check_seals(broken)] == [
        "[seal] SlackSigningSecret: readable by ApplyDecisionsFunctionRole, "
        "SlackInteractionsFunctionRole, granted to SlackInteractionsFunctionRole"
    ]
