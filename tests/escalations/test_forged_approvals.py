"""Attacks on the apply step by a caller with the Slack function's table rights.

``docs/design.md``, "Trust model": the internet-facing Slack function only verifies and records;
the apply function alone calls ``UpdateServiceJob``. The Slack function's role holds
``dynamodb:UpdateItem`` on the escalations table and the jobs table (its conditional
writes), and UpdateItem can write any attribute of any item. A compromised Slack
function, or anyone holding that role's rights, therefore writes what it likes. These
tests are that attacker: they rewrite a PENDING request into an approval the policy
would never give, hand it to the apply function (or wait for its retry run), and check
that Batch was not called, the job's priority is what it was and the forgery is
refused and audited.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotagov.governance.apply_messages import escalation_message
from quotagov.governance.model.escalation import EscalationStatus
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from support.lambda_context import LambdaContext
from support.principals import FRANK

from .test_handoff_messages import _idempotency_table
from .world import World

REASON = "Camera-ready deadline on Friday; bg-2 produces the final ablation."


def _forge(world: World, escalation_id: str, **attributes: Any) -> None:
    """``UpdateItem`` the escalation item as the Slack function's role may."""
    names = {f"#a{i}": name for i, name in enumerate(attributes)}
    values = {
        f":v{i}": (
            {"N": str(value)}
            if isinstance(value, int | float) and not isinstance(value, bool)
            else {"BOOL": value}
            if isinstance(value, bool)
            else {"S": value}
        )
        for i, value in enumerate(attributes.values())
    }
    world.escalations.client.update_item(
        TableName=world.escalations.table_name,
        Key={"pk": {"S": escalation_id}},
        UpdateExpression="SET " + ", ".join(f"#a{i} = :v{i}" for i in range(len(attributes))),
        ExpressionAttributeNames=names,
        ExpressionAttributeValues=values,
    )


def _deliver(escalation_id: str) -> dict[str, Any]:
    """The hand-off message the Slack function sends, as the apply function gets it."""
    from quotagov.handlers import apply_decisions

    record = {
        "messageId": "m-forged",
        "receiptHandle": "r-forged",
        "body": json.dumps(escalation_message(escalation_id)),
        "attributes": {"ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:eu-west-1:111122223333:quotagov-ApplyQueue",
    }
    result: dict[str, Any] = apply_decisions.handler({"Records": [record]}, LambdaContext())  # type: ignore[arg-type]
    return result


def _pending(world: World) -> str:
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 201, body
    return str(body["escalationId"])


def _approved_by(decider: str, now: float) -> dict[str, Any]:
    return {"status": "APPROVED", "decidedBy": decider, "decidedAt": now, "claimedAt": now}


FORGERIES: dict[str, Any] = {
    # four-eyes: the requester (U0ALICE) approves her own request
    "self-approval": lambda w: _approved_by("U0ALICE", w.clock.now()),
    # someone who is no approver of the share or the team
    "not-an-approver": lambda w: _approved_by("U0MALLORY", w.clock.now()),
    # a genuine approver's id, but a priority that is no level of the policy
    "priority-edited": lambda w: (
        _approved_by("U0ERIN", w.clock.now()) | {"requestedPriority": 9999}
    ),
    # a genuine approver's id, a level research may not request at all (critical, 99)
    "level-edited": lambda w: (
        _approved_by("U0ERIN", w.clock.now())
        | {"requestedLevel": "critical", "requestedPriority": 99}
    ),
    # four-eyes on the item's own data: the requester's Slack id replaced
    "requester-slack-id-edited": lambda w: (
        _approved_by("U0ALICE", w.clock.now()) | {"requesterSlackId": "U0NOBODY"}
    ),
    # an approval level passed off as a level the team sets itself
    "direct-flag-set": lambda w: _approved_by(QUOTAGOV_ACTOR, w.clock.now()) | {"direct": True},
    # the approval aimed at another team's job (release's res-1)
    "batch-job-edited": lambda w: (
        _approved_by("U0ERIN", w.clock.now()) | {"batchJobId": w.job_ids["res-1"]}
    ),
    # the requester replaced by someone of another team
    "requester-edited": lambda w: (
        _approved_by("U0ERIN", w.clock.now()) | {"requester": FRANK, "requesterSlackId": "U0FRANK"}
    ),
}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_approval_handed_off_changes_nothing_in_batch(
    world: World, dynamodb_endpoint: str, forgery: str
) -> None:
    _idempotency_table(world, dynamodb_endpoint)
    escalation_id = _pending(world)
    priorities = {name: world.describe(name)["schedulingPriority"] for name in world.job_ids}
    _forge(world, escalation_id, **FORGERIES[forgery](world))

    assert _deliver(escalation_id) == {"batchItemFailures": []}

    assert world.update_calls == []
    assert {name: world.describe(name)["schedulingPriority"] for name in world.job_ids} == (
        priorities
    )
    after = world.escalations.get(escalation_id)
    assert after is not None
    assert after.status is EscalationStatus.DENIED
    assert after.decided_by == QUOTAGOV_ACTOR
    assert after.error is not None and after.error.startswith("refused before applying: ")
    refused = [d for d in world.audit.decisions if d.action == "EscalationApplyRefused"]
    assert [(d.actor, d.resource, d.decision_id) for d in refused] == [
        (QUOTAGOV_ACTOR, escalation_id, f"{escalation_id}:apply-refused")
    ]
    assert refused[0].details["refusal"] == after.error.removeprefix("refused before applying: ")
    assert "EscalationApplied" not in [d.action for d in world.audit.decisions]
    # the Slack message says so (no buttons left)
    assert after.channel is not None and after.ts is not None
    blocks = json.dumps(world.slack.message(after.channel, after.ts).blocks)
    assert "Not applied: `refused before applying: " in blocks
    assert '"type": "actions"' not in blocks
    # the job is free again: its owner may ask anew
    assert world.request("sub-bg-2", "high", REASON)[0] == 201


def test_a_forged_approval_is_not_applied_by_the_retry_run(world: World) -> None:
    """No hand-off at all: an APPROVED item whose claim lapsed is taken over by the
    apply function's 5-minute run, which must check it the same way."""
    escalation_id = _pending(world)
    _forge(world, escalation_id, **_approved_by("U0ALICE", world.clock.now()))
    world.clock.advance(1000)  # past STALE_APPROVAL_SECONDS

    world.expire()

    assert world.update_calls == []
    after = world.escalations.get(escalation_id)
    assert after is not None and after.status is EscalationStatus.DENIED
    assert after.error == (
        "refused before applying: four-eyes: U0ALICE requested it and cannot approve it"
    )


def test_a_genuine_approval_still_applies(world: World) -> None:
    """The same path with the approval the policy gives (Erin, an approver of research)."""
    escalation_id = _pending(world)
    assert world.click(escalation_id, "U0ERIN") == 200
    assert world.update_calls == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": 50}]
    after = world.escalations.get(escalation_id)
    assert after is not None and after.status is EscalationStatus.APPLIED
