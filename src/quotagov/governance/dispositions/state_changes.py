"""Use case: open or advance a job's disposition after its tracked state changed.

Called by the job-state use case (:mod:`quotagov.governance.job_state.updates`) for
every ``Batch Service Job State Change`` event of a quotagov job, duplicates included:
each step is conditional, so a redelivered event resumes work a crash left half done.

Batch's word, not the event's: an event is a claim (anyone allowed to invoke the
function can hand it one). Before a costly or destructive step, opening a
retries-exhausted disposition, the thrash guard's ``TerminateServiceJob`` or a
successor after the termination, the job is read back with ``DescribeServiceJob``
(:func:`confirmed`) and the rule is decided again on Batch's answer alone; when Batch
does not confirm it, nothing is done.
"""

from __future__ import annotations

from typing import Any

from quotagov.batch_semantics import failed_on_retries
from quotagov.governance.dispositions import steps
from quotagov.governance.dispositions.deps import DispositionDeps
from quotagov.governance.dispositions.outcome import DispositionOutcome
from quotagov.governance.dispositions.record import (
    APPLY_LEASE_SECONDS,
    DispositionRecord,
    DispositionStatus,
)
from quotagov.governance.dispositions.rules import (
    exhausted_disposition,
    thrash_detected,
    thrash_disposition,
)
from quotagov.governance.job_state import JobTracking, StateEvent, fold
from quotagov.governance.lease import Lease
from quotagov.governance.model.job import JobRecord
from quotagov.governance.ports import BatchNotFoundError


def on_job_state(
    job: JobRecord, tracking: JobTracking, deps: DispositionDeps
) -> DispositionOutcome | None:
    """Open or advance the job's disposition after its tracked state changed.

    Args:
        job: the job's record (with its ``disposition``, if any).
        tracking: the job's tracked state after the event.
        deps: dependencies (a function's ``dispositions``, :mod:`quotagov.composition`).

    Returns:
        The disposition after this call, or None when the job needs none.

    Raises:
        BatchError: a transient Batch failure; the event should be retried.
        DispositionInProgressError: another invocation is submitting the successor;
            retry the event later (it finishes the work if that invocation died).
    """
    current = steps.disposition_of(job)
    if current is None:
        return _open(job, tracking, deps)
    # re-assert the current step in the audit log (idempotent on its decision id), so
    # a step whose audit write failed after the record moved is written on redelivery
    steps.audit(job, current, deps)
    if current.status is DispositionStatus.APPLYING:
        return steps.resume(job, current, deps, report=False)
    if current.status is DispositionStatus.AWAITING_TERMINATION:
        return _after_termination(job, current, tracking, deps)
    return None


def _open(
    job: JobRecord, tracking: JobTracking, deps: DispositionDeps
) -> DispositionOutcome | None:
    """Open a disposition when the job's retries ran out or it thrashes."""
    workload_class = deps.policy.workloadClasses.get(job.workloadClass)
    if workload_class is None:
        return None
    now = deps.clock.now()
    retries = job.preemptionRetriesBeforeTermination
    if failed_on_retries(tracking.status, tracking.preemption_count, retries):
        tracking = confirmed(job, tracking, deps)
        if not failed_on_retries(tracking.status, tracking.preemption_count, retries):
            return None  # Batch does not say so
        opened = exhausted_disposition(job, tracking, workload_class, deps.policy, now)
        return steps.start(job, opened, deps)
    guard = workload_class.thrashGuard
    if guard is None or tracking.is_terminal or not _thrashes(tracking, guard):
        return None
    tracking = confirmed(job, tracking, deps)
    if tracking.is_terminal or not _thrashes(tracking, guard):
        return None  # Batch does not say so
    thrashing = thrash_disposition(job, tracking, workload_class, guard, deps.policy, now)
    if thrashing is None:
        return None
    outcome = steps.start(job, thrashing, deps)
    if outcome is not None and outcome.changed:
        steps.terminate(job, thrashing, deps)
    return outcome


def _thrashes(tracking: JobTracking, guard: Any) -> bool:
    """The thrash guard's rule on ``tracking``'s preempted attempts' stop times."""
    stops = [a.stopped_at_ms for a in tracking.preempted() if a.stopped_at_ms is not None]
    return thrash_detected(stops, guard)


def confirmed(job: JobRecord, tracking: JobTracking, deps: DispositionDeps) -> JobTracking:
    """The job as Batch describes it now (one ``DescribeServiceJob``), as tracked state:
    its status, attempts and ``preemptionSummary`` alone, nothing from the events
    (https://docs.aws.amazon.com/batch/latest/APIReference/API_DescribeServiceJob.html).
    A job Batch does not know is tracked as ``tracking``'s job with no facts
    (``SUBMITTED``, no attempts): no rule fires on it.

    Raises:
        BatchError: Batch could not be asked (the event is retried).
    """
    job_id = job.batchJobId or tracking.batch_job_id
    try:
        described = deps.batch.describe_service_job(jobId=job_id)
    except BatchNotFoundError:
        described = {"jobId": job_id, "status": "SUBMITTED"}
    return fold(None, StateEvent.from_detail(described, event_id="describe", event_time_ms=0))


def _after_termination(
    job: JobRecord,
    current: DispositionRecord,
    tracking: JobTracking,
    deps: DispositionDeps,
) -> DispositionOutcome | None:
    """``awaiting-termination``: repeat a ``TerminateServiceJob`` that failed transiently;
    once Batch reports the job ``FAILED`` (read back, :func:`confirmed`) submit the
    successor; ``SUCCEEDED``: not needed."""
    if not tracking.is_terminal:
        if current.terminate_requested_at:
            return None
        steps.terminate(job, current, deps)
        return DispositionOutcome.of(job.pk, current, changed=False)
    tracking = confirmed(job, tracking, deps)
    if not tracking.is_terminal:
        return None  # the event said so, Batch does not: wait for Batch
    now = deps.clock.now()
    if tracking.status == "FAILED":
        moved = current.with_changes(
            status=DispositionStatus.APPLYING,
            terminated_at=now,
            lease=Lease.taken(now, APPLY_LEASE_SECONDS),
        )
    else:
        moved = current.with_changes(
            status=DispositionStatus.NOT_NEEDED,
            reason=current.reason + "; the job SUCCEEDED before the termination took effect",
            closed_at=now,
        )
    return steps.advance(job, current, moved, deps)
