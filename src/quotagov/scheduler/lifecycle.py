"""Service jobs' life cycle: their records and transitions, and the scheduling pass's actuator.

States and reasons (``docs/simulator/spec.md``, "Semantics" and "Output"):
SUBMITTED -> RUNNABLE (or FAILED ``SHARE_DISABLED`` when the share is DISABLED) ->
SCHEDULED -> STARTING -> RUNNING -> SUCCEEDED; a preempted job goes back to RUNNABLE
(or FAILED ``RETRIES_EXHAUSTED``, :mod:`quotagov.batch_semantics`); a terminated one becomes FAILED.
A started job holds its instances from SCHEDULED until it stops (:mod:`.quota`).

Every transition is stamped with the clock's ``now`` (seconds), kept until the engine
hands it back to the caller that caused it (:meth:`JobLifecycle.take`), and passed to
every listener as it happens.
"""

from __future__ import annotations

from collections.abc import Callable

from quotagov.batch_semantics import preemption_outcome, retries_exhausted
from quotagov.scheduler.admission import accepts_submissions
from quotagov.scheduler.errors import (
    DuplicateJobError,
    InvalidConfigError,
    UnknownJobError,
    UnknownShareError,
)
from quotagov.scheduler.memo import PassMemo
from quotagov.scheduler.models import JobSpec, Options
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.rules import job_faults
from quotagov.scheduler.state import (
    HOLDING_STATES,
    REASON_BORROWED,
    REASON_COMPLETED,
    REASON_PREEMPTED,
    REASON_RETRIES_EXHAUSTED,
    REASON_SHARE_DISABLED,
    REASON_STARTUP,
    REASON_STARTUP_COMPLETE,
    REASON_SUBMITTED,
    REASON_WITHIN_QUOTA,
    Job,
    JobStatus,
    Preemption,
    PreemptionKind,
    Transition,
)
from quotagov.scheduler.timeline import COMPLETION, STARTUP_END, Timeline

Listener = Callable[[Transition], None]

#: Makes a :class:`Transition` from its fields as one tuple (what the named tuple's
#: constructor does, without its keyword handling: millions are made in a large run).
_new_transition = tuple.__new__


class JobLifecycle:
    """Every job's record, and the transitions that move it.

    Implements the pass's :class:`~.cycle.Actuator` (:meth:`start`, :meth:`preempt`).

    Args:
        ledger: the quota ledger (instances are acquired and released through it).
        memo: the pass's memo (jobs enter and leave queues through it).
        timeline: the clock and the pending events (startup ends, completions).
        options: the engine's options (``startupSeconds``).
    """

    def __init__(
        self, ledger: QuotaLedger, memo: PassMemo, timeline: Timeline, options: Options
    ) -> None:
        self.ledger = ledger
        self.memo = memo
        self.timeline = timeline
        self.options = options
        #: Every job by ``jobName``, in registration order.
        self.jobs: dict[str, Job] = {}
        self.listeners: list[Listener] = []
        #: Whether transitions are kept for :meth:`take` (off for a run whose
        #: transitions only reach the listeners, :meth:`~.engine.Engine.run`).
        self.collecting = True
        self._buffer: list[Transition] = []
        self._order = 0
        self._start_seq = 0

    # -- records -----------------------------------------------------------------------

    def register(self, spec: JobSpec) -> Job:
        """A new job record (status SUBMITTED) for a valid ``spec``.

        Raises:
            UnknownShareError, DuplicateJobError, InvalidConfigError: see
                :meth:`~.engine.Engine.submit`.
        """
        if spec.quotaShareName not in self.ledger.shares:
            raise UnknownShareError(spec.quotaShareName)
        if spec.jobName in self.jobs:
            raise DuplicateJobError(spec.jobName)
        if job_faults(spec, ""):  # the path (the job's name) is written only for faults
            raise InvalidConfigError(job_faults(spec, f"job {spec.jobName!r}"))
        job = Job(spec, self._order)
        self._order += 1
        self.jobs[spec.jobName] = job
        return job

    def job(self, name: str) -> Job:
        """The job's record.

        Raises:
            UnknownJobError: no such job.
        """
        job = self.jobs.get(name)
        if job is None:
            raise UnknownJobError(name)
        return job

    def mark(self) -> int:
        """A mark in the transition record, for :meth:`take`."""
        return len(self._buffer)

    def take(self, mark: int) -> list[Transition]:
        """The transitions recorded since ``mark``, removed from the record."""
        out = self._buffer[mark:]
        del self._buffer[mark:]
        return out

    # -- outside the pass --------------------------------------------------------------

    def submit(self, job: Job) -> None:
        """The job is submitted at ``now``: RUNNABLE in its share's queue, or FAILED."""
        share = self.ledger.shares[job.share]
        if not accepts_submissions(share):
            self._finish(job, "FAILED", REASON_SHARE_DISABLED)
            return
        self._emit(job, "RUNNABLE", REASON_SUBMITTED)
        self.memo.enqueue_submitted(self.ledger, share, job)

    def terminate(self, job: Job, reason: str) -> None:
        """A job not finished becomes FAILED with ``reason``; a started one releases its
        instances (its running time is neither saved nor lost: it was not preempted)."""
        share = self.ledger.shares[job.share]
        if job.status == "RUNNABLE":
            self.memo.dequeue_terminated(share, job)
        elif job.status in HOLDING_STATES:
            self._end_attempt(job, share)
        self._finish(job, "FAILED", reason)

    def startup_ended(self, job: Job, token: int) -> bool:
        """Event: the attempt ``token`` ends its startup (ignored if it is over).

        Returns:
            Whether the event was live (the attempt is still starting).
        """
        if job.completion_token == token and job.status == "STARTING":
            self._enter_running(job)
            return True
        return False

    def complete(self, job: Job, token: int) -> bool:
        """Event: the attempt ``token`` has run its remaining work (ignored if it is over).

        Returns:
            Whether the event was live (the attempt was still running).
        """
        if job.completion_token == token and job.status == "RUNNING":
            share = self.ledger.shares[job.share]
            self._end_attempt(job, share)
            job.remaining = 0
            self._finish(job, "SUCCEEDED", REASON_COMPLETED)
            return True
        return False

    # -- the pass's actuator -----------------------------------------------------------

    def start(self, job: Job, share: ShareRuntime, borrowed: bool) -> None:
        """Start the head ``job`` (scheduling pass only): SCHEDULED, STARTING, maybe RUNNING."""
        now = self.timeline.now
        share.queue.pop(job)
        self.ledger.acquire(share, job, now)
        self._start_seq += 1
        job.start_seq = self._start_seq
        job.attempts += 1
        job.started_at = now
        job.completion_token += 1
        job.pending_overhead = job.spec.restartOverheadSeconds if job.preemptions else 0
        self._emit(job, "SCHEDULED", REASON_BORROWED if borrowed else REASON_WITHIN_QUOTA)
        self._emit(job, "STARTING", REASON_STARTUP)
        startup = self.options.startupSeconds
        if startup:
            self.timeline.push(now + startup, STARTUP_END, (job, job.completion_token))
        else:
            self._enter_running(job)

    def preempt(self, victim: Job, kind: str, for_job: Job) -> None:
        """Preempt a started job (scheduling pass only), applying the lost-work rule."""
        pkind: PreemptionKind = "IN_SHARE" if kind == "IN_SHARE" else "CROSS_SHARE"
        share = self.ledger.shares[victim.share]
        running = self._end_attempt(victim, share)
        outcome = preemption_outcome(
            running,
            victim.remaining,
            victim.spec.checkpointIntervalSeconds,
            victim.spec.restartOverheadSeconds,
        )
        victim.remaining = outcome.remaining
        victim.preemptions += (
            Preemption(self.timeline.now, pkind, for_job.name, outcome.lost, outcome.saved),
        )
        retries = victim.spec.preemptionRetriesBeforeTermination
        if retries_exhausted(len(victim.preemptions), retries):
            self._finish(
                victim, "FAILED", REASON_RETRIES_EXHAUSTED, pkind, for_job.name, outcome.lost
            )
        else:
            self._emit(
                victim, "RUNNABLE", REASON_PREEMPTED[pkind], pkind, for_job.name, outcome.lost
            )
            self.memo.enqueue_preempted(share, victim)

    # -- internals ---------------------------------------------------------------------

    def _enter_running(self, job: Job) -> None:
        now = self.timeline.now
        self._emit(job, "RUNNING", REASON_STARTUP_COMPLETE)
        job.running_since = now
        if job.first_started_at is None:
            job.first_started_at = now
        if job.remaining is not None:
            self.timeline.push(now + job.remaining, COMPLETION, (job, job.completion_token))

    def _end_attempt(self, job: Job, share: ShareRuntime) -> float:
        """Release the job's instances; returns the RUNNING seconds of the attempt."""
        now = self.timeline.now
        running = 0.0
        if job.status == "RUNNING" and job.running_since is not None:
            running = now - job.running_since
        job.running_seconds += running
        job.overhead_seconds += min(job.pending_overhead, running)
        job.pending_overhead = 0
        job.running_since = None
        job.completion_token += 1
        self.ledger.release(share, job, now)
        return running

    def _finish(
        self,
        job: Job,
        status: JobStatus,
        reason: str,
        kind: PreemptionKind | None = None,
        for_job: str | None = None,
        lost: float | None = None,
    ) -> None:
        job.stopped_at = self.timeline.now
        job.status_reason = None if status == "SUCCEEDED" else reason
        self._emit(job, status, reason, kind, for_job, lost)

    def _emit(
        self,
        job: Job,
        to: JobStatus,
        reason: str,
        kind: PreemptionKind | None = None,
        for_job: str | None = None,
        lost: float | None = None,
    ) -> None:
        """Move ``job`` to ``to`` at ``now``: its RUNNABLE stretches are timed here
        (``Job.runnable_since``, ``Job.waits``), the transition is kept for the caller
        while :attr:`collecting` and passed to every listener."""
        now = self.timeline.now
        before = job.status
        if before == "RUNNABLE" and job.runnable_since is not None:
            job.waits += (now - job.runnable_since,)
            job.runnable_since = None
        if to == "RUNNABLE":
            job.runnable_since = now
        job.status = to
        if self.collecting or self.listeners:
            transition = _new_transition(
                Transition, (now, job.name, before, to, reason, kind, for_job, lost)
            )
            if self.collecting:
                self._buffer.append(transition)
            for listener in self.listeners:
                listener(transition)
