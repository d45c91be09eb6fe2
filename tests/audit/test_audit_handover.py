"""One writer: decisions reach the audit writer over the audit queue.

The sending side (:class:`QueuedAuditSink` over SQS) and the writer's side (the audit
function's SQS trigger), with moto SQS and DynamoDB: a decision is stored once however
often its message is delivered, carries its sender, and a decision whose message
cannot be queued raises, so the use case does not apply it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from audit.support import TABLE
from audit.tamper_world import CountingSealer
from quotagov import composition
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.adapters.kms_audit import KmsRecordSealer
from quotagov.adapters.sqs_audit import SqsAuditQueue
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import ChainWriter
from quotagov.governance.audit.decisions import DecisionLog
from quotagov.governance.audit.queued_decisions import QueuedAuditSink, message_body, parse_message
from quotagov.governance.audit.seals import first_unsealed
from quotagov.governance.ports import AuditQueueError, ControllerDecision
from quotagov.governance.provenance import AUDIT_QUEUE
from quotagov.handlers import audit_trail
from quotagov.settings import Settings
from support.aws import QUEUE_ARN, REGION
from support.compose import seal, wire
from support.lambda_context import LambdaContext

EVENTS = Path(__file__).resolve().parents[2] / "events"
DECISION = ControllerDecision(
    action="SubmissionRefused",
    actor="arn:aws:sts::111122223333:assumed-role/researcher/dave",
    job_queue=QUEUE_ARN,
    resource="sub-7",
    decision_id="refused:sub-7",
    details={"reasons": ["quotaShareName: class 'scheduled' may not use share 'background'"]},
)


def _sqs_event(body: str, message_id: str = "m-1") -> dict[str, Any]:
    event = json.loads((EVENTS / "audit_trail-decisions.json").read_text())
    event["Records"][0].update(messageId=message_id, body=body)
    return event


def test_a_queued_decision_is_written_once_with_its_sender(
    dynamodb: Any, clock: ManualClock
) -> None:
    from quotagov.adapters.kms_audit import KmsRecordSealer
    from quotagov.governance.provenance import MessageSealer, open_message

    kms = boto3.client("kms", region_name=REGION)
    key = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]
    mac = KmsRecordSealer(key["KeyId"], kms)
    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.create_queue(QueueName="audit")["QueueUrl"]
    seal = MessageSealer(mac, AUDIT_QUEUE, lambda: "JobsApiFunction", clock)
    sink = QueuedAuditSink(SqsAuditQueue(url, sqs, seal=seal), clock)
    sink.record_decision(DECISION)
    sink.record_decision(DECISION)  # sent twice (a retried use case)
    bodies = [
        m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    ]
    opened = open_message(mac, AUDIT_QUEUE, bodies[0])
    assert len(bodies) == 2 and parse_message(opened.body).controller_decision() == DECISION
    chains = DynamoDBChainStore(TABLE, dynamodb)
    log = DecisionLog(ChainWriter(chains), DynamoDBVersionStore(TABLE, dynamodb), clock)
    wire(audit_log=log, message_mac=mac)
    try:
        clock.advance(30)  # the writer runs later than the decision was taken
        answers = [
            audit_trail.handler(_sqs_event(body, f"m-{n}"), LambdaContext())
            for n, body in enumerate([*bodies, bodies[0]])  # and one redelivery
        ]
    finally:
        composition.reset()

    assert answers == [{"batchItemFailures": []}] * 3
    [record] = list(chains.records("ml-gov-queue"))
    assert record["decisionId"] == "refused:sub-7" and record["action"] == "SubmissionRefused"
    # the proof's time and sender, not when it was written nor the SQS SenderId
    assert record["time"] == "2026-05-04T10:00:00Z"
    assert record["recordedAt"] == "2026-05-04T10:00:30Z"
    assert record["queuedBy"] == "JobsApiFunction"
    assert record["details"] == dict(DECISION.details)


def test_a_malformed_message_fails_alone_and_nothing_is_written(
    dynamodb: Any, clock: ManualClock
) -> None:
    chains = DynamoDBChainStore(TABLE, dynamodb)
    log = DecisionLog(ChainWriter(chains), DynamoDBVersionStore(TABLE, dynamodb), clock)
    wire(audit_log=log)  # the message key, as deployed (LocalMac)
    malformed = json.dumps({"version": 1, "decision": {"action": ""}})
    try:
        answer = audit_trail.handler(
            _sqs_event(seal(malformed, AUDIT_QUEUE, sent_at=clock.now()), "bad"),
            LambdaContext(),
        )
    finally:
        composition.reset()

    assert answer == {"batchItemFailures": [{"itemIdentifier": "bad"}]}
    assert list(chains.records("ml-gov-queue")) == []
    assert dynamodb.scan(TableName=TABLE)["Items"] == []


def test_an_unsealed_decision_is_refused_audited_and_not_stored(
    dynamodb: Any, clock: ManualClock
) -> None:
    """Attacker with ``sqs:SendMessage`` on the audit queue hands over an approval it
    made up: without the message key's MAC it is not appended; the refusal is, as an
    ``UnauthenticatedInputRefused`` record with the finding ``UNAUTHENTICATED_INPUT``,
    once however often the message comes back; the message fails (to the DLQ)."""
    import hashlib

    forged = message_body(
        ControllerDecision(
            action="EscalationApproved",
            actor="U0ERIN",
            job_queue=QUEUE_ARN,
            resource="esc-0042",
            decision_id="esc-0042:approved",
            details={"jobId": "job-42", "schedulingPriority": 99},
        ),
        clock.now(),
    )
    chains = DynamoDBChainStore(TABLE, dynamodb)
    log = DecisionLog(ChainWriter(chains), DynamoDBVersionStore(TABLE, dynamodb), clock)
    wire(Settings(job_queue=QUEUE_ARN), audit_log=log)  # the message key, as deployed
    try:
        answers = [
            audit_trail.handler(_sqs_event(forged, "forged"), LambdaContext()) for _ in range(2)
        ]
    finally:
        composition.reset()

    assert answers == [{"batchItemFailures": [{"itemIdentifier": "forged"}]}] * 2
    [record] = list(chains.records("ml-gov-queue"))
    where = json.loads((EVENTS / "audit_trail-decisions.json").read_text())["Records"][0][
        "eventSourceARN"
    ]
    assert (record["action"], record["decisionId"]) == (
        "UnauthenticatedInputRefused",
        f"unauthenticated:{where}:forged",
    )
    assert record["details"] == {
        "id": "forged",
        "reason": "sealed: must be 1 (no proof of sender)",
        "claimedSender": "",
        "bodySha256": hashlib.sha256(forged.encode()).hexdigest(),
        "bodyChars": len(forged),
    }
    assert [f["code"] for f in record["findings"]] == ["UNAUTHENTICATED_INPUT"]


def test_a_decision_that_cannot_be_queued_raises(dynamodb: Any, clock: ManualClock) -> None:
    sqs = boto3.client("sqs", region_name=REGION)
    missing = f"https://sqs.{REGION}.amazonaws.com/111122223333/no-such-queue"
    sink = QueuedAuditSink(SqsAuditQueue(missing, sqs), clock)

    with pytest.raises(AuditQueueError, match="audit queue SendMessage failed"):
        sink.record_decision(DECISION)
    assert dynamodb.scan(TableName=TABLE)["Items"] == []


def test_the_sink_refuses_a_decision_without_its_keys(clock: ManualClock) -> None:
    class Never:
        def send(self, body: str) -> None:
            raise AssertionError("nothing may be queued")

    sink = QueuedAuditSink(Never(), clock)
    with pytest.raises(ValueError, match=r"decision\.decision_id: empty"):
        sink.record_decision(ControllerDecision("A", "x", QUEUE_ARN, "r", ""))
    with pytest.raises(ValueError, match=r"decision\.job_queue: empty"):
        sink.record_decision(ControllerDecision("A", "x", "", "r", "id"))


def _batch_event(bodies: list[str]) -> dict[str, Any]:
    event = json.loads((EVENTS / "audit_trail-decisions.json").read_text())
    [template] = event["Records"]
    event["Records"] = [
        {**template, "messageId": f"m-{n}", "body": body} for n, body in enumerate(bodies)
    ]
    return event


def _decision(n: int) -> ControllerDecision:
    return ControllerDecision(
        action="SubmissionRefused",
        actor="arn:aws:sts::111122223333:assumed-role/researcher/dave",
        job_queue=QUEUE_ARN,
        resource=f"sub-{n}",
        decision_id=f"refused:sub-{n}",
        details={"reasons": [f"reason {n}"]},
    )


def _sealed(body: str, clock: ManualClock) -> str:
    """``body`` as the jobs API function puts it on the audit queue (sealed now)."""
    return seal(body, AUDIT_QUEUE, sent_at=clock.now())


def _sealed_log(dynamodb: Any, clock: ManualClock) -> tuple[DecisionLog, CountingSealer]:
    kms = boto3.client("kms", region_name=REGION)
    key = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]
    sealer = CountingSealer(KmsRecordSealer(key["KeyId"], kms))
    chains = DynamoDBChainStore(TABLE, dynamodb)
    writer = ChainWriter(chains, sealer=sealer)
    return DecisionLog(writer, DynamoDBVersionStore(TABLE, dynamodb), clock), sealer


def test_a_batch_of_ten_decisions_is_one_run_sealed_with_one_generate_mac(
    dynamodb: Any, clock: ManualClock
) -> None:
    log, sealer = _sealed_log(dynamodb, clock)
    bodies = [_sealed(message_body(_decision(n), clock.now()), clock) for n in range(1, 11)]
    wire(audit_log=log)
    try:
        first = audit_trail.handler(_batch_event(bodies), LambdaContext())
        again = audit_trail.handler(_batch_event(bodies[3:5]), LambdaContext())  # redelivered
    finally:
        composition.reset()

    assert first == again == {"batchItemFailures": []}
    records = list(DynamoDBChainStore(TABLE, dynamodb).records("ml-gov-queue"))
    assert [r["decisionId"] for r in records] == [f"refused:sub-{n}" for n in range(1, 11)]
    assert [int(r["seq"]) for r in records if "seal" in r] == [10]
    # One MAC for the batch; the redelivered pair was sealed as a run before the store
    # said both were stored (one MAC spent, nothing written).
    assert (sealer.generated, sealer.verified) == (2, 0)
    assert first_unsealed(records, sealer).bad_seq is None


def test_a_malformed_message_fails_alone_and_the_rest_of_the_batch_is_one_run(
    dynamodb: Any, clock: ManualClock
) -> None:
    log, sealer = _sealed_log(dynamodb, clock)
    bodies = [_sealed(message_body(_decision(n), clock.now()), clock) for n in range(1, 4)]
    bodies.insert(1, _sealed(json.dumps({"version": 1, "decision": {"action": ""}}), clock))
    wire(audit_log=log)
    try:
        answer = audit_trail.handler(_batch_event(bodies), LambdaContext())
    finally:
        composition.reset()

    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-1"}]}
    records = list(DynamoDBChainStore(TABLE, dynamodb).records("ml-gov-queue"))
    assert [(int(r["seq"]), r["decisionId"], "seal" in r) for r in records] == [
        (1, "refused:sub-1", False),
        (2, "refused:sub-2", False),
        (3, "refused:sub-3", True),
    ]
    assert sealer.generated == 1


def test_a_batch_on_a_head_the_writer_cannot_vouch_for_fails_whole_and_writes_nothing(
    dynamodb: Any, clock: ManualClock
) -> None:
    """Someone put a record 1 without the key; every message of the batch comes back
    (and reaches the DLQ, with its alarm), and nothing is sealed on top of it."""
    log, sealer = _sealed_log(dynamodb, clock)
    ChainWriter(DynamoDBChainStore(TABLE, dynamodb)).append(
        "ml-gov-queue", "decision:forged", {"action": "Forged"}
    )
    bodies = [_sealed(message_body(_decision(n), clock.now()), clock) for n in range(1, 3)]
    wire(audit_log=log)
    try:
        answer = audit_trail.handler(_batch_event(bodies), LambdaContext())
    finally:
        composition.reset()

    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-0"}, {"itemIdentifier": "m-1"}]}
    records = list(DynamoDBChainStore(TABLE, dynamodb).records("ml-gov-queue"))
    assert [r["decisionId"] if "decisionId" in r else r["action"] for r in records] == ["Forged"]
    assert (sealer.generated, sealer.verified) == (0, 0)  # no seal on it: no KMS call needed
