"""Folding ``Batch Service Job State Change`` events into a job's tracked state.

The package: :mod:`.state_event` (one event, typed), :mod:`.fold` (this module: the
order-free join), :mod:`.summary` (what the record shows).

Pure Python, no AWS imports. The rules come from AWS's pages on service jobs (AWS
Batch User Guide, "Mapping AWS Batch service job status to SageMaker AI status",
https://docs.aws.amazon.com/batch/latest/userguide/service-job-status.html, and
"Service job state change events",
https://docs.aws.amazon.com/batch/latest/userguide/service-job-events.html;
AWS Batch API Reference, "ServiceJobPreemptionSummary",
https://docs.aws.amazon.com/batch/latest/APIReference/API_ServiceJobPreemptionSummary.html;
Amazon EventBridge, "Delivery level for AWS service events",
https://docs.aws.amazon.com/eventbridge/latest/ref/event-delivery-level.html):
EventBridge delivers each event at least once and in no guaranteed order, so the
tracked state is a *join* of every event seen:

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
from typing import Any

from quotagov.batch_semantics import (
    STATUS_RANK,
    TERMINAL_STATUSES,
)
from quotagov.governance.job_state.state_event import (
    Attempt,
    StateEvent,
    max_opt,
    min_opt,
    opt_int,
    opt_str,
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
            status_reason=opt_str(item.get("statusReason")),
            status_key=status_key,
            created_at_ms=opt_int(item.get("createdAt")),
            started_at_ms=opt_int(item.get("startedAt")),
            stopped_at_ms=opt_int(item.get("stoppedAt")),
            last_event_time_ms=int(item.get("lastEventTime", 0)),
            quota_share_name=opt_str(item.get("quotaShareName")),
            job_queue=opt_str(item.get("jobQueue")),
            job_name=opt_str(item.get("jobName")),
            attempts={a.key: a for a in (Attempt.from_item(x) for x in item.get("attempts") or ())},
            preempted_attempts={
                a.key: a
                for a in (Attempt.from_item(x) for x in item.get("preemptedAttempts") or ())
            },
            preempted_attempt_count=opt_int(item.get("preemptedAttemptCount")),
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
        created_at_ms=min_opt(a.created_at_ms, b.created_at_ms),
        started_at_ms=min_opt(a.started_at_ms, b.started_at_ms),
        stopped_at_ms=max_opt(a.stopped_at_ms, b.stopped_at_ms),
        last_event_time_ms=max(a.last_event_time_ms, b.last_event_time_ms),
        quota_share_name=max_opt(a.quota_share_name, b.quota_share_name),
        job_queue=max_opt(a.job_queue, b.job_queue),
        job_name=max_opt(a.job_name, b.job_name),
        attempts=_merge_attempts(a.attempts, b.attempts.values()),
        preempted_attempts=_merge_attempts(a.preempted_attempts, b.preempted_attempts.values()),
        preempted_attempt_count=max_opt(a.preempted_attempt_count, b.preempted_attempt_count),
        instance_count=max_opt(a.instance_count, b.instance_count),
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


def _merge_attempts(base: Mapping[str, Attempt], more: Iterable[Attempt]) -> dict[str, Attempt]:
    out = dict(base)
    for attempt in more:
        seen = out.get(attempt.key)
        out[attempt.key] = seen.merge(attempt) if seen else attempt
    return out


def _by_key(attempt: Attempt) -> str:
    return attempt.key
