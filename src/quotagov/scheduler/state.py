"""Mutable run-time records of the local scheduler: service jobs, transitions, preemptions.

Job states and transition reasons are the scenario format's
(``docs/simulator/spec.md``, "Semantics" and "Output").
"""

from __future__ import annotations

from typing import NamedTuple

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


class Preemption(NamedTuple):
    """One preemption of a job: when, which kind, for which job, and the work it lost.

    ``savedSeconds`` is the RUNNING time kept by the last checkpoint; ``lostSeconds``
    the RUNNING time of the attempt that was not saved (seconds, per instance).
    """

    at: float
    kind: PreemptionKind
    forJob: str
    lostSeconds: float
    savedSeconds: float


class Transition(NamedTuple):
    """A status change of one job (immutable).

    Attributes:
        at: time in seconds.
        jobName: the job.
        from_: previous status (``from`` in :meth:`to_dict`).
        to: new status.
        reason: why (``WITHIN_QUOTA``, ``BORROWED``, ``PREEMPTED_CROSS_SHARE``, ...).
        kind: for a preemption, ``CROSS_SHARE`` or ``IN_SHARE``; else None.
        forJob: for a preemption, the job it made room for; else None.
        lostSeconds: for a preemption, the RUNNING seconds lost; else None.

    A named tuple: millions are made in a large run, and a tuple is made several times
    faster than a frozen dataclass (``benchmarks/simulate_scale.py``).
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


class Job:
    """The scheduler's record of one service job (internal; read it through ``JobView``).

    Made for a registered ``spec`` at input position ``order`` (the tie-break "order in
    the input"). ``name``, ``share``, ``instance_type`` and ``count`` copy the spec's
    ``jobName``, ``quotaShareName``, ``instanceType`` and ``instanceCount``;
    ``submitted_at`` and ``priority`` start as its ``submittedAt`` and
    ``schedulingPriority``. ``remaining`` is the RUNNING work still needed (seconds;
    None: never completes); ``start_seq`` the global start sequence number of the
    current attempt (later in a pass = larger); ``plan_step`` is the first step by which
    it could start when last planned (``OWN_NONE``: none, by its share's own state), at
    epoch ``plan_epoch`` and its type's stamp ``plan_stamp`` (see :mod:`.memo`);
    ``unschedulable`` says
    why the job can never be admitted, when it was marked so (it then never heads its
    share). ``runnable_since`` is when its current RUNNABLE stretch began (None when it
    is not RUNNABLE) and ``waits`` the closed stretches, in seconds, in the order they
    ended (spec metrics: every wait counts). Times are on the engine's clock, seconds.

    A plain class with ``__slots__`` (no per-job dict, no list until a preemption):
    one exists per job of a run, a million in a large one.
    """

    __slots__ = (
        "attempts",
        "completion_token",
        "count",
        "first_started_at",
        "instance_type",
        "name",
        "order",
        "overhead_seconds",
        "pending_overhead",
        "plan_epoch",
        "plan_stamp",
        "plan_step",
        "preemptions",
        "priority",
        "queue_token",
        "remaining",
        "runnable_since",
        "running_seconds",
        "running_since",
        "share",
        "spec",
        "start_seq",
        "started_at",
        "status",
        "status_reason",
        "stopped_at",
        "submitted_at",
        "unschedulable",
        "waits",
    )

    def __init__(self, spec: JobSpec, order: int) -> None:
        self.spec = spec
        self.order = order
        self.name = spec.jobName
        self.share = spec.quotaShareName
        self.instance_type = spec.instanceType
        self.count = spec.instanceCount
        self.submitted_at: float = spec.submittedAt
        self.priority = spec.schedulingPriority
        self.remaining: float | None = spec.runSeconds
        self.status: JobStatus = "SUBMITTED"
        self.attempts = 0
        self.preemptions: tuple[Preemption, ...] = ()
        self.first_started_at: float | None = None
        self.stopped_at: float | None = None
        self.status_reason: str | None = None
        self.started_at: float | None = None
        self.running_since: float | None = None
        self.start_seq = 0
        self.queue_token = 0
        self.completion_token = 0
        self.running_seconds: float = 0.0
        self.overhead_seconds: float = 0.0
        self.pending_overhead: float = 0.0
        self.plan_epoch = -1
        self.plan_stamp = -1
        self.plan_step: int | None = None
        self.unschedulable: str | None = None
        self.runnable_since: float | None = None
        self.waits: tuple[float, ...] = ()

    def __repr__(self) -> str:
        return f"Job({self.name!r}, {self.status})"

    @property
    def lost_seconds(self) -> float:
        """Sum of the ``lostSeconds`` of its preemptions (0 without any)."""
        preemptions = self.preemptions
        return sum(p.lostSeconds for p in preemptions) if preemptions else 0
