"""Use case: keep a job's record up to date from one service-job state event.

Flow for each ``Batch Service Job State Change`` (``docs/design.md``, "Job-state handling
and retry exhaustion"):

1. find the submission by ``batchJobId`` (index ``byBatchJobId``); a job quotagov did
   not submit is recorded as foreign (``FOREIGN#<jobId>`` item) and otherwise ignored,
   also when it carries another submission's ``quotagov:submissionId`` tag (then with
   a finding, audited; the claimed record is not touched);
2. fold the event into the record's facts (:func:`quotagov.governance.job_state.fold`,
   order-free and idempotent) and write facts + summary with a version condition,
   re-reading and re-folding when another event won the race;
3. tell the owner about new preemptions and a failure
   (:mod:`quotagov.governance.notifications`, once per event);
4. open or advance the disposition (:func:`quotagov.governance.dispositions.on_job_state`;
   it reads the record with the facts and summary just folded in).

The result tells the handler which metrics to emit: only changes this call actually
wrote (new preemptions, first start, a disposition opened), so duplicates add nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from quotagov.governance.dispositions import (
    DispositionDeps,
    DispositionOutcome,
    DispositionStatus,
    on_job_state,
)
from quotagov.governance.job_state import (
    JobStateSummary,
    JobTracking,
    PreemptionRecord,
    StateEvent,
    fold,
    new_preemptions,
    preemption_kind,
    summarize,
)
from quotagov.governance.model.job import BatchState, JobRecord, SubmissionState
from quotagov.governance.notifications import OwnerNotifier
from quotagov.governance.notifications.job_events import Beneficiary, owner_events
from quotagov.governance.ports import BatchNotFoundError
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR, ControllerDecision
from quotagov.governance.ports.jobs import JobsRepository, StaleJobStateError
from quotagov.governance.submission import SUBMISSION_TAG

#: Attempts at the read-fold-write cycle before giving up (the event is then retried).
MAX_WRITE_ATTEMPTS = 8


class JobStateConflictError(Exception):
    """The record kept changing under us for :data:`MAX_WRITE_ATTEMPTS` tries (retry later)."""


class RecordNotVisibleYetError(Exception):
    """The service job is tagged with a submission whose record cannot be read yet.
    Retry the event later."""


@dataclass(frozen=True)
class JobStateResult:
    """What one event changed.

    Attributes:
        outcome: ``tracked`` (record updated), ``unchanged`` (duplicate or late event:
            nothing new) or ``foreign`` (not a quotagov job).
        submission_id: the record's ``pk`` (None for foreign jobs).
        batch_job_id: ``detail.jobId``.
        quota_share_name: the job's share (record, else event).
        summary: the record's summary after the event (None for foreign jobs).
        new_preemptions: preemptions first recorded by this event.
        first_start_seconds: submission to first start, when this event recorded the
            first start; else None.
        disposition: the disposition after this event (None when there is none).
        disposition_opened: the disposition type opened by this event (``resubmit``,
            ``reclassify``, ``ask-owner``, ``abandon``), else None.
        team: the record's team (None for foreign jobs).
        instance_type: the record's ``instanceType`` (for GPU-hours), if known.
    """

    outcome: str
    batch_job_id: str
    submission_id: str | None = None
    quota_share_name: str | None = None
    summary: JobStateSummary | None = None
    new_preemptions: tuple[PreemptionRecord, ...] = ()
    first_start_seconds: float | None = None
    disposition: DispositionOutcome | None = None
    disposition_opened: str | None = None
    team: str | None = None
    instance_type: str | None = None


@dataclass
class JobStateDeps:
    """Dependencies of :func:`apply_state_event`.

    Attributes:
        store: the job records.
        dispositions: what dispositions need (their ``store`` is the same repository;
            their ``batch`` answers ``DescribeServiceJob`` for jobs not found by id).
        notifier: tells owners about preemptions and failures (None: nobody is told).
    """

    store: JobsRepository
    dispositions: DispositionDeps
    notifier: OwnerNotifier | None = None


def apply_state_event(event: StateEvent, deps: JobStateDeps) -> JobStateResult:
    """Fold ``event`` into its job's record, then open/advance the disposition.

    Whose job is it: the ``byBatchJobId`` index answers once the submission recorded
    its ``batchJobId``. Until then (the first events can beat that write, and the index
    is eventually consistent), ``DescribeServiceJob`` tells: quotagov tags every service
    job it submits with ``quotagov:submissionId`` (events carry no tags). A job without
    the tag is foreign; its ``FOREIGN#`` item spares Batch the question next time.

    Raises:
        RecordNotVisibleYetError: the job is tagged with a submission whose record is
            not readable (yet).
        JobStateConflictError: too many concurrent writers; retry the event.
        BatchError: ``DescribeServiceJob`` or a disposition's Batch call failed; retry.
        DispositionInProgressError: another call is submitting the successor; retry.
    """
    submission_id = deps.store.find_submission_id(event.job_id)
    if submission_id is None:
        claimed = _submission_from_batch(event, deps)
        if claimed is None:
            return _foreign(event, deps)
        impostor = _claim_refusal(claimed, event, deps)
        if impostor is not None:
            return _foreign(event, deps, claimed=claimed, finding=impostor)
        submission_id = claimed
    folded = _fold_and_save(submission_id, event, deps)
    record = folded.record.model_copy(
        update={
            "jobStateFacts": folded.after.to_item(),
            "jobState": BatchState.model_validate(folded.summary.to_item()),
        }
    )
    if folded.changed and deps.notifier is not None:
        _tell_owner(record, folded, deps, deps.notifier)
    had_disposition = record.disposition is not None
    disposition = on_job_state(record, folded.after, deps.dispositions)
    opened = None
    if disposition is not None and disposition.changed and not had_disposition:
        opened = _disposition_type(disposition)
    return _result(event, submission_id, folded, disposition, opened)


@dataclass(frozen=True)
class _Folded:
    """One event folded into a record: the record as read, the tracking before and
    after, the summary after, and whether this call wrote it."""

    record: JobRecord
    before: JobTracking | None
    after: JobTracking
    summary: JobStateSummary
    changed: bool


def _fold_and_save(submission_id: str, event: StateEvent, deps: JobStateDeps) -> _Folded:
    """Read, fold, write with a version condition; re-read and re-fold when another
    event won the race (at most :data:`MAX_WRITE_ATTEMPTS` times).

    Raises:
        RecordNotVisibleYetError: the record cannot be read (yet).
        JobStateConflictError: every attempt lost the race.
    """
    for _ in range(MAX_WRITE_ATTEMPTS):
        record = deps.store.get(submission_id)
        if record is None:
            raise RecordNotVisibleYetError(
                f"detail.jobId: service job {event.job_id!r} is tagged with submission "
                f"{submission_id!r}, which has no record (yet); retry later"
            )
        facts = record.jobStateFacts
        before = JobTracking.from_item(facts) if facts else None
        after = fold(before, event)
        summary = _summary(record, after, deps)
        if after == before:
            return _Folded(record, before, after, summary, changed=False)
        try:
            deps.store.save_job_state_if_version(
                submission_id,
                facts=after.to_item(),
                summary=summary.to_item(),
                expected_version=record.job_state_version,
            )
        except StaleJobStateError:
            continue
        return _Folded(record, before, after, summary, changed=True)
    raise JobStateConflictError(f"job {submission_id!r}: too many concurrent updates")


def _result(
    event: StateEvent,
    submission_id: str,
    folded: _Folded,
    disposition: DispositionOutcome | None,
    opened: str | None,
) -> JobStateResult:
    """What the event changed: only what this call wrote counts (new preemptions, the
    first start), so a duplicate event adds nothing to the metrics."""
    summary, before, changed = folded.summary, folded.before, folded.changed
    first_start = None
    if changed and summary.submission_to_first_start_seconds is not None:
        was_started = before is not None and _first_start(before) is not None
        if not was_started:
            first_start = summary.submission_to_first_start_seconds
    fresh = set(new_preemptions(before, folded.after)) if changed else set()
    share = folded.record.quotaShareName or folded.after.quota_share_name or ""
    return JobStateResult(
        outcome="tracked" if changed else "unchanged",
        batch_job_id=event.job_id,
        submission_id=submission_id,
        quota_share_name=str(share),
        summary=summary,
        new_preemptions=tuple(
            p for p in summary.preemptions if p.training_job_arn in fresh or _key_in(p, fresh)
        ),
        first_start_seconds=first_start,
        disposition=disposition,
        disposition_opened=opened,
        team=folded.record.team or None,
        instance_type=folded.record.instanceType or None,
    )


def _tell_owner(
    job: JobRecord, folded: _Folded, deps: JobStateDeps, notifier: OwnerNotifier
) -> None:
    """Tell the owner about the preemptions and the failure this event recorded."""

    def beneficiary_of(batch_job_id: str) -> Beneficiary | None:
        submission_id = deps.store.find_submission_id(batch_job_id)
        other = deps.store.get(submission_id) if submission_id else None
        if other is None:
            return None
        return Beneficiary(other.jobName or batch_job_id, other.quotaShareName or None)

    for event in owner_events(
        job, folded.before, folded.after, folded.summary, beneficiary_of=beneficiary_of
    ):
        notifier.notify(job, event)


def instance_count_of(record: JobRecord) -> float | None:
    """``ResourceConfig.InstanceCount`` of the record's ``serviceRequestPayload``, if any."""
    payload = record.serviceRequestPayload
    if not payload:
        return None
    try:
        count = json.loads(payload)["ResourceConfig"]["InstanceCount"]
    except (ValueError, KeyError, TypeError):
        return None
    return float(count)


def _summary(record: JobRecord, tracking: JobTracking, deps: JobStateDeps) -> JobStateSummary:
    interval = record.checkpointIntervalSeconds
    share_name = record.quotaShareName or tracking.quota_share_name or ""
    try:
        share = deps.dispositions.policy.share(share_name)
        kind = preemption_kind(
            share.resourceSharingConfiguration.strategy,
            share.preemptionConfiguration.inSharePreemption,
        )
    except KeyError:
        kind = "unattributed"
    return summarize(
        tracking,
        checkpoint_interval_seconds=float(interval) if interval else None,
        instance_count=instance_count_of(record),
        kind=kind,
    )


def _first_start(tracking: JobTracking) -> int | None:
    starts = [a.started_at_ms for a in tracking.attempts.values() if a.started_at_ms is not None]
    if tracking.started_at_ms is not None:
        starts.append(tracking.started_at_ms)
    return min(starts) if starts else None


def _key_in(preemption: PreemptionRecord, keys: set[str]) -> bool:
    return preemption.training_job_arn is None and f"startedAt:{preemption.started_at_ms}" in keys


def _disposition_type(outcome: DispositionOutcome) -> str:
    if outcome.status is DispositionStatus.PENDING_OWNER:
        return "ask-owner"
    if outcome.decided_by == QUOTAGOV_ACTOR and outcome.choice:
        return outcome.choice.value
    return outcome.policy_action


def _submission_from_batch(event: StateEvent, deps: JobStateDeps) -> str | None:
    """The ``quotagov:submissionId`` tag of the service job, or None for a foreign job."""
    if deps.store.is_foreign(event.job_id):
        return None
    try:
        job = deps.dispositions.batch.describe_service_job(jobId=event.job_id)
    except BatchNotFoundError:
        return None
    tag = (job.get("tags") or {}).get(SUBMISSION_TAG)
    return str(tag) if tag else None


#: The finding of a service job tagged with a submission that is not its own.
IMPOSTOR_FINDING = "SUBMISSION_TAG_OF_ANOTHER_JOB"


def _claim_refusal(claimed: str, event: StateEvent, deps: JobStateDeps) -> str | None:
    """Why the service job of ``event``, tagged ``quotagov:submissionId=<claimed>``, is
    not that submission's job; None when it is.

    The tag is only a hint: anyone who may call ``SubmitServiceJob`` can set it. The
    job is the submission's only when the record names it (``batchJobId``, written by
    the submit worker from Batch's answer to the record's own ``clientToken``). A
    record still being submitted (``QUEUED``, no ``batchJobId`` yet) cannot be told
    apart from an impostor (``DescribeServiceJob`` does not return the client token),
    so the event is retried until the worker has recorded its job id.

    Raises:
        RecordNotVisibleYetError: the record is still being submitted (retry later).
    """
    record = deps.store.get(claimed)
    if record is None:
        raise RecordNotVisibleYetError(
            f"detail.jobId: service job {event.job_id!r} is tagged with submission "
            f"{claimed!r}, which has no record (yet); retry later"
        )
    recorded = record.batchJobId
    if recorded == event.job_id:
        return None
    if recorded:
        return f"{IMPOSTOR_FINDING}: tagged with submission {claimed!r}, whose job is {recorded!r}"
    if record.state is SubmissionState.QUEUED:
        raise RecordNotVisibleYetError(
            f"detail.jobId: service job {event.job_id!r} is tagged with submission "
            f"{claimed!r}, which is still being submitted; retry once its job id is recorded"
        )
    return (
        f"{IMPOSTOR_FINDING}: tagged with submission {claimed!r}, which never reached "
        f"Batch (state {record.state})"
    )


def _foreign(
    event: StateEvent, deps: JobStateDeps, *, claimed: str | None = None, finding: str | None = None
) -> JobStateResult:
    """Record the job as foreign; a job claiming another submission is also audited
    (``ForeignJobClaimsSubmission``) and the claimed record is left as it was."""
    deps.store.record_foreign(
        event.job_id,
        status=event.status,
        event_time_ms=event.event_time_ms,
        job_queue=event.job_queue,
        job_name=event.job_name,
        quota_share_name=event.quota_share_name,
        claimed_submission_id=claimed,
        finding=finding,
    )
    if finding is not None:
        dispositions = deps.dispositions
        dispositions.audit.record_decision(
            ControllerDecision(
                action="ForeignJobClaimsSubmission",
                actor=QUOTAGOV_ACTOR,
                job_queue=dispositions.audit_job_queue,
                resource=event.job_id,
                decision_id=f"foreign-claim:{event.job_id}:{claimed}",
                details={
                    "jobId": event.job_id,
                    "claimedSubmissionId": claimed,
                    "finding": finding,
                    "status": event.status,
                },
            )
        )
    return JobStateResult(
        outcome="foreign",
        batch_job_id=event.job_id,
        quota_share_name=event.quota_share_name,
    )
