"""What a job's record shows, from its folded facts: waiting and running time, each
preemption's run time and estimated lost work, and the time from submission to first
start. Seconds in summaries; the facts are in epoch milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from quotagov.batch_semantics import lost_seconds
from quotagov.governance.job_state.fold import JobTracking
from quotagov.governance.job_state.state_event import Attempt, attempt_aliases


@dataclass(frozen=True)
class PreemptionRecord:
    """One preemption as the job record shows it.

    Attributes:
        training_job_arn: the preempted attempt's SageMaker training job.
        started_at_ms / stopped_at_ms: the attempt's run, epoch ms (None if unknown).
        run_seconds: how long the attempt ran (RUNNING start to stop; 0 when it was
            preempted before it started; None while its stop is unknown).
        lost_work_seconds: time run since the attempt's last checkpoint: ``run_seconds
            % checkpointIntervalSeconds``, or all of ``run_seconds`` without
            checkpointing (assumes checkpoints every interval from the start
            of the attempt).
        lost_instance_seconds: ``lost_work_seconds`` times the job's instance count.
        kind: ``in-share``, ``cross-share`` or ``unattributed`` (:func:`preemption_kind`).
    """

    training_job_arn: str | None
    started_at_ms: int | None
    stopped_at_ms: int | None
    run_seconds: float | None
    lost_work_seconds: float | None
    lost_instance_seconds: float | None
    kind: str

    def to_item(self) -> dict[str, Any]:
        """A JSON/DynamoDB-friendly dict (None fields left out)."""
        raw = {
            "trainingJobArn": self.training_job_arn,
            "startedAt": self.started_at_ms,
            "stoppedAt": self.stopped_at_ms,
            "runSeconds": self.run_seconds,
            "lostWorkSeconds": self.lost_work_seconds,
            "lostInstanceSeconds": self.lost_instance_seconds,
            "kind": self.kind,
        }
        return {k: v for k, v in raw.items() if v is not None}


@dataclass(frozen=True)
class JobStateSummary:
    """What a job record shows about the service job (seconds, not milliseconds).

    Attributes:
        status / status_reason: the job's current status.
        attempt_count: attempts known (each one SageMaker training job).
        preemption_count: see :attr:`JobTracking.preemption_count`.
        preemptions: the known preempted attempts with their lost work, oldest first.
        unattributed_preemptions: preemptions counted by Batch whose attempt fell out
            of every ``recentPreemptedAttempts`` window seen (no lost-work estimate).
        waiting_seconds: time since ``createdAt`` not spent in an attempt.
        running_seconds: time spent in attempts (attempt ``startedAt``, i.e. RUNNING, to
            ``stoppedAt``); SCHEDULED and STARTING count as waiting.
        lost_instance_seconds: sum of the preemptions' lost instance-seconds.
        submission_to_first_start_seconds: ``createdAt`` to the first attempt's start.
        as_of_ms: the time the waiting/running figures hold for (job stop, or the
            latest event time while the job is not finished).
    """

    status: str
    status_reason: str | None
    attempt_count: int
    preemption_count: int
    preemptions: tuple[PreemptionRecord, ...]
    unattributed_preemptions: int
    waiting_seconds: float | None
    running_seconds: float
    lost_instance_seconds: float
    first_started_at_ms: int | None
    submission_to_first_start_seconds: float | None
    as_of_ms: int

    def to_item(self) -> dict[str, Any]:
        """A JSON/DynamoDB-friendly dict for the job record (None fields left out)."""
        raw: dict[str, Any] = {
            "status": self.status,
            "statusReason": self.status_reason,
            "attemptCount": self.attempt_count,
            "preemptionCount": self.preemption_count,
            "preemptions": [p.to_item() for p in self.preemptions],
            "unattributedPreemptions": self.unattributed_preemptions,
            "waitingSeconds": self.waiting_seconds,
            "runningSeconds": self.running_seconds,
            "lostInstanceSeconds": self.lost_instance_seconds,
            "firstStartedAt": self.first_started_at_ms,
            "submissionToFirstStartSeconds": self.submission_to_first_start_seconds,
            "asOf": self.as_of_ms,
        }
        return {k: v for k, v in raw.items() if v is not None}


def preemption_kind(
    strategy: str | None, in_share_preemption: str | None, *, borrows: bool | None = None
) -> str:
    """Which kind of preemption most likely stopped a job of a share, from its configuration.

    Batch does not say why an attempt was preempted (the ``statusReason`` text is not
    documented), so the kind is inferred from the share's configuration:

    * a share that cannot borrow (``RESERVE``/``LEND``) loses jobs only to in-share
      preemption (or to a lowered capacity limit) -> ``in-share`` when in-share
      preemption is ``ENABLED``;
    * a ``LEND_AND_BORROW`` share without in-share preemption loses jobs only to
      cross-share preemption -> ``cross-share``;
    * otherwise both are possible -> ``unattributed`` (``borrows`` True/False settles
      it when the caller knows whether the job was on borrowed capacity).
    """
    if borrows is True:
        return "cross-share"
    can_borrow = strategy == "LEND_AND_BORROW"
    in_share = in_share_preemption == "ENABLED"
    if borrows is False or not can_borrow:
        return "in-share" if in_share else "unattributed"
    return "unattributed" if in_share else "cross-share"


def summarize(
    tracking: JobTracking,
    *,
    checkpoint_interval_seconds: float | None,
    instance_count: float | None = None,
    kind: str = "unattributed",
) -> JobStateSummary:
    """Compute the record's figures from the tracked facts.

    Args:
        checkpoint_interval_seconds: declared at submission; None = no checkpointing.
        instance_count: instances the job holds (``ResourceConfig.InstanceCount`` of
            the payload); falls back to the events' ``capacityUsage``, then 1.
        kind: the preemption kind of the job's share (:func:`preemption_kind`).
    """
    count = instance_count or tracking.instance_count or 1.0
    as_of = _as_of(tracking)
    attempts = tracking.known_attempts()
    running_ms = _running_ms(attempts.values(), as_of)
    starts = [a.started_at_ms for a in attempts.values() if a.started_at_ms is not None]
    if tracking.started_at_ms is not None:
        starts.append(tracking.started_at_ms)
    first_start = min(starts) if starts else None
    waiting: float | None = None
    to_first_start: float | None = None
    if tracking.created_at_ms is not None:
        waiting = max(0, as_of - tracking.created_at_ms - running_ms) / 1000
        if first_start is not None:
            to_first_start = max(0, first_start - tracking.created_at_ms) / 1000
    preemptions = tuple(
        _preemption(attempt, checkpoint_interval_seconds, count, kind)
        for attempt in tracking.preempted()
    )
    return JobStateSummary(
        status=tracking.status,
        status_reason=tracking.status_reason,
        attempt_count=len(attempts),
        preemption_count=tracking.preemption_count,
        preemptions=preemptions,
        unattributed_preemptions=max(0, tracking.preemption_count - len(preemptions)),
        waiting_seconds=waiting,
        running_seconds=running_ms / 1000,
        lost_instance_seconds=sum(p.lost_instance_seconds or 0.0 for p in preemptions),
        first_started_at_ms=first_start,
        submission_to_first_start_seconds=to_first_start,
        as_of_ms=as_of,
    )


def _as_of(tracking: JobTracking) -> int:
    """The time the figures are for: the stop of a finished job, else the last event."""
    if tracking.is_terminal and tracking.stopped_at_ms is not None:
        return max(tracking.stopped_at_ms, 0)
    return tracking.last_event_time_ms


def _running_ms(attempts: Iterable[Attempt], as_of: int) -> int:
    """RUNNING milliseconds of every started attempt up to ``as_of`` (open ones to it)."""
    running_ms = 0
    for attempt in attempts:
        if attempt.started_at_ms is None:
            continue
        stop = attempt.stopped_at_ms if attempt.stopped_at_ms is not None else as_of
        running_ms += max(0, min(stop, as_of) - attempt.started_at_ms)
    return running_ms


def _preemption(
    attempt: Attempt, checkpoint_interval_seconds: float | None, count: float, kind: str
) -> PreemptionRecord:
    """One preempted attempt's run time and lost work (unknown until it has a stop)."""
    run: float | None = None
    lost: float | None = None
    lost_instance: float | None = None
    if attempt.stopped_at_ms is not None:
        # an attempt preempted before it reached RUNNING has no startedAt: it ran 0 s
        start = (
            attempt.started_at_ms if attempt.started_at_ms is not None else attempt.stopped_at_ms
        )
        run = max(0, attempt.stopped_at_ms - start) / 1000
        lost = lost_seconds(run, checkpoint_interval_seconds)
        lost_instance = lost * count
    return PreemptionRecord(
        training_job_arn=attempt.training_job_arn,
        started_at_ms=attempt.started_at_ms,
        stopped_at_ms=attempt.stopped_at_ms,
        run_seconds=run,
        lost_work_seconds=lost,
        lost_instance_seconds=lost_instance,
        kind=kind,
    )


def new_preemptions(before: JobTracking | None, after: JobTracking) -> list[str]:
    """Keys of preempted attempts ``after`` knows and ``before`` did not (for metrics).

    Attempts are compared reconciled and by every name they may have had (their key
    and ``startedAt:<ms>``), so an attempt first seen without its ARN and later with it
    is not new the second time.
    """
    known = {alias for a in (before.preempted() if before else ()) for alias in attempt_aliases(a)}
    return sorted(a.key for a in after.preempted() if not known.intersection(attempt_aliases(a)))
