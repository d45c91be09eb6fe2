"""The steps both use cases share: the one writer of dispositions, and applying them.

Every step is a conditional write on the recorded status (and, to take or release the
lease, on ``leaseUntil``), so it applies once however many events or clicks arrive;
:func:`write` checks each move against :data:`~.record.MOVES` first. Applying a
disposition creates the successor (a conditional put), submits it with its
deterministic ``clientToken`` and records ``applied``: each part is idempotent, so a
run that died half-way is finished by the next one once its lease
(:data:`~.record.APPLY_LEASE_SECONDS`) has lapsed.

Thrash guard: the service job is stopped with ``TerminateServiceJob`` first and the
successor is only submitted once Batch reports the old job ``FAILED`` (both attempts
would otherwise run at once on the same ``CheckpointConfig.S3Uri``, two writers of
one checkpoint prefix, and hold capacity in two shares).
"""

from __future__ import annotations

import contextlib
import logging

from quotagov.governance.dispositions import notify
from quotagov.governance.dispositions.audit import decision_for
from quotagov.governance.dispositions.deps import DispositionDeps
from quotagov.governance.dispositions.errors import DispositionInProgressError
from quotagov.governance.dispositions.outcome import DispositionOutcome
from quotagov.governance.dispositions.record import (
    APPLY_LEASE_SECONDS,
    DispositionRecord,
    DispositionStatus,
    check_move,
)
from quotagov.governance.dispositions.rules import successor_faults, successor_routing
from quotagov.governance.dispositions.successor import successor_record
from quotagov.governance.lease import Lease
from quotagov.governance.model.job import JobRecord
from quotagov.governance.notifications import disposition_applied
from quotagov.governance.ports import BatchClientError, BatchError, JobRecordExistsError
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.submission.proof import unproven, with_proof

logger = logging.getLogger(__name__)


def disposition_of(record: JobRecord | None) -> DispositionRecord | None:
    """The disposition of a job record, or None when it (or the record) has none.

    Raises:
        ValueError: the stored disposition's ``status``, ``trigger`` or a choice is
            not a known value (:meth:`DispositionRecord.from_item`).
    """
    if record is None or record.disposition is None:
        return None
    return DispositionRecord.from_item(record.disposition.to_item())


def write(
    deps: DispositionDeps,
    job_id: str,
    current: DispositionRecord | None,
    moved: DispositionRecord,
    *,
    successor_id: str | None = None,
    expected_lease: float | None = None,
) -> bool:
    """Store ``moved`` if ``job_id``'s disposition is still ``current`` (its status; None:
    no disposition yet) and, with ``expected_lease``, its ``leaseUntil`` is that value.

    Also appends ``successor_id`` to the job's ``successorIds`` in the same write.
    Returns False when someone else moved first.

    Raises:
        IllegalMoveError: :data:`~.record.MOVES` does not allow the move.
    """
    source = current.status if current is not None else None
    check_move(source, moved.status)
    return deps.store.move_disposition_if_status(
        job_id,
        expected_status=source.value if source is not None else None,
        disposition=moved.to_item(),
        successor_id=successor_id,
        expected_lease=expected_lease,
    )


def audit(job: JobRecord, disposition: DispositionRecord, deps: DispositionDeps) -> None:
    """Record the step in the audit log (idempotent on its decision id)."""
    deps.audit.record_decision(decision_for(job, disposition, job_queue=deps.audit_job_queue))


def stored_outcome(job_id: str, deps: DispositionDeps) -> DispositionOutcome | None:
    """The recorded disposition, unchanged by this call (None when there is none)."""
    current = disposition_of(deps.store.get(job_id))
    return DispositionOutcome.of(job_id, current, changed=False) if current else None


def start(
    job: JobRecord, disposition: DispositionRecord, deps: DispositionDeps
) -> DispositionOutcome | None:
    """Open ``disposition`` on a job that has none, then ask, tell or apply.

    Returns the recorded one unchanged when another call opened one first.
    """
    if not write(deps, job.pk, None, disposition):
        return stored_outcome(job.pk, deps)
    audit(job, disposition, deps)
    if disposition.status is DispositionStatus.PENDING_OWNER:
        posted = notify.ask_owner(job, disposition, deps)
        if posted is not None:
            write(deps, job.pk, disposition, disposition.with_changes(message=posted))
    elif disposition.status is DispositionStatus.ABANDONED:
        notify.tell_abandoned(job, disposition, deps)
    elif disposition.status is DispositionStatus.APPLYING:
        return apply(job, disposition, deps)
    return DispositionOutcome.of(job.pk, disposition, changed=True)


def advance(
    job: JobRecord,
    current: DispositionRecord,
    moved: DispositionRecord,
    deps: DispositionDeps,
) -> DispositionOutcome | None:
    """Move ``current`` to ``moved`` (and apply it when it is ``applying``)."""
    if not write(deps, job.pk, current, moved):
        return stored_outcome(job.pk, deps)
    audit(job, moved, deps)
    if moved.status is DispositionStatus.APPLYING:
        return apply(job, moved, deps)
    return DispositionOutcome.of(job.pk, moved, changed=True)


def apply(
    job: JobRecord, disposition: DispositionRecord, deps: DispositionDeps
) -> DispositionOutcome:
    """Create and submit the successor, then mark the disposition ``applied`` (idempotent).

    Raises:
        BatchError: ``SubmitServiceJob`` failed; the lease is released first, so the
            next click or redelivered event retries at once.
    """
    successor_id = str(disposition.successor_id)
    built = successor_routing(successor_record(job, disposition, now=deps.clock.now()), deps.policy)
    built = with_proof(built, deps.proofs, deps.sender())
    faults = successor_faults(built, deps.policy)
    if faults:
        return refuse_successor(job, disposition, faults, deps)
    with contextlib.suppress(JobRecordExistsError):  # created by an earlier run: kept
        deps.store.create_if_absent(built)
    stored = deps.store.get(successor_id) or built
    successor_batch_job_id = stored.batchJobId
    if not successor_batch_job_id:
        # the stored successor is what goes to Batch: held to the policy too (it may
        # have been written before this call, by this run or by another role)
        faults = successor_faults(stored, deps.policy)
        if not faults and unproven(stored, deps.proofs, deps.audit, deps.audit_job_queue):
            faults = [f"successor {successor_id}: stored record has no valid submissionProof"]
        if faults:
            return refuse_successor(job, disposition, faults, deps)
        try:
            response = deps.submitter()(stored)
        except BatchError as error:
            released = disposition.with_changes(
                lease=Lease().released(), last_error=str(error)[:500]
            )
            write(deps, job.pk, disposition, released, expected_lease=disposition.lease_until)
            raise
        successor_batch_job_id = str(response["jobId"])
        deps.store.mark_submitted_if_job_unset(
            successor_id, successor_batch_job_id, batch_job_arn=response.get("jobArn")
        )
    applied = disposition.with_changes(
        status=DispositionStatus.APPLIED,
        closed_at=deps.clock.now(),
        successor_batch_job_id=str(successor_batch_job_id),
    )
    if write(deps, job.pk, disposition, applied, successor_id=successor_id):
        audit(job, applied, deps)
        _tell_owner(job, applied, deps)
        return DispositionOutcome.of(job.pk, applied, changed=True)
    current = disposition_of(deps.store.get(job.pk)) or applied
    return DispositionOutcome.of(job.pk, current, changed=False)


def refuse_successor(
    job: JobRecord, disposition: DispositionRecord, faults: list[str], deps: DispositionDeps
) -> DispositionOutcome:
    """APPLYING -> ABANDONED: the policy would not let the successor go to Batch
    (:func:`~.rules.successor_faults`); nothing is submitted. ``lastError`` holds the
    faults, the step is audited (``DispositionAbandoned`` with ``refusal``) and the
    owner told.

    Returns:
        The outcome (unchanged when another call moved the disposition first).
    """
    why = "successor refused by the policy: " + "; ".join(faults)
    logger.warning("successor of %s not submitted: %s", job.pk, why)
    abandoned = disposition.with_changes(
        status=DispositionStatus.ABANDONED,
        lease=None,
        last_error=why[:1000],
        closed_at=deps.clock.now(),
    )
    if not write(deps, job.pk, disposition, abandoned):
        current = stored_outcome(job.pk, deps)
        return current or DispositionOutcome.of(job.pk, disposition, changed=False)
    audit(job, abandoned, deps)
    notify.tell_abandoned(job, abandoned.with_changes(reason=why), deps)
    return DispositionOutcome.of(job.pk, abandoned, changed=True)


def _tell_owner(job: JobRecord, applied: DispositionRecord, deps: DispositionDeps) -> None:
    """Tell the owner where the successor went and why (once: keyed by the successor)."""
    if deps.notifier is None or applied.choice is None:
        return
    deps.notifier.notify(
        job,
        disposition_applied(
            job,
            at=deps.clock.now(),
            choice=applied.choice.value,
            target_share=applied.target_share,
            successor_id=str(applied.successor_id),
            reason=applied.reason,
            decided_by=applied.decided_by or QUOTAGOV_ACTOR,
        ),
    )


def resume(
    job: JobRecord,
    disposition: DispositionRecord,
    deps: DispositionDeps,
    *,
    report: bool,
) -> DispositionOutcome:
    """Finish an ``applying`` disposition another call started, unless it still holds the
    lease. Taking the lease is a conditional write, so of many concurrent callers one
    submits the successor.

    Args:
        report: True (an owner's repeated decision): a held lease or a Batch failure is
            reported in the outcome. False (an event): both raise, so it is retried.

    Raises:
        DispositionInProgressError: the lease is held and ``report`` is False.
        BatchError: ``SubmitServiceJob`` failed and ``report`` is False.
    """
    lease = disposition.lease or Lease()
    now = deps.clock.now()
    if lease.held(now):
        if not report:
            raise DispositionInProgressError(
                f"job {job.pk!r}: another invocation is submitting the successor "
                f"(lease for {lease.until - now:.0f} s more); retry the event later"
            )
        return DispositionOutcome.of(job.pk, disposition, changed=False)
    taken = disposition.with_changes(lease=Lease.taken(now, APPLY_LEASE_SECONDS))
    if not write(deps, job.pk, disposition, taken, expected_lease=disposition.lease_until):
        current = disposition_of(deps.store.get(job.pk)) or disposition
        return DispositionOutcome.of(job.pk, current, changed=False)
    if report:
        return apply_or_report(job, taken, deps, changed=False)
    return apply(job, taken, deps)


def apply_or_report(
    job: JobRecord,
    disposition: DispositionRecord,
    deps: DispositionDeps,
    *,
    changed: bool,
) -> DispositionOutcome:
    """:func:`apply`, with a Batch failure reported as the outcome's ``error``."""
    try:
        return apply(job, disposition, deps)
    except BatchError as error:
        logger.warning("successor of %s not submitted yet: %s", job.pk, error)
        return DispositionOutcome.of(job.pk, disposition, changed=changed, error=str(error))


def terminate(job: JobRecord, disposition: DispositionRecord, deps: DispositionDeps) -> None:
    """``TerminateServiceJob`` on a thrashing job, then note ``terminateRequestedAt`` so
    later events of the job do not repeat it.

    A ``ClientException`` (already finished, unknown to Batch) is logged: the job's
    terminal event settles the disposition.

    Raises:
        BatchError: a transient Batch failure (nothing noted; the event is retried).
    """
    if not job.batchJobId:
        return
    try:
        deps.batch.terminate_service_job(
            jobId=job.batchJobId,
            reason=f"quotagov {disposition.reason}; moving to share {disposition.target_share!r}"[
                :1000
            ],
        )
    except BatchClientError as error:
        logger.warning("TerminateServiceJob refused for %s: %s", job.batchJobId, error)
    noted = disposition.with_changes(terminate_requested_at=deps.clock.now())
    write(deps, job.pk, disposition, noted)
