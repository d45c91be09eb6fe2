"""Read-only snapshots of the engine's state: one job (:class:`JobView`), one share's
quota use (:class:`ShareUsage`).

Times in seconds on the engine's clock, quantities in instances. Quota terms
(``limit``, ``used``, ``idle``, ``borrowed``) are the spec's
(``docs/simulator/spec.md``, "Semantics"; see :mod:`.quota`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from quotagov.scheduler.quota import ShareRuntime
from quotagov.scheduler.state import Job, JobStatus, Preemption


class JobView(NamedTuple):
    """A read-only snapshot of one job (a named tuple: cheap to make, one per job when a
    run's output is written).

    Times in seconds; ``remainingSeconds`` is the RUNNING work still needed as of
    ``engine.now`` (None: the job never completes by itself); ``runningSeconds`` the
    RUNNING time over all attempts and ``overheadSeconds`` the part of it spent on
    restart overhead (at most ``restartOverheadSeconds`` per restarted attempt);
    ``misconfigured`` is
    True when its share has no capacity limit for its instance type (it stays
    RUNNABLE and is never admitted, as AWS holds such jobs). ``status`` is
    ``UNSCHEDULABLE`` for a job marked as one that can never be admitted
    (:meth:`~.engine.Engine.mark_unschedulable`), ``statusReason`` then says why.
    ``waitSeconds`` lists its RUNNABLE stretches (every wait, after preemptions too): the
    closed ones in the order they ended, then the open one counted up to ``engine.now``.
    """

    jobName: str
    status: JobStatus | Literal["UNSCHEDULABLE"]
    quotaShareName: str
    instanceType: str
    instanceCount: int
    schedulingPriority: int
    submittedAt: float
    runSeconds: float | None
    attempts: int
    preemptions: tuple[Preemption, ...]
    lostSeconds: float
    firstStartedAt: float | None
    stoppedAt: float | None
    statusReason: str | None
    startedAt: float | None
    runningSince: float | None
    remainingSeconds: float | None
    runningSeconds: float
    overheadSeconds: float
    misconfigured: bool
    waitSeconds: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class ShareUsage:
    """One share's quota use of one instance type, in instances."""

    instanceType: str
    limit: int
    used: int
    idle: int
    borrowed: int


_new_view = tuple.__new__


def job_view(job: Job, share: ShareRuntime, now: float) -> JobView:
    """The snapshot of ``job`` (of ``share``) at time ``now``, counting its attempt so far.

    A RUNNABLE job marked unschedulable reads as ``UNSCHEDULABLE``, with its reason as
    ``statusReason``.
    """
    unschedulable = job.unschedulable is not None and job.status == "RUNNABLE"
    remaining = job.remaining
    running = job.running_seconds
    overhead = job.overhead_seconds
    if job.status == "RUNNING" and job.running_since is not None:
        in_attempt = now - job.running_since
        running += in_attempt
        overhead += min(job.pending_overhead, in_attempt)
        if remaining is not None:
            remaining = remaining - in_attempt
    waits = job.waits
    if job.runnable_since is not None:
        waits = (*waits, max(0.0, now - job.runnable_since))
    preemptions = job.preemptions
    # positional, in JobView's field order (the named tuple's keyword constructor costs
    # several times more, and one view per job is made when a run's output is written)
    return _new_view(
        JobView,
        (
            job.name,
            "UNSCHEDULABLE" if unschedulable else job.status,
            job.share,
            job.instance_type,
            job.count,
            job.priority,
            job.submitted_at,
            job.spec.runSeconds,
            job.attempts,
            preemptions,
            job.lost_seconds,
            job.first_started_at,
            job.stopped_at,
            job.unschedulable if unschedulable else job.status_reason,
            job.started_at,
            job.running_since,
            remaining,
            running,
            overhead,
            job.instance_type not in share.limits,
            waits,
        ),
    )


def share_usage(share: ShareRuntime) -> dict[str, ShareUsage]:
    """The share's use per instance type: the types it has a limit for or holds."""
    types = sorted(set(share.limits) | {u for u, n in share.used.items() if n})
    return {
        u: ShareUsage(u, share.limit(u), share.used.get(u, 0), share.idle(u), share.borrowed(u))
        for u in types
    }
