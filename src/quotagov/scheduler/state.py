"""Mutable run-time records of the local scheduler: service jobs, transitions, preemptions.

Job states and transition reasons are the scenario format's
(``../shared/spec/scenario-format.md``, "Semantics" and "Output").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from quotagov.batch_semantics import HOLDING_STATUSES as HOLDING_STATES
from quotagov.batch_semantics import TERMINAL_STATUSES as TERMINAL_STATES
from quotagov.batch_semantics import JobStatus, PreemptionKind
from quotagov.scheduler.models import JobSpec

__all__ = ["HOLDING_STATES", "TERMINAL_STATES", "JobStatus", "PreemptionKind"]


# Transition reasons (spec "Output": reason says why).
REASON_SUBMITTED = "SUBMITTED"
REASON_WITHIN_QUOTA = "WITHIN_QUOTA"
REASON_BORROWED = "BORROWED"
REASON_STARTUP = "STARTUP"
REASON_STARTUP_COMPLETE = "STARTUP_COMPLETE"
REASON_COMPLETED = "COMPLETED"
REASON_PREEMPTED = {"CROSS_SHARE": "PREEMPTED_CROSS_SHARE", "IN_SHARE": "PREEMPTED_IN_SHARE"}
REASON_RETRIES_EXHAUSTED = "RETRIES_EXHAUSTED"
REASON_TERMINATED = "TERMINATED"
REASON_SHARE_DISABLED = "SHARE_DISABLED"


@dataclass(frozen=True, slots=True)
class Preemption:
    """One preemption of a job: when, which kind, for which job, and the work it lost.

    ``savedSeconds`` is the RUNNING time kept by the last checkpoint; ``lostSeconds``
    the RUNNING time of the attempt that was not saved (seconds, per instance).
    """

    at: float
    kind: PreemptionKind
    forJob: str
    lostSeconds: float
    savedSeconds: float


@dataclass(frozen=True, slots=True)
class Transition:
    """A status change of one job.

    Attributes:
        at: time in seconds.
        jobName: the job.
        from_: previous status (``from`` in :meth:`to_dict`).
        to: new status.
        reason: why (``WITHIN_QUOTA``, ``BORROWED``, ``PREEMPTED_CROSS_SHARE``, ...).
        kind: for a preemption, ``CROSS_SHARE`` or ``IN_SHARE``; else None.
        forJob: for a preemption, the job it made room for; else None.
        lostSeconds: for a preemption, the RUNNING seconds lost; else None.
    """

    at: float
    jobName: str
    from_: JobStatus
    to: JobStatus
    reason: str
    kind: PreemptionKind | None = None
    forJob: str | None = None
    lostSeconds: float | None = None

    def to_dict(self) -> dict[str, object]:
        """The spec's transition record ``{at, jobName, from, to, reason}``."""
        return {
            "at": self.at,
            "jobName": self.jobName,
            "from": self.from_,
            "to": self.to,
            "reason": self.reason,
        }


@dataclass(slots=True, eq=False)
class Job:
    """The scheduler's record of one service job (internal; read it through ``JobView``).

    ``remaining`` is the RUNNING work still needed (None: never completes);
    ``order`` the input position used for tie-breaks; ``start_seq`` the global start
    sequence number of the current attempt (later in a pass = larger); ``name``,
    ``share``, ``instance_type`` and ``count`` copy the spec's ``jobName``,
    ``quotaShareName``, ``instanceType`` and ``instanceCount``; ``failed_epoch`` and
    ``failed_stamp`` memoize the last failed attempt to start (see :mod:`.cycle`);
    ``unschedulable`` says why the job can never be admitted, when it was marked so
    (it then never heads its share).
    """

    spec: JobSpec
    order: int
    submitted_at: float
    priority: int
    remaining: float | None
    status: JobStatus = "SUBMITTED"
    attempts: int = 0
    preemptions: list[Preemption] = field(default_factory=list)
    first_started_at: float | None = None
    stopped_at: float | None = None
    status_reason: str | None = None
    started_at: float | None = None
    running_since: float | None = None
    start_seq: int = 0
    queue_token: int = 0
    completion_token: int = 0
    running_seconds: float = 0.0
    overhead_seconds: float = 0.0
    pending_overhead: float = 0.0
    borrowed_start: bool = False
    failed_epoch: int = -1
    failed_stamp: int = -1
    unschedulable: str | None = None
    name: str = field(init=False)
    share: str = field(init=False)
    instance_type: str = field(init=False)
    count: int = field(init=False)

    def __post_init__(self) -> None:
        # Copies of the spec's fields the scheduling pass reads most (plain attributes).
        self.name = self.spec.jobName
        self.share = self.spec.quotaShareName
        self.instance_type = self.spec.instanceType
        self.count = self.spec.instanceCount

    @property
    def lost_seconds(self) -> float:
        """Sum of the ``lostSeconds`` of its preemptions."""
        return sum(p.lostSeconds for p in self.preemptions)
