"""What approving an escalation would do: the result shape of the impact preview.

Kept apart from the computation (:mod:`quotagov.governance.escalations.preview`) so the
records, the Slack message builders and the DynamoDB adapter can use it without
importing the scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ImpactOutcome(StrEnum):
    """The kinds of effect a priority raise can have at the moment it is applied.

    - ``PREEMPTS``: the job starts at once by preempting running jobs (in-share
      preemption, possibly with cross-share reclaim of borrowed instances).
    - ``STARTS``: the job starts at once without preempting anything.
    - ``MOVES_FORWARD``: the job stays RUNNABLE but moves up its share's queue.
    - ``NO_CHANGE``: nothing changes until capacity frees up (already at the front,
      or no lower-priority job to overtake or preempt).
    - ``ALREADY_RUNNING``: the job already holds its instances; a higher priority only
      makes it a less likely victim of in-share preemption.
    """

    PREEMPTS = "PREEMPTS"
    STARTS = "STARTS"
    MOVES_FORWARD = "MOVES_FORWARD"
    NO_CHANGE = "NO_CHANGE"
    ALREADY_RUNNING = "ALREADY_RUNNING"


@dataclass(frozen=True)
class PreemptedJob:
    """A running job that approval would preempt.

    Attributes:
        job_id: Batch service job id.
        job_name: Batch job name.
        quota_share_name: the victim's quota share.
        kind: ``IN_SHARE`` or ``CROSS_SHARE`` (docs/simulator/spec.md, "Semantics").
        unsaved_seconds: work since its last checkpoint that preemption would lose
            (seconds; the whole attempt when the job does not checkpoint).
    """

    job_id: str
    job_name: str
    quota_share_name: str
    kind: str
    unsaved_seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (field names in the API's camelCase)."""
        return {
            "jobId": self.job_id,
            "jobName": self.job_name,
            "quotaShareName": self.quota_share_name,
            "kind": self.kind,
            "unsavedSeconds": self.unsaved_seconds,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PreemptedJob:
        """Inverse of :meth:`to_dict`."""
        return cls(
            job_id=str(data["jobId"]),
            job_name=str(data["jobName"]),
            quota_share_name=str(data["quotaShareName"]),
            kind=str(data["kind"]),
            unsaved_seconds=float(data["unsavedSeconds"]),
        )


@dataclass(frozen=True)
class ImpactPreview:
    """What approval would do, computed when the request is made.

    Attributes:
        outcome: see :class:`ImpactOutcome`.
        preempted: the jobs approval would preempt (empty unless ``PREEMPTS``).
        position_before: 1-based place of the job in its share's RUNNABLE order now
            (None when it is not RUNNABLE).
        position_after: the same place after the raise (None when it would start).
        computed_at: when it was computed, epoch seconds (None for older records).
        summary: one sentence for people, e.g. "Approval preempts bg-1 (300 s of
            unsaved work)."
    """

    outcome: ImpactOutcome
    summary: str
    preempted: tuple[PreemptedJob, ...] = field(default_factory=tuple)
    position_before: int | None = None
    position_after: int | None = None
    computed_at: float | None = None

    @property
    def would_preempt(self) -> bool:
        """Whether approval stops somebody's running job."""
        return bool(self.preempted)

    @property
    def unsaved_seconds(self) -> float:
        """Total unsaved work of the jobs it would preempt (seconds)."""
        return sum(job.unsaved_seconds for job in self.preempted)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, as stored on the escalation record and returned by the API."""
        return {
            "outcome": self.outcome.value,
            "summary": self.summary,
            "preempted": [job.to_dict() for job in self.preempted],
            "positionBefore": self.position_before,
            "positionAfter": self.position_after,
            "computedAt": self.computed_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImpactPreview:
        """Inverse of :meth:`to_dict`."""

        def _int(value: Any) -> int | None:
            return None if value is None else int(value)

        return cls(
            outcome=ImpactOutcome(str(data["outcome"])),
            summary=str(data["summary"]),
            preempted=tuple(PreemptedJob.from_dict(j) for j in data.get("preempted") or []),
            position_before=_int(data.get("positionBefore")),
            position_after=_int(data.get("positionAfter")),
            computed_at=None if data.get("computedAt") is None else float(data["computedAt"]),
        )
