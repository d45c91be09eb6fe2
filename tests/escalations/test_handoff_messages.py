"""The hand-off messages to ApplyDecisionsFunction: their shapes, faults and the
apply function's answer to a forged or stale one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotagov.governance.escalation_records import EscalationStatus
from quotagov.governance.handoff import (
    HandoffMessageError,
    audit_message,
    disposition_message,
    escalation_message,
    parse_message,
)
from quotagov.governance.ports.audit import ControllerDecision
from support.lambda_context import LambdaContext

from .world import World

REASON = "Camera-ready deadline on Friday; bg-2 produces the final ablation."


def test_the_three_kinds_round_trip() -> None:
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
    parsed = parse_message(json.loads(json.dumps(audit_message(decision))))
    assert parsed.decision == decision


@pytest.mark.parametrize(
    ("body", "fault"),
    [
        ([], "(body): must be a JSON object"),
        ({"kind": "approve"}, "kind: must be one of escalation, disposition, audit, got 'approve'"),
        ({"kind": "escalation"}, "escalationId: must be a non-empty string"),
        ({"kind": "disposition", "jobId": ""}, "jobId: must be a non-empty string"),
        ({"kind": "audit"}, "decision: must be an object"),
        (
            {"kind": "audit", "decision": {"action": "X"}},
            "decision.actor: must be a non-empty string",
        ),
    ],
)
def test_a_bad_message_names_the_field(body: Any, fault: str) -> None:
    with pytest.raises(HandoffMessageError) as caught:
        parse_message(body)
    assert str(caught.value) == fault


def _deliver(bodies: list[dict[str, Any]]) -> dict[str, Any]:
    from quotagov.handlers import apply_decisions

    records = [
        {
            "messageId": f"m-{i}",
            "receiptHandle": f"r-{i}",
            "body": json.dumps(body),
            "attributes": {"ApproximateReceiveCount": "1"},
            "messageAttributes": {},
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:eu-west-1:111122223333:quotagov-ApplyQueue",
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

    from quotagov import wiring

    client = boto3.client("dynamodb", region_name="eu-west-1", endpoint_url=endpoint)
    name = f"idempotency-{uuid.uuid4().hex[:8]}"
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    layer = DynamoDBPersistenceLayer(table_name=name, boto3_client=client)
    wiring.services().set("decision_idempotency", layer)


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
