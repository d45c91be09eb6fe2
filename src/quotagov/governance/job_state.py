"""Folding ``Batch Service Job State Change`` events into a job's tracked state.

Pure Python, no AWS imports. The rules come from the reference facts on service jobs
(``aws-and-slack-facts.md`` §3.1 status mapping, §1.5 preemption history, §4.1-4.2
events): EventBridge delivers each event at least once and in no guaranteed order, so
the tracked state is a *join* of every event seen:

* :func:`fold` is commutative, associative and idempotent: folding the same events in
  any order, with any duplicates, gives the same :class:`JobTracking`. That is what
  makes "never move backwards" and "never count a preemption twice" hold by
  construction instead of by bookkeeping of which events were seen.
* The status shown is the one of the most advanced event, by :func:`progress_key`:
  terminal first, then the number of finished attempts, then the number of started
  attempts, then the rank of the status inside one attempt (RUNNABLE < SCHEDULED <
  STARTING < RUNNING). A RUNNABLE that arrives after SUCCEEDED changes nothing; a
  RUNNABLE that follows a preemption (one more finished attempt) does advance.
* Attempts are keyed by their SageMaker ``TrainingJobArn`` (``serviceResourceId``),
  or by ``startedAt`` when an attempt carries no ARN, and merged field by field. The
  tracked maps keep every view (a plain union, so the fold stays order-free); what is
  read from them is *reconciled* (:func:`reconcile_attempts`): an attempt without an
  ARN whose ``startedAt`` equals that of an attempt with an ARN is that attempt, so one
  attempt reported both ways counts once.
* Preemptions are derived from ``preemptionSummary``: the count is Batch's own
  ``preemptedAttemptCount`` (the largest seen; never a count of events) whenever an
  event carried one, else the number of reconciled preempted attempts; the preempted
  attempts are the union of every ``recentPreemptedAttempts`` window seen (AWS keeps
  only a sliding window of recent ones, size not documented).

:func:`summarize` turns the facts into what the job record shows: waiting and running
time, each preemption's run time and estimated lost work, and the time from
submission to first start.

Times are epoch milliseconds in events and facts (as in the Batch API) and seconds in
summaries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from quotagov.batch_semantics import (
    STATUS_RANK,
    TERMINAL_STATUSES,
    lost_seconds,
)

_T = TypeVar("_T", int, float, str)


class UnknownStatusError(ValueError):
    """An event's ``detail.status`` is not one of :data:`SERVICE_JOB_STATUSES`."""


@dataclass(frozen=True)
class Attempt:
    """One attempt of a service job: one SageMaker training job.

    Attributes:
        key: the ``TrainingJobArn``, or ``"startedAt:<ms>"`` when no ARN was given.
        training_job_arn: ``serviceResourceId.value`` when its ``name`` is
            ``TrainingJobArn``.
        started_at_ms / stopped_at_ms: epoch milliseconds, None when not known (yet).
        status_reason: the attempt's ``statusReason`` (text not documented by AWS;
            kept for people, never interpreted).
    """

    key: str
    training_job_arn: str | None = None
    started_at_ms: int | None = None
    stopped_at_ms: int | None = None
    status_reason: str | None = None

    def merge(self, other: Attempt) -> Attempt:
        """Join two views of the same attempt: earliest start, latest stop, any reason."""
        return Attempt(
            key=self.key,
            training_job_arn=_max_opt(self.training_job_arn, other.training_job_arn),
            started_at_ms=_min_opt(self.started_at_ms, other.started_at_ms),
            stopped_at_ms=_max_opt(self.stopped_at_ms, other.stopped_at_ms),
            status_reason=_max_opt(self.status_reason, other.status_reason),
        )

    def to_item(self) -> dict[str, Any]:
        """A JSON/DynamoDB-friendly dict (None fields left out)."""
        out: dict[str, Any] = {"key": self.key}
        if self.training_job_arn is not None:
            out["trainingJobArn"] = self.training_job_arn
        if self.started_at_ms is not None:
            out["startedAt"] = self.started_at_ms
        if self.stopped_at_ms is not None:
            out["stoppedAt"] = self.stopped_at_ms
        if self.status_reason is not None:
            out["statusReason"] = self.status_reason
        return out

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Attempt:
        """Inverse of :meth:`to_item`."""
        return cls(
            key=str(item["key"]),
            training_job_arn=_opt_str(item.get("trainingJobArn")),
            started_at_ms=_opt_int(item.get("startedAt")),
            stopped_at_ms=_opt_int(item.get("stoppedAt")),
            status_reason=_opt_str(item.get("statusReason")),
        )

    @classmethod
    def from_api(cls, raw: Mapping[str, Any]) -> Attempt | None:
        """Build from an API attempt ``{serviceResourceId{name, value}, startedAt, ...}``.

        Returns None when the attempt has neither an ARN nor a ``startedAt`` (nothing to
        key it by).
        """
        resource = raw.get("serviceResourceId") or {}
        arn = resource.get("value") if isinstance(resource, Mapping) else None
        arn = str(arn) if arn else None
        started = _opt_int(raw.get("startedAt"))
        if arn is None and started is None:
            return None
        return cls(
            key=arn if arn is not None else f"startedAt:{started}",
            training_job_arn=arn,
            started_at_ms=started,
            stopped_at_ms=_opt_int(raw.get("stoppedAt")),
            status_reason=_opt_str(raw.get("statusReason")),
        )


@dataclass(frozen=True)
class StateEvent:
    """The facts one ``Batch Service Job State Change`` event carries.

    Build it with :meth:`from_detail`. Times are epoch milliseconds.

    Attributes:
        event_id / event_time_ms: the EventBridge envelope's ``id`` and ``time``.
        job_id: ``detail.jobId`` (the Batch service job id).
        status: ``detail.status``, one of :data:`SERVICE_JOB_STATUSES`.
        preempted_attempt_count: ``preemptionSummary.preemptedAttemptCount`` or None
            when the event has no ``preemptionSummary`` (reference §4.1: may be absent).
        recent_preempted_attempts: ``preemptionSummary.recentPreemptedAttempts``.
        instance_count: sum of ``capacityUsage[].quantity`` when present.
    """

    event_id: str
    event_time_ms: int
    job_id: str
    status: str
    status_reason: str | None = None
    job_queue: str | None = None
    job_name: str | None = None
    quota_share_name: str | None = None
    created_at_ms: int | None = None
    started_at_ms: int | None = None
    stopped_at_ms: int | None = None
    attempts: tuple[Attempt, ...] = ()
    preempted_attempt_count: int | None = None
    recent_preempted_attempts: tuple[Attempt, ...] = ()
    instance_count: float | None = None

    @classmethod
    def from_detail(
        cls, detail: Mapping[str, Any], *, event_id: str, event_time_ms: int
    ) -> StateEvent:
        """Build from an event's ``detail`` (the ``DescribeServiceJob`` shape, §4.1).

        Unknown fields are ignored; optional fields may be missing.

        Raises:
            ValueError: ``detail.jobId`` missing or empty.
            UnknownStatusError: ``detail.status`` not a service-job status.
        """
        job_id = detail.get("jobId")
        if not job_id:
            raise ValueError("detail.jobId: missing or empty")
        status = detail.get("status")
        if status not in STATUS_RANK:
            raise UnknownStatusError(f"detail.status: {status!r} is not a service-job status")
        attempts = tuple(
            a for a in (Attempt.from_api(raw) for raw in detail.get("attempts") or ()) if a
        )
        summary = detail.get("preemptionSummary") or {}
        recent = tuple(
            a
            for a in (Attempt.from_api(raw) for raw in summary.get("recentPreemptedAttempts") or ())
            if a
        )
        usage = detail.get("capacityUsage") or ()
        quantities = [float(u["quantity"]) for u in usage if u.get("quantity") is not None]
        return cls(
            event_id=event_id,
            event_time_ms=event_time_ms,
            job_id=str(job_id),
            status=str(status),
            status_reason=_opt_str(detail.get("statusReason")),
            job_queue=_opt_str(detail.get("jobQueue")),
            job_name=_opt_str(detail.get("jobName")),
            quota_share_name=_opt_str(detail.get("quotaShareName")),
            created_at_ms=_opt_int(detail.get("createdAt")),
            started_at_ms=_opt_int(detail.get("startedAt")),
            stopped_at_ms=_opt_int(detail.get("stoppedAt")),
            attempts=attempts,
            preempted_attempt_count=_opt_int(summary.get("preemptedAttemptCount")),
            recent_preempted_attempts=recent,
            instance_count=sum(quantities) if quantities else None,
        )


ProgressKey = tuple[int, int, int, int, int, str]


def progress_key(event: StateEvent) -> ProgressKey:
    """How far along its life the job was when ``event`` was emitted.

    ``(terminal, finished attempts, started attempts, status rank, event time, event id)``,
    compared as a tuple. Finished attempts are the attempts with a ``stoppedAt`` or,
    when larger, ``preemptedAttemptCount`` (a preempted attempt is finished even when
    the event omits ``attempts``). The last two members only break ties between
    events at the same point, so that the winner does not depend on arrival order.
    """
    finished = sum(1 for a in event.attempts if a.stopped_at_ms is not None)
    finished = max(finished, event.preempted_attempt_count or 0)
    started = sum(1 for a in event.attempts if a.started_at_ms is not None)
    terminal = 1 if event.status in TERMINAL_STATUSES else 0
    return (
        terminal,
        finished,
        started,
        STATUS_RANK[event.status],
        event.event_time_ms,
        event.event_id,
    )


@dataclass(frozen=True)
class JobTracking:
    """Every fact known about one service job: the join of the events folded in.

    Attributes:
        batch_job_id: the Batch service job id.
        status / status_reason / status_key: from the most advanced event
            (:func:`progress_key`).
        created_at_ms: ``detail.createdAt`` (earliest seen).
        started_at_ms: ``detail.startedAt`` (earliest seen; the job's first start).
        stopped_at_ms: ``detail.stoppedAt`` (latest seen; set on terminal statuses).
        last_event_time_ms: the latest envelope ``time`` seen.
        quota_share_name / job_queue / job_name: as reported by Batch.
        attempts: by attempt key.
        preempted_attempts: the preempted attempts seen in any
            ``recentPreemptedAttempts`` window, by attempt key (raw views; read them
            through :meth:`preempted`).
        preempted_attempt_count: the largest ``preemptedAttemptCount`` seen, None when
            no event carried one.
        instance_count: the largest ``capacityUsage`` total seen, if any.
    """

    batch_job_id: str
    status: str
    status_reason: str | None
    status_key: ProgressKey
    created_at_ms: int | None = None
    started_at_ms: int | None = None
    stopped_at_ms: int | None = None
    last_event_time_ms: int = 0
    quota_share_name: str | None = None
    job_queue: str | None = None
    job_name: str | None = None
    attempts: Mapping[str, Attempt] = field(default_factory=dict)
    preempted_attempts: Mapping[str, Attempt] = field(default_factory=dict)
    preempted_attempt_count: int | None = None
    instance_count: float | None = None

    @property
    def is_terminal(self) -> bool:
        """True once the job SUCCEEDED or FAILED."""
        return self.status in TERMINAL_STATUSES

    @property
    def preemption_count(self) -> int:
        """Preemptions of the job (>= 0).

        The larger of Batch's ``preemptedAttemptCount`` (largest seen) and the number of
        reconciled preempted attempts known: both only grow as events arrive, in any
        order, and an attempt reported with and without its ARN is reconciled into one,
        so neither counts a preemption twice.
        """
        return max(self.preempted_attempt_count or 0, len(self.preempted()))

    def known_attempts(self) -> dict[str, Attempt]:
        """``attempts`` reconciled (:func:`reconcile_attempts`), by attempt key."""
        return reconcile_attempts(self.attempts)

    def preempted(self) -> list[Attempt]:
        """The known preempted attempts, reconciled, completed from ``attempts``.

        An ARN-less preempted attempt whose ``startedAt`` matches an attempt with an
        ARN (in either map) is that attempt. Oldest stop first.
        """
        known = self.known_attempts()
        out = []
        for key, attempt in reconcile_attempts(self.preempted_attempts, known.values()).items():
            seen = known.get(key)
            out.append(attempt.merge(seen) if seen else attempt)
        return sorted(out, key=lambda a: (a.stopped_at_ms or 0, a.started_at_ms or 0, a.key))

    def to_item(self) -> dict[str, Any]:
        """A JSON/DynamoDB-friendly dict; :meth:`from_item` reads it back unchanged."""
        out: dict[str, Any] = {
            "batchJobId": self.batch_job_id,
            "status": self.status,
            "statusKey": list(self.status_key),
            "lastEventTime": self.last_event_time_ms,
            "attempts": [a.to_item() for a in sorted(self.attempts.values(), key=_by_key)],
            "preemptedAttempts": [
                a.to_item() for a in sorted(self.preempted_attempts.values(), key=_by_key)
            ],
        }
        optional = {
            "preemptedAttemptCount": self.preempted_attempt_count,
            "statusReason": self.status_reason,
            "createdAt": self.created_at_ms,
            "startedAt": self.started_at_ms,
            "stoppedAt": self.stopped_at_ms,
            "quotaShareName": self.quota_share_name,
            "jobQueue": self.job_queue,
            "jobName": self.job_name,
            "instanceCount": self.instance_count,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> JobTracking:
        """Inverse of :meth:`to_item` (numbers may come back as ``Decimal``)."""
        key = item["statusKey"]
        status_key: ProgressKey = (
            int(key[0]),
            int(key[1]),
            int(key[2]),
            int(key[3]),
            int(key[4]),
            str(key[5]),
        )
        instance_count = item.get("instanceCount")
        return cls(
            batch_job_id=str(item["batchJobId"]),
            status=str(item["status"]),
            status_reason=_opt_str(item.get("statusReason")),
            status_key=status_key,
            created_at_ms=_opt_int(item.get("createdAt")),
            started_at_ms=_opt_int(item.get("startedAt")),
            stopped_at_ms=_opt_int(item.get("stoppedAt")),
            last_event_time_ms=int(item.get("lastEventTime", 0)),
            quota_share_name=_opt_str(item.get("quotaShareName")),
            job_queue=_opt_str(item.get("jobQueue")),
            job_name=_opt_str(item.get("jobName")),
            attempts={a.key: a for a in (Attempt.from_item(x) for x in item.get("attempts") or ())},
            preempted_attempts={
                a.key: a
                for a in (Attempt.from_item(x) for x in item.get("preemptedAttempts") or ())
            },
            preempted_attempt_count=_opt_int(item.get("preemptedAttemptCount")),
            instance_count=float(instance_count) if instance_count is not None else None,
        )


def fold(tracking: JobTracking | None, event: StateEvent) -> JobTracking:
    """Fold one event into a job's tracked state and return the new state.

    Commutative, associative and idempotent (see the module docstring), so duplicates
    and late events never move the state backwards nor count a preemption twice.

    Raises:
        ValueError: when ``event`` is about another service job than ``tracking``.
    """
    key = progress_key(event)
    incoming = JobTracking(
        batch_job_id=event.job_id,
        status=event.status,
        status_reason=event.status_reason,
        status_key=key,
        created_at_ms=event.created_at_ms,
        started_at_ms=event.started_at_ms,
        stopped_at_ms=event.stopped_at_ms,
        last_event_time_ms=event.event_time_ms,
        quota_share_name=event.quota_share_name,
        job_queue=event.job_queue,
        job_name=event.job_name,
        attempts=_merge_attempts({}, event.attempts),
        preempted_attempts=_merge_attempts({}, event.recent_preempted_attempts),
        preempted_attempt_count=event.preempted_attempt_count,
        instance_count=event.instance_count,
    )
    if tracking is None:
        return incoming
    return join(tracking, incoming)


def join(a: JobTracking, b: JobTracking) -> JobTracking:
    """The least state that knows everything ``a`` and ``b`` know (order-free).

    Raises:
        ValueError: when ``a`` and ``b`` track different service jobs.
    """
    if a.batch_job_id != b.batch_job_id:
        raise ValueError(f"cannot join states of jobs {a.batch_job_id!r} and {b.batch_job_id!r}")
    ahead = a if a.status_key >= b.status_key else b
    return replace(
        ahead,
        created_at_ms=_min_opt(a.created_at_ms, b.created_at_ms),
        started_at_ms=_min_opt(a.started_at_ms, b.started_at_ms),
        stopped_at_ms=_max_opt(a.stopped_at_ms, b.stopped_at_ms),
        last_event_time_ms=max(a.last_event_time_ms, b.last_event_time_ms),
        quota_share_name=_max_opt(a.quota_share_name, b.quota_share_name),
        job_queue=_max_opt(a.job_queue, b.job_queue),
        job_name=_max_opt(a.job_name, b.job_name),
        attempts=_merge_attempts(a.attempts, b.attempts.values()),
        preempted_attempts=_merge_attempts(a.preempted_attempts, b.preempted_attempts.values()),
        preempted_attempt_count=_max_opt(a.preempted_attempt_count, b.preempted_attempt_count),
        instance_count=_max_opt(a.instance_count, b.instance_count),
    )


def fold_all(events: Iterable[StateEvent], tracking: JobTracking | None = None) -> JobTracking:
    """Fold ``events`` in the given order.

    Raises:
        ValueError: when ``events`` is empty and ``tracking`` is None.
    """
    for event in events:
        tracking = fold(tracking, event)
    if tracking is None:
        raise ValueError("fold_all: no events")
    return tracking


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
            checkpointing (issue 5; assumes checkpoints every interval from the start
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
    documented, §1.5), so the kind is inferred from the share's configuration:

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
    as_of = tracking.last_event_time_ms
    if tracking.is_terminal and tracking.stopped_at_ms is not None:
        as_of = max(tracking.stopped_at_ms, 0)
    attempts = tracking.known_attempts()
    running_ms = 0
    for attempt in attempts.values():
        if attempt.started_at_ms is None:
            continue
        stop = attempt.stopped_at_ms if attempt.stopped_at_ms is not None else as_of
        running_ms += max(0, min(stop, as_of) - attempt.started_at_ms)
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
    preemptions = []
    for attempt in tracking.preempted():
        run: float | None = None
        lost: float | None = None
        lost_instance: float | None = None
        if attempt.stopped_at_ms is not None:
            # an attempt preempted before it reached RUNNING has no startedAt: it ran 0 s
            start = (
                attempt.started_at_ms
                if attempt.started_at_ms is not None
                else attempt.stopped_at_ms
            )
            run = max(0, attempt.stopped_at_ms - start) / 1000
            lost = lost_seconds(run, checkpoint_interval_seconds)
            lost_instance = lost * count
        preemptions.append(
            PreemptionRecord(
                training_job_arn=attempt.training_job_arn,
                started_at_ms=attempt.started_at_ms,
                stopped_at_ms=attempt.stopped_at_ms,
                run_seconds=run,
                lost_work_seconds=lost,
                lost_instance_seconds=lost_instance,
                kind=kind,
            )
        )
    return JobStateSummary(
        status=tracking.status,
        status_reason=tracking.status_reason,
        attempt_count=len(attempts),
        preemption_count=tracking.preemption_count,
        preemptions=tuple(preemptions),
        unattributed_preemptions=max(0, tracking.preemption_count - len(preemptions)),
        waiting_seconds=waiting,
        running_seconds=running_ms / 1000,
        lost_instance_seconds=sum(p.lost_instance_seconds or 0.0 for p in preemptions),
        first_started_at_ms=first_start,
        submission_to_first_start_seconds=to_first_start,
        as_of_ms=as_of,
    )


def new_preemptions(before: JobTracking | None, after: JobTracking) -> list[str]:
    """Keys of preempted attempts ``after`` knows and ``before`` did not (for metrics).

    Attempts are compared reconciled and by every name they may have had (their key
    and ``startedAt:<ms>``), so an attempt first seen without its ARN and later with it
    is not new the second time.
    """
    known = {alias for a in (before.preempted() if before else ()) for alias in _aliases(a)}
    return sorted(a.key for a in after.preempted() if not known.intersection(_aliases(a)))


def reconcile_attempts(
    attempts: Mapping[str, Attempt], with_arns: Iterable[Attempt] = ()
) -> dict[str, Attempt]:
    """``attempts`` with each ARN-less view joined to the attempt it is a view of.

    An attempt without ARN (key ``startedAt:<ms>``) whose ``started_at_ms`` equals that
    of exactly one attempt with an ARN (in ``attempts`` or ``with_arns``) is merged into
    that attempt, under the ARN key; if several attempts with an ARN share that start,
    it is one of them and is dropped; with no match it stays as it is. A function of
    the map's contents only, so the result does not depend on the order events came in.

    Args:
        attempts: attempt key -> attempt (views as tracked).
        with_arns: more attempts that may carry the ARN (e.g. ``JobTracking.attempts``
            when reconciling the preempted ones).

    Returns:
        attempt key -> attempt, no ARN-less view of a known ARN attempt left.
    """
    by_arn: dict[str, Attempt] = {a.key: a for a in with_arns if a.training_job_arn is not None}
    by_arn.update({k: a for k, a in attempts.items() if a.training_job_arn is not None})
    starts: dict[int, set[str]] = {}
    for key, attempt in by_arn.items():
        if attempt.started_at_ms is not None:
            starts.setdefault(attempt.started_at_ms, set()).add(key)
    out = {k: a for k, a in attempts.items() if a.training_job_arn is not None}
    for key, attempt in sorted(attempts.items()):
        if attempt.training_job_arn is not None:
            continue
        start = attempt.started_at_ms
        matches = starts.get(start, set()) if start is not None else set()
        if not matches:
            out[key] = attempt
        elif len(matches) == 1:
            (arn,) = matches
            base = out.get(arn) or by_arn[arn]
            out[arn] = base.merge(attempt)
    return out


def _aliases(attempt: Attempt) -> set[str]:
    names = {attempt.key}
    if attempt.started_at_ms is not None:
        names.add(f"startedAt:{attempt.started_at_ms}")
    return names


def _merge_attempts(base: Mapping[str, Attempt], more: Iterable[Attempt]) -> dict[str, Attempt]:
    out = dict(base)
    for attempt in more:
        seen = out.get(attempt.key)
        out[attempt.key] = seen.merge(attempt) if seen else attempt
    return out


def _by_key(attempt: Attempt) -> str:
    return attempt.key


def _min_opt(a: _T | None, b: _T | None) -> _T | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _max_opt(a: _T | None, b: _T | None) -> _T | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)
