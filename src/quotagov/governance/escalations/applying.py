"""Applying an escalation in Batch: ``UpdateServiceJob``, or SUPERSEDED, or APPLY_FAILED.

- A direct level (one of the team's ``directLevels``) needs no approval and uses no
  budget: at request time it is stored APPROVED, decided by quotagov, and handed to the
  apply function (:func:`hand_off_direct`, ``deps.handoff`` required), the only caller
  of ``UpdateServiceJob``, which applies it like an approval.
- An APPROVED escalation (:func:`apply_approved`) is described first: applying never
  lowers a priority, so when Batch already runs the job at or above the requested
  priority ``UpdateServiceJob`` is not called and the escalation becomes SUPERSEDED.
  A Batch error in either call is APPLY_FAILED (one apply attempt), retried by the
  scheduled run up to :data:`~.context.MAX_APPLY_ATTEMPTS` attempts in all.
- Before any Batch write the stored approval is checked against the policy, the job's
  record and Batch's own view of the job (:mod:`.authority`): other roles write the
  escalations table, so an item that lacks the policy's authority (a self-approval,
  an edited priority or job, ...) is refused, DENIED by quotagov (:func:`refuse_apply`).

Every outcome is audited (``EscalationApplied``, ``EscalationSuperseded``,
``EscalationApplyFailed``, ``EscalationApplyRefused``); APPLIED, SUPERSEDED and a
refusal free the job's lock.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from quotagov.governance.apply_messages import escalation_message
from quotagov.governance.escalations.authority import approval_refusal, batch_job_refusal
from quotagov.governance.escalations.context import EscalationDeps, handoff_of
from quotagov.governance.escalations.job_lock import free_job
from quotagov.governance.escalations.proof import prove, unproven
from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.notifications import priority_changed
from quotagov.governance.ports import BatchError
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.ports.handoff import HandoffError

logger = logging.getLogger(__name__)

#: How the ``error`` of an approval refused before applying starts (:func:`refuse_apply`).
APPLY_REFUSED_PREFIX = "refused before applying: "


def hand_off_direct(deps: EscalationDeps, escalation: Escalation) -> Escalation:
    """Store a direct level APPROVED (decided by quotagov, claimed now, ``expires_at``
    now), audit it ``EscalationApproved`` and send it to the apply function, which
    applies it (:func:`apply_approved`) and audits ``EscalationApplied``.

    A failed send leaves it APPROVED; the apply function's scheduled run takes it
    over once its claim lease lapses (``STALE_APPROVAL_SECONDS``), so it is still
    applied, later.

    Returns:
        The stored escalation (APPROVED).

    Raises:
        MissingHandoffError: ``deps`` has no hand-off (nothing is stored).
    """
    handoff = handoff_of(deps)
    now = deps.clock.now()
    approved = escalation.with_changes(
        status=EscalationStatus.APPROVED,
        decided_by=QUOTAGOV_ACTOR,
        decided_at=now,
        claimed_at=now,
        expires_at=now,
    )
    approved = approved.with_changes(decision_proof=prove(deps, approved))
    deps.repository.put_new(approved)
    _record_direct(deps, escalation, "EscalationApproved", "approved")
    try:
        handoff.send(escalation_message(approved.escalation_id))
    except HandoffError as error:
        logger.warning(
            "direct escalation %s stored, hand-off failed: %s", approved.escalation_id, error
        )
    return approved


def apply_approved(deps: EscalationDeps, approved: Escalation) -> Escalation:
    """Apply an APPROVED escalation: APPLIED, SUPERSEDED, APPLY_FAILED, or DENIED by
    quotagov when the stored approval lacks the policy's authority (:mod:`.authority`;
    nothing is sent to Batch then).

    ``DescribeServiceJob`` first: when Batch already runs the job at or above the
    requested priority (another escalation, a direct level or a change outside
    quotagov raised it since the request), ``UpdateServiceJob`` is not called, since
    it would lower or keep the priority, and the escalation is SUPERSEDED; except when
    an earlier attempt of this request may have reached Batch and the job runs at
    exactly the requested priority: that is this request, APPLIED. Otherwise
    ``UpdateServiceJob``. A Batch error in either call is APPLY_FAILED (one apply
    attempt) for the retry run.

    First of all the decision's proof (:mod:`.proof`): an item whose proof does not
    verify is returned unchanged (audited), nothing is sent to Batch.

    Returns:
        The escalation after the move (``approved`` itself when another run moved it
        first and the conditional write found it no longer APPROVED, or when it has
        no valid decision proof).
    """
    if unproven(deps, approved):  # no proof of the decision: audited, left as is
        return approved
    attempts = approved.apply_attempts + 1
    # A failed or interrupted earlier attempt may have reached Batch (a lost reply, a
    # dead invocation): finding exactly the requested priority then is its doing.
    tried_before = approved.apply_attempts > 0 or approved.error is not None
    why = approval_refusal(deps.policy, deps.jobs.find(approved.job_id), approved)
    if why is not None:
        return refuse_apply(deps, approved, why)
    try:
        description = deps.batch.describe_service_job(jobId=approved.batch_job_id)
        why = batch_job_refusal(deps.policy, approved, description)
        if why is not None:
            return refuse_apply(deps, approved, why)
        running = _raise_in_batch(deps, approved, description)
    except BatchError as error:
        return apply_failed(deps, approved, error, attempts)
    if running > approved.requested_priority or (
        running == approved.requested_priority and not tried_before
    ):
        return _supersede(deps, approved, running, attempts)
    return _applied(deps, approved, attempts)


def _raise_in_batch(
    deps: EscalationDeps, approved: Escalation, description: Mapping[str, Any]
) -> int:
    """``UpdateServiceJob`` if Batch runs the job (``description``, its
    ``DescribeServiceJob``) below the requested priority. Returns the
    ``schedulingPriority`` Batch had (0-9999).

    Raises:
        BatchError: from ``UpdateServiceJob``.
    """
    running = int(description.get("schedulingPriority") or 0)
    if running < approved.requested_priority:
        deps.batch.update_service_job(
            jobId=approved.batch_job_id, schedulingPriority=approved.requested_priority
        )
    return running


def refuse_apply(deps: EscalationDeps, approved: Escalation, why: str) -> Escalation:
    """APPROVED -> DENIED by quotagov: the stored approval lacks the policy's authority
    (:mod:`.authority`); nothing is sent to Batch. Frees the job and audits
    ``EscalationApplyRefused`` (actor quotagov; ``recordedDecider`` is who the item
    claims approved it).

    Returns:
        The escalation after (``approved`` itself when another run moved it first).
    """
    refused = deps.repository.transition_if_status(
        approved.escalation_id,
        EscalationStatus.APPROVED,
        {
            "status": EscalationStatus.DENIED,
            "decided_by": QUOTAGOV_ACTOR,
            "decided_at": deps.clock.now(),
            "error": f"{APPLY_REFUSED_PREFIX}{why}",
        },
    )
    if refused is None:
        return deps.repository.get(approved.escalation_id) or approved
    logger.warning("escalation %s not applied: %s", approved.escalation_id, why)
    free_job(deps, refused)
    deps.record(
        "EscalationApplyRefused",
        QUOTAGOV_ACTOR,
        approved.escalation_id,
        f"{approved.escalation_id}:apply-refused",
        # not ``jobId``: this decision makes no Batch call (see decision._recheck)
        serviceJobId=approved.batch_job_id,
        refusal=why,
        recordedDecider=approved.decided_by,
        requester=approved.requester,
        level=approved.requested_level,
        requestedPriority=approved.requested_priority,
    )
    return refused


def apply_failed(
    deps: EscalationDeps, approved: Escalation, error: BatchError, attempts: int
) -> Escalation:
    """APPROVED -> APPLY_FAILED with ``error`` after attempt number ``attempts``."""
    failed = deps.repository.transition_if_status(
        approved.escalation_id,
        EscalationStatus.APPROVED,
        {
            "status": EscalationStatus.APPLY_FAILED,
            "error": str(error),
            "apply_attempts": attempts,
        },
    )
    deps.record(
        "EscalationApplyFailed",
        QUOTAGOV_ACTOR,
        approved.escalation_id,
        f"{approved.escalation_id}:apply-failed:{attempts}",
        jobId=approved.batch_job_id,
        error=str(error),
        errorCode=error.code,
        attempt=attempts,
    )
    return failed or approved


def _applied(deps: EscalationDeps, approved: Escalation, attempts: int) -> Escalation:
    """APPROVED -> APPLIED: Batch now runs the job at the requested priority."""
    applied = deps.repository.transition_if_status(
        approved.escalation_id,
        EscalationStatus.APPROVED,
        {
            "status": EscalationStatus.APPLIED,
            "applied_at": deps.clock.now(),
            "error": None,
            "apply_attempts": attempts,
        },
    )
    if applied is not None:
        note_priority(deps, applied)
        free_job(deps, applied)
    deps.record(
        "EscalationApplied",
        approved.decided_by or QUOTAGOV_ACTOR,
        approved.escalation_id,
        f"{approved.escalation_id}:applied",
        jobId=approved.batch_job_id,
        direct=False,
        approvedBy=approved.decided_by,
        requester=approved.requester,
        schedulingPriority={
            "before": approved.current_priority,
            "after": approved.requested_priority,
        },
        attempt=attempts,
    )
    return applied or approved


def _supersede(
    deps: EscalationDeps, approved: Escalation, running: int, attempts: int
) -> Escalation:
    """APPROVED -> SUPERSEDED: Batch already runs the job at ``running`` (0-9999), at
    or above the requested priority; nothing is sent to Batch."""
    superseded = deps.repository.transition_if_status(
        approved.escalation_id,
        EscalationStatus.APPROVED,
        {
            "status": EscalationStatus.SUPERSEDED,
            "superseded_priority": running,
            "error": None,
            "apply_attempts": attempts,
        },
    )
    if superseded is not None:
        free_job(deps, superseded)
    deps.record(
        "EscalationSuperseded",
        approved.decided_by or QUOTAGOV_ACTOR,
        approved.escalation_id,
        f"{approved.escalation_id}:superseded",
        jobId=approved.batch_job_id,
        approvedBy=approved.decided_by,
        requester=approved.requester,
        level=approved.requested_level,
        schedulingPriority={"current": running, "requested": approved.requested_priority},
        attempt=attempts,
    )
    return superseded or approved


def note_priority(deps: EscalationDeps, applied: Escalation) -> None:
    """Keep the job's record in step with Batch after an APPLIED escalation (a failure
    is logged only: Batch holds the priority, the record is a view of it), and tell the
    job's owner (once per escalation)."""
    try:
        deps.jobs.record_priority(
            applied.job_id, applied.requested_level, applied.requested_priority
        )
    except Exception:  # Batch holds the priority; the record is only a view of it
        logger.exception("could not note the new priority on job %s", applied.job_id)
    if deps.notifier is not None:
        deps.notifier.notify_by_id(
            applied.job_id,
            lambda job: priority_changed(
                job,
                at=applied.applied_at or deps.clock.now(),
                before=applied.current_priority,
                after=applied.requested_priority,
                level=applied.requested_level,
                decided_by=applied.decided_by or QUOTAGOV_ACTOR,
                escalation_id=applied.escalation_id,
            ),
        )


def _record_direct(deps: EscalationDeps, escalation: Escalation, action: str, suffix: str) -> None:
    """Audit a direct-level escalation's ``action`` (``EscalationApplied`` or
    ``EscalationApproved``), decision id ``<escalation id>:<suffix>``, by its requester."""
    deps.record(
        action,
        escalation.requester,
        escalation.escalation_id,
        f"{escalation.escalation_id}:{suffix}",
        jobId=escalation.batch_job_id,
        direct=True,
        level=escalation.requested_level,
        reason=escalation.reason,
        schedulingPriority={
            "before": escalation.current_priority,
            "after": escalation.requested_priority,
        },
    )
