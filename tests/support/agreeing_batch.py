"""A Batch whose ``DescribeServiceJob`` confirms what the events fed so far say.

The disposition rules act on Batch's word, not the event's
(:func:`quotagov.governance.dispositions.state_changes.confirmed`). Rule tests that feed
hand-made events stand for Batch itself there: this wrapper answers
``DescribeServiceJob`` for a job with the facts those events folded into its record
(status, attempts, ``preemptionSummary``) over the simulated Batch's description (or
alone, for a job the simulated Batch never ran); every other call goes to the
simulated Batch unchanged. The
attacker tests use the plain simulated Batch, which does not agree with forged events.
"""

from __future__ import annotations

from typing import Any

from quotagov.governance.job_state import JobTracking
from quotagov.governance.job_state.state_event import Attempt
from quotagov.governance.ports import BatchNotFoundError
from quotagov.governance.ports.jobs import JobsRepository


def _attempt(attempt: Attempt) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if attempt.training_job_arn is not None:
        out["serviceResourceId"] = {"name": "TrainingJobArn", "value": attempt.training_job_arn}
    if attempt.started_at_ms is not None:
        out["startedAt"] = attempt.started_at_ms
    if attempt.stopped_at_ms is not None:
        out["stoppedAt"] = attempt.stopped_at_ms
    return out


def described(tracking: JobTracking) -> dict[str, Any]:
    """The ``DescribeServiceJob`` answer that says what ``tracking`` says."""
    detail: dict[str, Any] = {
        "jobId": tracking.batch_job_id,
        "status": tracking.status,
        "attempts": [_attempt(a) for a in tracking.known_attempts().values()],
        "preemptionSummary": {
            "preemptedAttemptCount": tracking.preemption_count,
            "recentPreemptedAttempts": [_attempt(a) for a in tracking.preempted()],
        },
    }
    return detail


class AgreeingBatch:
    """The simulated Batch, with ``DescribeServiceJob`` of jobs it does not know answered
    from their records' folded facts (see the module doc).

    Args:
        inner: the simulated Batch.
        store: the job records.
    """

    def __init__(self, inner: Any, store: JobsRepository) -> None:
        self._inner = inner
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def describe_service_job(self, *, jobId: str) -> dict[str, Any]:
        submission_id = self._store.find_submission_id(jobId)
        record = self._store.get(submission_id) if submission_id else None
        facts = record.jobStateFacts if record is not None else None
        try:
            answer: dict[str, Any] = self._inner.describe_service_job(jobId=jobId)
        except BatchNotFoundError:
            if not facts:
                raise
            answer = {}
        if facts:  # the events fed stand for Batch's state of this job
            answer = {**answer, **described(JobTracking.from_item(facts))}
        return answer
