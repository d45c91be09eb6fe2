"""Audit mapping: one controller decision per disposition step.

``docs/design.md``, "Audit of policy changes": the controller's own decisions go to the
same log as the policy changes.

Each status a disposition reaches is written to the audit log once, with decision id
``disposition:<submission id>:<status>`` (the audit sink ignores a decision id it
already holds, so re-asserting a step is harmless).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quotagov.governance.dispositions.record import (
    DispositionRecord,
    DispositionStatus,
)
from quotagov.governance.model.job import JobRecord
from quotagov.governance.ports import ControllerDecision
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR

#: The audit ``action`` of each status.
ACTIONS: Mapping[DispositionStatus, str] = {
    DispositionStatus.PENDING_OWNER: "DispositionPending",
    DispositionStatus.AWAITING_TERMINATION: "DispositionTerminating",
    DispositionStatus.APPLYING: "DispositionDecided",
    DispositionStatus.APPLIED: "DispositionApplied",
    DispositionStatus.ABANDONED: "DispositionAbandoned",
    DispositionStatus.NOT_NEEDED: "DispositionNotNeeded",
}

#: Keys of the stored disposition copied into the decision's details (when set).
DETAIL_KEYS = (
    "trigger",
    "policyAction",
    "choice",
    "choices",
    "targetShare",
    "successorId",
    "reason",
    "owner",
    "decisionSource",
)


def decision_for(
    job: JobRecord, disposition: DispositionRecord, *, job_queue: str
) -> ControllerDecision:
    """The controller decision recording that ``job``'s disposition reached its status.

    Details: the :data:`DETAIL_KEYS` that are set, ``status``, the job's
    ``workloadClass``, ``quotaShareName``, ``batchJobId`` and, for the steps that call
    Batch, ``jobId``: the service job that call acts on (the job terminated for
    ``awaiting-termination``, the successor submitted for ``applied``), so the audit
    log can match the call when CloudTrail reports it. The actor is the decider
    (``quotagov`` while the owner has not decided).
    """
    status = disposition.status
    stored = disposition.to_item()
    details: dict[str, Any] = {k: stored[k] for k in DETAIL_KEYS if k in stored}
    details.update(
        status=status.value,
        workloadClass=job.workloadClass,
        quotaShareName=job.quotaShareName,
        batchJobId=job.batchJobId,
    )
    if status is DispositionStatus.AWAITING_TERMINATION and job.batchJobId:
        details["jobId"] = job.batchJobId
    if status is DispositionStatus.ABANDONED and disposition.last_error:
        details["refusal"] = disposition.last_error
    if status is DispositionStatus.APPLIED and disposition.successor_batch_job_id:
        details["jobId"] = disposition.successor_batch_job_id
    actor = QUOTAGOV_ACTOR
    if status is not DispositionStatus.PENDING_OWNER:
        actor = disposition.decided_by or QUOTAGOV_ACTOR
    return ControllerDecision(
        action=ACTIONS[status],
        actor=actor,
        job_queue=job_queue,
        resource=job.pk,
        decision_id=f"disposition:{job.pk}:{status.value}",
        details=details,
    )
