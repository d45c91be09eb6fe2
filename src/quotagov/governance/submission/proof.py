"""Proof that a ``QUEUED`` submission was accepted by quotagov, not written into the
jobs table by hand.

The submit worker sends to Batch whatever ``QUEUED`` record a message names, and the
reconciler re-queues every ``QUEUED`` record it finds; both would act on an item
anyone with ``dynamodb:PutItem`` wrote (a job in any member's name). So the function
that accepts a submission (``POST /jobs``, or the disposition step creating a
successor) stores with it a KMS MAC under the message key over what Batch will be
asked to run and for whom (:func:`submission_fields`); the worker and the reconciler
check it first (:func:`unproven`). A record without a valid proof is left as it is,
audited once per content (``UnauthenticatedInputRefused``, finding
``UNAUTHENTICATED_INPUT``), never submitted nor re-queued.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from quotagov.governance.model.job import JobRecord
from quotagov.governance.ports.audit import AuditSink
from quotagov.governance.ports.messages import MessageMac
from quotagov.governance.provenance import (
    QUEUED_SUBMISSION,
    UnauthenticatedError,
    check_record,
    record_proof,
    refusal,
)

#: Where a refused record came from, in its audit record.
JOBS_TABLE = "JobsTable"

#: The record attributes a submission proof covers.
COVERED = (
    "team",
    "workloadClass",
    "priorityLevel",
    "principal",
    "jobName",
    "serviceRequestPayload",
    "requestedQuotaShareName",
    "quotaShareName",
    "schedulingPriority",
    "preemptionRetriesBeforeTermination",
    "clientToken",
    "createdAt",
    "predecessorId",
    "originalId",
    "resubmitCount",
)


#: What a proof covers besides :data:`COVERED` on a record with ``routedUnder``: the
#: fingerprint itself and every other attribute ``SubmitServiceJob`` is built from or the
#: owner is told through. The worker does not route such a record again (the policy is
#: unchanged), so routing's checks of them (class limits on retries and attempt
#: duration, reserved tag keys) hold only if nobody can change them after
#: ``POST /jobs``. Records stored before ``routedUnder`` existed keep verifying on
#: :data:`COVERED` alone and are always routed again.
ROUTED_COVERED = (
    "routedUnder",
    "retryStrategy",
    "timeoutConfig",
    "tags",
    "checkpointIntervalSeconds",
    "ownerSlackUserId",
    "instanceType",
    "instanceCount",
)


def submission_fields(record: JobRecord) -> dict[str, Any]:
    """The values of ``record`` a proof covers: :data:`COVERED`, and
    :data:`ROUTED_COVERED` when the record has ``routedUnder``."""
    names = COVERED + ROUTED_COVERED if record.routedUnder is not None else COVERED
    return {name: getattr(record, name) for name in names}


def with_proof(record: JobRecord, mac: MessageMac | None, sender: str) -> JobRecord:
    """``record`` with its ``submissionProof`` (one KMS ``GenerateMac``); unchanged
    without a message key.

    Raises:
        botocore.exceptions.ClientError: KMS refused: the record is not stored.
    """
    if mac is None:
        return record
    proof = record_proof(mac, QUEUED_SUBMISSION, record.pk, submission_fields(record), sender)
    return record.model_copy(update={"submissionProof": proof})


def unproven(record: JobRecord, mac: MessageMac | None, audit: AuditSink, job_queue: str) -> bool:
    """True when ``record`` must not be acted on: no valid ``submissionProof`` (one
    KMS ``VerifyMac``); the refusal is then audited. False without a message key.

    Raises:
        AuditQueueError: the refusal could not be queued (the caller is retried).
        botocore.exceptions.ClientError: KMS could not be asked (retried).
    """
    if mac is None:
        return False
    fields = submission_fields(record)
    try:
        check_record(mac, QUEUED_SUBMISSION, record.pk, fields, record.submissionProof)
    except UnauthenticatedError as exc:
        text = json.dumps({**fields, "proof": record.submissionProof}, sort_keys=True, default=str)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        audit.record_decision(
            refusal(
                job_queue=job_queue,
                where=JOBS_TABLE,
                item_id=f"{record.pk}#{digest}",
                reason=str(exc),
                text=text,
                claimed=str((record.submissionProof or {}).get("sender") or ""),
            )
        )
        return True
    return False


#: Reads the running function's name (the sender a proof names).
Sender = Callable[[], str]
