"""The facts one ``Batch Service Job State Change`` event carries, parsed and typed.

:class:`StateEvent` is one event's ``detail`` (epoch milliseconds, as in the Batch API);
:class:`Attempt` one attempt in it (one SageMaker training job), keyed by its
``TrainingJobArn`` or, without one, by ``startedAt``. Statuses are
:data:`quotagov.batch_semantics.SERVICE_JOB_STATUSES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from quotagov.batch_semantics import STATUS_RANK


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
            training_job_arn=max_opt(self.training_job_arn, other.training_job_arn),
            started_at_ms=min_opt(self.started_at_ms, other.started_at_ms),
            stopped_at_ms=max_opt(self.stopped_at_ms, other.stopped_at_ms),
            status_reason=max_opt(self.status_reason, other.status_reason),
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
            training_job_arn=opt_str(item.get("trainingJobArn")),
            started_at_ms=opt_int(item.get("startedAt")),
            stopped_at_ms=opt_int(item.get("stoppedAt")),
            status_reason=opt_str(item.get("statusReason")),
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
        started = opt_int(raw.get("startedAt"))
        if arn is None and started is None:
            return None
        return cls(
            key=arn if arn is not None else f"startedAt:{started}",
            training_job_arn=arn,
            started_at_ms=started,
            stopped_at_ms=opt_int(raw.get("stoppedAt")),
            status_reason=opt_str(raw.get("statusReason")),
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
            when the event has no ``preemptionSummary`` (may be absent: AWS does not
            document which members an event carries).
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
        """Build from an event's ``detail`` (the ``DescribeServiceJob`` shape).

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
            status_reason=opt_str(detail.get("statusReason")),
            job_queue=opt_str(detail.get("jobQueue")),
            job_name=opt_str(detail.get("jobName")),
            quota_share_name=opt_str(detail.get("quotaShareName")),
            created_at_ms=opt_int(detail.get("createdAt")),
            started_at_ms=opt_int(detail.get("startedAt")),
            stopped_at_ms=opt_int(detail.get("stoppedAt")),
            attempts=attempts,
            preempted_attempt_count=opt_int(summary.get("preemptedAttemptCount")),
            recent_preempted_attempts=recent,
            instance_count=sum(quantities) if quantities else None,
        )


def opt_int(value: Any) -> int | None:
    """``int(value)``, or None for None."""
    return None if value is None else int(value)


def opt_str(value: Any) -> str | None:
    """``str(value)``, or None for None."""
    return None if value is None else str(value)


_T = TypeVar("_T", int, float, str)


def attempt_aliases(attempt: Attempt) -> set[str]:
    """Every key an attempt may be stored under: its own, and ``startedAt:<ms>``."""
    names = {attempt.key}
    if attempt.started_at_ms is not None:
        names.add(f"startedAt:{attempt.started_at_ms}")
    return names


def min_opt(a: _T | None, b: _T | None) -> _T | None:
    """The smaller of two optional values (None counts as absent)."""
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def max_opt(a: _T | None, b: _T | None) -> _T | None:
    """The larger of two optional values (None counts as absent)."""
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)
