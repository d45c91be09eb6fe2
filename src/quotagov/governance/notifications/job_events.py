"""Which owner events one folded ``Batch Service Job State Change`` brings.

Compares the job's tracked facts before and after the event (both from
:func:`quotagov.governance.job_state.fold`): a preempted attempt whose stop became
known is a preemption to tell; the first FAILED status is a failure to tell. The event
keys make repeats harmless (the log claims each once), and the before/after
comparison spares the log a claim for every later event of the job.

Which job a preemption was for: AWS does not document Batch's attempt ``statusReason``
text, so the beneficiary is named only when the reason carries a service
job ARN that resolves to a quotagov job; the kind is then settled by the shares (same
share: in-share, another: cross-share), else inferred from the share's configuration
(:func:`quotagov.governance.job_state.preemption_kind`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from quotagov.governance.job_state import JobStateSummary, JobTracking
from quotagov.governance.job_state.state_event import Attempt, attempt_aliases
from quotagov.governance.model.job import JobRecord
from quotagov.governance.notifications.owner_messages import OwnerEvent, failed, preempted

_SERVICE_JOB_ARN = re.compile(r"arn:aws[a-z-]*:batch:[^\s:]+:\d{12}:service-job/([A-Za-z0-9-]+)")


@dataclass(frozen=True)
class Beneficiary:
    """The job a preempted attempt's capacity went to: its name and quota share."""

    job_name: str
    quota_share_name: str | None


def owner_events(
    job: JobRecord,
    before: JobTracking | None,
    after: JobTracking,
    summary: JobStateSummary,
    *,
    beneficiary_of: Callable[[str], Beneficiary | None],
) -> list[OwnerEvent]:
    """The events to tell ``job``'s owner about, in the order they happened
    (preemptions by stop time, then the failure).

    Args:
        beneficiary_of: the quotagov job with a Batch job id, or None.
    """
    told = {
        alias
        for attempt in (before.preempted() if before else ())
        if attempt.stopped_at_ms is not None
        for alias in attempt_aliases(attempt)
    }
    events: list[OwnerEvent] = []
    fresh = [
        a
        for a in after.preempted()
        if a.stopped_at_ms is not None and not told.intersection(attempt_aliases(a))
    ]
    retries = job.preemptionRetriesBeforeTermination
    for attempt in sorted(fresh, key=lambda a: a.stopped_at_ms or 0):
        events.append(
            _preempted(job, attempt, summary, beneficiary_of, retries, status_now=after.status)
        )
    if after.status == "FAILED" and (before is None or before.status != "FAILED"):
        at_ms = after.stopped_at_ms or after.last_event_time_ms
        events.append(
            failed(
                job,
                at=at_ms / 1000,
                status_reason=after.status_reason,
                preemptions=after.preemption_count,
            )
        )
    return events


def _preempted(
    job: JobRecord,
    attempt: Attempt,
    summary: JobStateSummary,
    beneficiary_of: Callable[[str], Beneficiary | None],
    retries: int | None,
    *,
    status_now: str | None,
) -> OwnerEvent:
    record = next(
        (
            p
            for p in summary.preemptions
            if (p.training_job_arn and p.training_job_arn == attempt.training_job_arn)
            or (p.started_at_ms is not None and p.started_at_ms == attempt.started_at_ms)
        ),
        None,
    )
    kind = record.kind if record else "unattributed"
    found = _SERVICE_JOB_ARN.search(attempt.status_reason or "")
    beneficiary = beneficiary_of(found.group(1)) if found else None
    if beneficiary is not None and beneficiary.quota_share_name and job.quotaShareName:
        same = beneficiary.quota_share_name == job.quotaShareName
        kind = "in-share" if same else "cross-share"
    stops = sorted(p.stopped_at_ms for p in summary.preemptions if p.stopped_at_ms is not None)
    number = stops.index(attempt.stopped_at_ms) + 1 if attempt.stopped_at_ms in stops else 1
    retries_left = None if retries is None else retries - number
    key = str(attempt.started_at_ms) if attempt.started_at_ms is not None else attempt.key
    return preempted(
        job,
        attempt_key=key,
        stopped_at=(attempt.stopped_at_ms or 0) / 1000,
        run_seconds=record.run_seconds if record else None,
        lost_seconds=record.lost_work_seconds if record else None,
        kind=kind,
        beneficiary=beneficiary.job_name if beneficiary else (found.group(0) if found else None),
        beneficiary_share=beneficiary.quota_share_name if beneficiary else None,
        retries_left=retries_left,
        status_now=status_now,
    )
