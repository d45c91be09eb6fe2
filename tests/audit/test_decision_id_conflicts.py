"""A decision id already stored with other content is a tamper finding, never a repeat.

Decision ids are built from known values (``<escalation>:approved``), so an attacker who
gets one record into the chain first (a message past the queue's proof, or an item
written past the table policy, as an admin could) can claim the id of a decision that
has not been taken yet. The real decision must not be dropped as a duplicate: it is
kept in a ``DecisionIdConflict`` record with the finding ``DECISION_ID_CONFLICT`` and
both content digests, once, and counted for the ``DecisionIdConflictsAlarm``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from audit.support import TABLE
from audit.test_audit_handover import _batch_event
from quotagov import composition
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import ChainWriter, verify_chain
from quotagov.governance.audit.decisions import DecisionLog, content_digest
from quotagov.governance.audit.known import CONFIG
from quotagov.governance.audit.queued_decisions import message_body
from quotagov.governance.ports import ControllerDecision
from quotagov.governance.provenance import AUDIT_QUEUE
from quotagov.handlers import audit_trail
from support.aws import QUEUE_ARN
from support.compose import seal, wire
from support.lambda_context import LambdaContext

REAL = ControllerDecision(
    action="EscalationDenied",
    actor="U0ERIN",
    job_queue=QUEUE_ARN,
    resource="esc-0009",
    decision_id="esc-0009:denied",
    details={"jobId": "job-9", "requester": "alice"},
)
#: Planted first under the id the real decision will use: an approval at priority 90.
PLANTED = ControllerDecision(
    action="EscalationApproved",
    actor="U0ERIN",
    job_queue=QUEUE_ARN,
    resource="esc-0009",
    decision_id="esc-0009:denied",
    details={"jobId": "job-9", "schedulingPriority": 90},
)


def _emf(out: str, name: str) -> list[dict[str, Any]]:
    docs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [doc for doc in docs if name in doc]


def test_the_real_decision_under_a_planted_id_is_kept_as_a_finding_and_alarmed(
    dynamodb: Any, clock: ManualClock, capsys: pytest.CaptureFixture[str]
) -> None:
    chains = DynamoDBChainStore(TABLE, dynamodb)
    versions = DynamoDBVersionStore(TABLE, dynamodb)
    log = DecisionLog(ChainWriter(chains), versions, clock)
    log.record_decision(PLANTED)
    planted_index = versions.latest(CONFIG, "service-job/job-9")
    assert planted_index is not None and planted_index.value == {"schedulingPriority": 90}
    clock.advance(60)
    body = seal(message_body(REAL, clock.now()), AUDIT_QUEUE, sent_at=clock.now())
    wire(audit_log=log)  # the message key, as deployed (LocalMac)
    try:
        first = audit_trail.handler(_batch_event([body]), LambdaContext())
        again = audit_trail.handler(_batch_event([body, body]), LambdaContext())  # redelivered
    finally:
        composition.reset()

    assert first == again == {"batchItemFailures": []}
    planted, conflict = list(chains.records("ml-gov-queue"))
    assert (planted["decisionId"], planted["action"]) == ("esc-0009:denied", "EscalationApproved")
    assert conflict["action"] == "DecisionIdConflict"
    assert conflict["decisionId"] == "esc-0009:denied"
    stored_digest, received_digest = (
        content_digest(planted),
        content_digest(
            {
                "action": "EscalationDenied",
                "actor": conflict["details"]["received"]["actor"],
                "resource": {"type": "decision-subject", "name": "esc-0009"},
                "details": {"jobId": "job-9", "requester": "alice"},
                "findings": [],
            }
        ),
    )
    assert conflict["details"] == {
        "decisionId": "esc-0009:denied",
        "storedSeq": 1,
        "storedDigest": stored_digest,
        "receivedDigest": received_digest,
        "received": {
            "action": "EscalationDenied",
            "actor": {
                "principalArn": "U0ERIN",
                "type": "quotagov",
                "sessionIssuerArn": None,
                "quotagov": True,
                "decisionId": "esc-0009:denied",
                "decisionAction": "EscalationDenied",
            },
            "resource": {"type": "decision-subject", "name": "esc-0009"},
            "details": {"jobId": "job-9", "requester": "alice"},
            "findings": [],
        },
    }
    assert conflict["findings"] == [
        {
            "code": "DECISION_ID_CONFLICT",
            "severity": "high",
            "message": f"decision esc-0009:denied: received with content sha256 "
            f"{received_digest}, but record 1 holds that id with content sha256 "
            f"{stored_digest}; one of them was not written by the deciding function",
        }
    ]
    assert log.conflicts == 1  # the redelivery found its conflict record: no second one
    assert [
        doc["DecisionIdConflicts"] for doc in _emf(capsys.readouterr().out, "DecisionIdConflicts")
    ] == [[1.0]]  # one EMF document, value 1 (the redelivery added none)
    assert verify_chain("ml-gov-queue", list(chains.records("ml-gov-queue"))) == (2, None)


def test_a_redelivered_decision_with_the_same_content_is_no_conflict(
    dynamodb: Any, clock: ManualClock
) -> None:
    chains = DynamoDBChainStore(TABLE, dynamodb)
    log = DecisionLog(ChainWriter(chains), DynamoDBVersionStore(TABLE, dynamodb), clock)
    log.record_decision(REAL, decided_at=clock.now())
    clock.advance(300)  # sent again later: another time, the same content
    log.record_decision(REAL, decided_at=clock.now(), queued_by="SlackInteractionsFunction")

    assert log.conflicts == 0
    assert [r["action"] for r in chains.records("ml-gov-queue")] == ["EscalationDenied"]
