"""The hand-off messages to ApplyDecisionsFunction: their shapes, faults and the
apply function's answer to a forged or stale one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from quotagov.governance.apply_messages import (
    NOTICE_KINDS,
    HandoffMessageError,
    disposition_message,
    escalation_message,
    parse_message,
    submission_failed_message,
)
from quotagov.governance.model.escalation import EscalationStatus
from quotagov.governance.ports.audit import ControllerDecision
from quotagov_tools.local.fake_slack import FakeSlack
from support.lambda_context import LambdaContext

from .world import BOT_TOKEN, World

REASON = "Camera-ready deadline on Friday; bg-2 produces the final ablation."


def _audit_shaped(decision: ControllerDecision) -> dict[str, Any]:
    """An ``audit`` message, the kind the ApplyQueue no longer carries (decisions go
    to the one writer on the audit queue): what a sender with ``sqs:SendMessage``
    might still try."""
    return {
        "kind": "audit",
        "decision": {
            "action": decision.action,
            "actor": decision.actor,
            "jobQueue": decision.job_queue,
            "resource": decision.resource,
            "decisionId": decision.decision_id,
            "details": dict(decision.details),
        },
    }


def test_the_two_kinds_round_trip_and_an_audit_record_is_not_one() -> None:
    assert parse_message(escalation_message("esc-1")).record_id == "esc-1"
    assert parse_message(disposition_message("sub-1")).kind == "disposition"
    decision = ControllerDecision(
        action="EscalationApproved",
        actor="U0CAROL",
        job_queue="ml-gov-queue",
        resource="esc-1",
        decision_id="esc-1:approved",
        details={"level": "high"},
    )
    with pytest.raises(HandoffMessageError, match="kind: must be one of escalation, disposition"):
        parse_message(json.loads(json.dumps(_audit_shaped(decision))))


def test_each_queue_carries_only_its_own_kinds() -> None:
    notice = submission_failed_message("sub-1")
    assert parse_message(notice, NOTICE_KINDS).record_id == "sub-1"
    with pytest.raises(HandoffMessageError, match="kind: must be one of escalation"):
        parse_message(notice)  # the ApplyQueue's kinds
    with pytest.raises(HandoffMessageError, match="kind: must be one of submission-failed"):
        parse_message(escalation_message("esc-1"), NOTICE_KINDS)
    with pytest.raises(HandoffMessageError) as caught:
        parse_message({"kind": "submission-failed", "submissionId": 7}, NOTICE_KINDS)
    assert str(caught.value) == "submissionId: must be a non-empty string"


@pytest.mark.parametrize(
    ("body", "fault"),
    [
        ([], "(body): must be a JSON object"),
        ({"kind": "approve"}, "kind: must be one of escalation, disposition, got 'approve'"),
        ({"kind": "escalation"}, "escalationId: must be a non-empty string"),
        ({"kind": "disposition", "jobId": ""}, "jobId: must be a non-empty string"),
        ({"kind": "audit"}, "kind: must be one of escalation, disposition, got 'audit'"),
    ],
)
def test_a_bad_message_names_the_field(body: Any, fault: str) -> None:
    with pytest.raises(HandoffMessageError) as caught:
        parse_message(body)
    assert str(caught.value) == fault


APPLY_QUEUE_ARN = "arn:aws:sqs:eu-west-1:111122223333:quotagov-ApplyQueue"
NOTICE_QUEUE_ARN = "arn:aws:sqs:eu-west-1:111122223333:quotagov-OwnerNoticeQueue"
NOTICE_QUEUE_URL = "https://sqs.eu-west-1.amazonaws.com/111122223333/quotagov-OwnerNoticeQueue"


def _deliver(bodies: list[dict[str, Any]], queue_arn: str = APPLY_QUEUE_ARN) -> dict[str, Any]:
    from quotagov.handlers import apply_decisions

    records = [
        {
            "messageId": f"m-{i}",
            "receiptHandle": f"r-{i}",
            "body": json.dumps(body),
            "attributes": {"ApproximateReceiveCount": "1"},
            "messageAttributes": {},
            "eventSource": "aws:sqs",
            "eventSourceARN": queue_arn,
        }
        for i, body in enumerate(bodies)
    ]
    result: dict[str, Any] = apply_decisions.handler({"Records": records}, LambdaContext())  # type: ignore[arg-type]
    return result


def _idempotency_table(world: World, endpoint: str) -> None:
    """A Powertools Idempotency table on the world's moto server for the apply function."""
    import uuid

    import boto3
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    from quotagov import composition

    client = boto3.client("dynamodb", region_name="eu-west-1", endpoint_url=endpoint)
    name = f"idempotency-{uuid.uuid4().hex[:8]}"
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    layer = DynamoDBPersistenceLayer(table_name=name, boto3_client=client)
    composition.provide(decision_idempotency=layer)


def test_a_hand_off_naming_a_pending_escalation_applies_nothing(
    world: World, dynamodb_endpoint: str
) -> None:
    """A message cannot approve: the apply function acts only on what the record says
    (PENDING stays PENDING, no UpdateServiceJob)."""
    _idempotency_table(world, dynamodb_endpoint)
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 201
    before = world.escalations.get(body["escalationId"])
    reply = _deliver([escalation_message(body["escalationId"]), {"kind": "nonsense"}])
    assert reply == {"batchItemFailures": []}  # the unusable one is dropped, not retried
    after = world.escalations.get(body["escalationId"])
    assert after == before and after is not None and after.status is EscalationStatus.PENDING
    assert world.update_calls == []


@pytest.mark.parametrize(
    "event",
    [
        {"source": "aws.events", "detail-type": None, "detail": {}},  # an edited schedule
        {"source": "aws.events", "detail-type": "Scheduled Events", "detail": {}},
        {"Records": "not a list"},
        {},
        [],
    ],
    ids=["detail-type-null", "detail-type-misspelt", "records-not-a-list", "empty", "a-list"],
)
def test_an_event_that_is_neither_a_batch_nor_the_schedule_changes_nothing(
    world: World, dynamodb_endpoint: str, event: Any
) -> None:
    """Found by the event property test: a schedule event with its ``detail-type``
    edited reached Powertools' batch processor, which raised
    ``UnexpectedBatchTypeError`` (a failed invocation). Any event that is neither an
    SQS batch nor the retry schedule is logged and answered with no failures; it
    retries nothing and applies nothing."""
    from quotagov.handlers import apply_decisions

    _idempotency_table(world, dynamodb_endpoint)
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 201
    before = world.escalations.get(body["escalationId"])
    reply = apply_decisions.handler(event, LambdaContext())  # type: ignore[arg-type]
    assert reply == {"batchItemFailures": []}
    assert world.escalations.get(body["escalationId"]) == before
    assert world.update_calls == []


# ---------------------------------------------------------------- owner notices
#
# The submit worker and the reconciler (no Slack secret) hand failed submissions to
# the apply function on the OwnerNoticeQueue; the apply function DMs the owner from the
# stored record, once, and takes nothing else from that queue.


@pytest.fixture
def dm_slack() -> Iterator[FakeSlack]:
    """A loopback fake Slack that takes direct messages (a user id as the channel)."""
    fake = FakeSlack(token=BOT_TOKEN).start()
    try:
        yield fake
    finally:
        fake.stop()


def _notices_configured(
    world: World, endpoint: str, slack: FakeSlack | None = None, url: str = NOTICE_QUEUE_URL
) -> None:
    """The apply function as deployed: it knows the notice queue, keeps the owner
    notification log on the world's jobs table (moto, loopback) and posts to ``slack``."""
    import dataclasses

    import boto3

    from quotagov import composition
    from quotagov.adapters.dynamodb_notifications import DynamoDBNotificationLog
    from quotagov.adapters.slack import SlackChatNotifier, build_web_client

    given = composition.injected_settings()
    assert given is not None
    values: dict[str, Any] = {}
    if slack is not None:
        values["chat"] = SlackChatNotifier(build_web_client(BOT_TOKEN, slack.base_url))
    table = boto3.resource("dynamodb", region_name="eu-west-1", endpoint_url=endpoint).Table(
        world.jobs._table  # the world's own table
    )
    values["notification_log"] = DynamoDBNotificationLog(table)
    composition.provide(settings=dataclasses.replace(given, owner_notice_queue_url=url), **values)


def _failed_record(world: World, pk: str = "sub-failed", **changes: Any) -> None:
    from quotagov.governance.model.job import JobRecord, SubmissionState
    from support.principals import ALICE

    fields: dict[str, Any] = {
        "pk": pk,
        "state": SubmissionState.FAILED,
        "team": "research",
        "workloadClass": "exploratory",
        "priorityLevel": "standard",
        "jobName": "ablation-7",
        "principal": ALICE,
        "quotaShareName": "background",
        "reasons": ["Batch refused SubmitServiceJob: ClientException: quota share is DISABLED"],
        "createdAt": int(world.clock.now()),
    }
    fields.update(changes)
    world.jobs.create_if_absent(JobRecord(**fields))


def test_a_failed_submission_is_told_to_its_owner_once(
    world: World, dynamodb_endpoint: str, dm_slack: FakeSlack
) -> None:
    _notices_configured(world, dynamodb_endpoint, dm_slack)
    _failed_record(world)
    notice = submission_failed_message("sub-failed")
    assert _deliver([notice, notice], NOTICE_QUEUE_ARN) == {"batchItemFailures": []}
    assert _deliver([notice], NOTICE_QUEUE_ARN) == {"batchItemFailures": []}
    [dm] = [m for m in dm_slack.messages if m.channel == "U0ALICE"]
    assert len(dm_slack.messages) == 1
    assert dm.text == (
        "Your submission ablation-7 was refused by Batch or the policy: Batch refused "
        "SubmitServiceJob: ClientException: quota share is DISABLED"
    )


def test_a_notice_about_a_record_that_did_not_fail_tells_nobody(
    world: World, dynamodb_endpoint: str, dm_slack: FakeSlack
) -> None:
    """A sender of notices cannot make the apply function say what the record does not:
    the record is read, and only a FAILED one (not merely enqueue-failed) is told."""
    from quotagov.governance.model.job import SubmissionState

    _notices_configured(world, dynamodb_endpoint, dm_slack)
    _failed_record(world, "sub-queued", state=SubmissionState.QUEUED, reasons=[])
    _failed_record(world, "sub-enqueue", enqueueFailed=True)
    bodies = [
        submission_failed_message(pk) for pk in ("sub-queued", "sub-enqueue", "sub-bg-2", "nope")
    ]
    assert _deliver(bodies, NOTICE_QUEUE_ARN) == {"batchItemFailures": []}
    assert dm_slack.messages == []


def test_the_notice_queue_cannot_carry_decisions_or_audit_records(
    world: World, dynamodb_endpoint: str
) -> None:
    """Attacker: a sender of the notice queue (the worker's role) forges an escalation
    hand-off and an audit record there, so that the apply function would act on them
    or relay the record under its own name. Both are dropped; nothing is recorded."""
    _notices_configured(world, dynamodb_endpoint)
    forged = ControllerDecision(
        action="EscalationApproved",
        actor="U0CAROL",
        job_queue="ml-gov-queue",
        resource="esc-forged",
        decision_id="esc-forged:approved",
        details={},
    )
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 201
    before = world.escalations.get(body["escalationId"])
    reply = _deliver(
        [_audit_shaped(forged), escalation_message(body["escalationId"])], NOTICE_QUEUE_ARN
    )
    assert reply == {"batchItemFailures": []}
    assert "esc-forged:approved" not in [d.decision_id for d in world.audit.decisions]
    assert world.escalations.get(body["escalationId"]) == before
    assert world.update_calls == []


def test_a_notice_on_the_apply_queue_is_dropped(
    world: World, dynamodb_endpoint: str, dm_slack: FakeSlack
) -> None:
    """The ApplyQueue's senders (Slack, escalation API) cannot send notices either."""
    _notices_configured(world, dynamodb_endpoint, dm_slack)
    _failed_record(world)
    reply = _deliver([submission_failed_message("sub-failed")], APPLY_QUEUE_ARN)
    assert reply == {"batchItemFailures": []}
    assert dm_slack.messages == []


def test_without_a_configured_notice_queue_the_apply_function_does_not_start(
    world: World, dynamodb_endpoint: str, dm_slack: FakeSlack
) -> None:
    """No queue would tell notices from decisions: the function refuses to start,
    naming the variable, before it reads any message."""
    from quotagov.composition import MissingSettingsError

    _notices_configured(world, dynamodb_endpoint, dm_slack, url="")
    _failed_record(world)
    with pytest.raises(MissingSettingsError, match=r"ApplyDecisionsFunction: .*OWNER_NOTICE"):
        _deliver([submission_failed_message("sub-failed")], NOTICE_QUEUE_ARN)
    assert dm_slack.messages == []
