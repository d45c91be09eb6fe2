"""Proof of an escalation's decision: an approval is applied only with it.

An ``APPROVED`` (or ``APPLY_FAILED``) item in the escalations table is a claim: anyone
with ``dynamodb:PutItem`` on the table can write one naming a real approver. So the
function that records a decision (the Slack function for an Approve click, the
escalation API function for a direct level) stores with it a KMS MAC under the
message key (:func:`quotagov.governance.provenance.record_proof`) over the decision:
which escalation, which job (quotagov's and Batch's id), the team, the requester, the
level and its ``schedulingPriority``, who decided and when. The apply function checks
it before every apply, the first one and the 5-minute retry alike; an item whose
proof is missing or does not match is left as it is, audited once
(``UnauthenticatedInputRefused``, finding ``UNAUTHENTICATED_INPUT``) and never sent to
Batch.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from quotagov.governance.escalations.context import EscalationDeps
from quotagov.governance.model.escalation import Escalation
from quotagov.governance.provenance import (
    ESCALATION_DECISION,
    UnauthenticatedError,
    check_record,
    record_proof,
    refusal,
)

#: Where a refused escalation came from, in its audit record.
ESCALATIONS_TABLE = "EscalationsTable"


def decision_fields(escalation: Escalation) -> dict[str, Any]:
    """The values a decision proof covers (what applying depends on)."""
    return {
        "jobId": escalation.job_id,
        "batchJobId": escalation.batch_job_id,
        "jobQueue": escalation.job_queue,
        "team": escalation.team,
        "requester": escalation.requester,
        "requestedLevel": escalation.requested_level,
        "requestedPriority": escalation.requested_priority,
        "direct": escalation.direct,
        "decidedBy": escalation.decided_by,
        "decidedAt": escalation.decided_at,
    }


def prove(deps: EscalationDeps, decided: Escalation) -> dict[str, Any] | None:
    """The proof to store with ``decided`` (its ``decided_by``/``decided_at`` set);
    None without a message key (one KMS ``GenerateMac``).

    Raises:
        botocore.exceptions.ClientError: KMS refused: the decision is not stored.
    """
    if deps.proofs is None:
        return None
    return record_proof(
        deps.proofs,
        ESCALATION_DECISION,
        decided.escalation_id,
        decision_fields(decided),
        deps.sender(),
    )


def unproven(deps: EscalationDeps, approved: Escalation) -> bool:
    """True when ``approved`` must not be applied: its decision proof is missing or
    does not match (one KMS ``VerifyMac``); the refusal is then audited (once per
    item content). False without a message key.

    Raises:
        AuditQueueError: the refusal could not be queued (the run is retried).
        botocore.exceptions.ClientError: KMS could not be asked (retried next run).
    """
    if deps.proofs is None:
        return False
    fields = decision_fields(approved)
    try:
        check_record(
            deps.proofs,
            ESCALATION_DECISION,
            approved.escalation_id,
            fields,
            approved.decision_proof,
        )
    except UnauthenticatedError as exc:
        text = json.dumps(
            {**fields, "status": approved.status.value, "proof": approved.decision_proof},
            sort_keys=True,
            default=str,
        )
        decision = refusal(
            job_queue=deps.policy.jobQueue,
            where=ESCALATIONS_TABLE,
            # one record per escalation and content: a new forgery is a new record
            item_id=f"{approved.escalation_id}#{hashlib.sha256(text.encode()).hexdigest()[:16]}",
            reason=str(exc),
            text=text,
            claimed=str((approved.decision_proof or {}).get("sender") or ""),
        )
        deps.audit.record_decision(decision)
        return True
    return False
