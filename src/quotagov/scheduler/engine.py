"""The local scheduler, drivable step by step: submit, update, terminate, advance, read.

Semantics: ``../shared/spec/scenario-format.md``. The engine is a discrete-event
simulation of AWS Batch quota-share scheduling with a clock in seconds
(:attr:`Engine.now`). It imports nothing from AWS.

Driving it:

- Mutations (:meth:`Engine.submit`, :meth:`Engine.update_priority`,
  :meth:`Engine.update_share`, :meth:`Engine.terminate`) take effect at once, at
  ``engine.now``, in call order; each returns the transitions it caused (a submission's
  ``SUBMITTED -> RUNNABLE``, a termination's ``-> FAILED``). They do not start
  anything: the scheduling pass they call for runs at ``engine.now`` on the next
  :meth:`Engine.advance_to` (``advance_to(engine.now)`` runs just that pass). Since
  ``advance_to`` has already applied every startup end and completion up to ``now``,
  this is the spec's same-time order: startups, completions, actions, submissions,
  then the pass.
- :meth:`Engine.advance_to` ``(t)`` processes every event with time ``<= t``, grouped by
  time, in the spec's same-time order (startup ends, completions, scheduled actions
  in input order, scheduled submissions in input order), then runs the scheduling
  pass at that time; then sets ``now = t``. It returns the transitions in the order
  they happened; listeners (:meth:`Engine.add_listener`) see each one as it happens.
- :meth:`Engine.fork` returns an independent deep copy (without listeners) for
  what-if runs.

Example::

    engine = Engine({"ml.g5.xlarge": 2}, [share])
    engine.submit(JobSpec("a", "team", "ml.g5.xlarge", runSeconds=600))
    engine.advance_to(0)        # the pass at 0 starts "a"
    engine.advance_to(600)      # "a" SUCCEEDED at 600
"""

from __future__ import annotations

import copy
import dataclasses
import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quotagov.scheduler.admission import accepts_submissions
from quotagov.scheduler.cycle import run_pass
from quotagov.scheduler.lost_work import preemption_outcome, retries_exhausted
from quotagov.scheduler.memo import PassMemo
from quotagov.scheduler.models import (
    MAX_SHARES,
    CapacityLimit,
    JobSpec,
    Options,
    PreemptionConfiguration,
    ResourceSharingConfiguration,
    ShareConfig,
)
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.rules import job_faults, priority_faults, share_faults
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
    REASON_TERMINATED,
    REASON_WITHIN_QUOTA,
    TERMINAL_STATES,
    Job,
    JobStatus,
    Preemption,
    PreemptionKind,
    Transition,
)
from quotagov.scheduler.viability import may_start_some

Listener = Callable[[Transition], None]
Action = Callable[["Engine"], object]

# Event kinds, in the spec's same-time order.
_STARTUP_END, _COMPLETION, _ACTION, _SUBMISSION = 0, 1, 2, 3


class EngineError(Exception):
    """Base of the engine's errors."""


class UnknownJobError(EngineError, KeyError):
    """No job has this ``jobName``."""


class UnknownShareError(EngineError, KeyError):
    """No quota share has this ``quotaShareName``."""


class DuplicateJobError(EngineError, ValueError):
    """A job with this ``jobName`` was already submitted."""


class InvalidConfigError(EngineError, ValueError):
    """A share configuration, job spec or value is invalid.

    Attributes:
        faults: one message per fault, each starting with the field path.
    """

    def __init__(self, faults: list[str]) -> None:
        super().__init__("; ".join(faults))
        self.faults = faults


@dataclass(frozen=True, slots=True)
class JobView:
    """A read-only snapshot of one job.

    Times in seconds; ``remainingSeconds`` is the RUNNING work still needed as of
    ``engine.now`` (None: the job never completes by itself); ``runningSeconds`` the
    RUNNING time over all attempts and ``overheadSeconds`` the part of it spent on
    restart overhead (at most ``restartOverheadSeconds`` per restarted attempt);
    ``misconfigured`` is
    True when its share has no capacity limit for its instance type (it stays
    RUNNABLE and is never admitted, as AWS holds such jobs).
    """

    jobName: str
    status: JobStatus
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


@dataclass(frozen=True, slots=True)
class ShareUsage:
    """One share's quota use of one instance type, in instances."""

    instanceType: str
    limit: int
    used: int
    idle: int
    borrowed: int


def _as_capacity_limits(
    items: Sequence[CapacityLimit | Mapping[str, Any]],
) -> tuple[CapacityLimit, ...]:
    out: list[CapacityLimit] = []
    for item in items:
        if isinstance(item, CapacityLimit):
            out.append(item)
        else:
            out.append(CapacityLimit(str(item["capacityUnit"]), int(item["maxCapacity"])))
    return tuple(out)


class Engine:
    """The local quota-share scheduler.

    Args:
        capacity: instances per instance type in the service environment.
        shares: the quota shares (at most 20, unique names).
        options: startup time, queueing and horizon (defaults: ``Options()``).
        start: the initial clock value in seconds.

    Raises:
        InvalidConfigError: on invalid shares or capacity (every fault listed).
    """

    def __init__(
        self,
        capacity: Mapping[str, int],
        shares: Sequence[ShareConfig],
        options: Options | None = None,
        start: float = 0.0,
    ) -> None:
        faults: list[str] = []
        if len(shares) > MAX_SHARES:
            faults.append(f"shares: {len(shares)} shares, a job queue holds at most {MAX_SHARES}")
        names: set[str] = set()
        for i, share in enumerate(shares):
            if share.quotaShareName in names:
                faults.append(
                    f"shares[{i}].quotaShareName: duplicate share {share.quotaShareName!r}"
                )
            names.add(share.quotaShareName)
            faults += share_faults(share, f"shares[{i}]")
        for unit, count in capacity.items():
            if count < 0:
                faults.append(f"capacity.{unit}: {count} is negative")
        if faults:
            raise InvalidConfigError(faults)
        self.options = options or Options()
        self._now: float = start
        self._ledger = QuotaLedger(
            capacity, shares, self.options.queueing == "BEST_EFFORT_FIFO", start
        )
        self._memo = PassMemo(self._ledger, may_start_some)
        self._ledger.watcher = self._memo
        self._jobs: dict[str, Job] = {}
        self._events: list[tuple[float, int, int, Any]] = []
        self._event_seq = 0
        self._order = 0
        self._start_seq = 0
        self._listeners: list[Listener] = []
        self._buffer: list[Transition] = []
        self._pass_due = False

    # -- clock and listeners -----------------------------------------------------------

    @property
    def now(self) -> float:
        """The engine's clock, in seconds."""
        return self._now

    @property
    def epoch(self) -> int:
        """Changes with every share update and priority change (the pass's memo key)."""
        return self._memo.epoch

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(transition)`` for every transition, as it happens."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener``.

        Raises:
            ValueError: it was not added.
        """
        self._listeners.remove(listener)

    # -- mutations (at engine.now) -----------------------------------------------------

    def submit(self, spec: JobSpec) -> list[Transition]:
        """Submit a job at ``engine.now`` (its ``submittedAt`` is set to ``now``).

        The job is RUNNABLE at once (or FAILED with ``SHARE_DISABLED`` when its share
        is DISABLED); the pass that may start it runs on the next :meth:`advance_to`.
        A job whose share has no capacity limit for its instance type is accepted and
        stays RUNNABLE (``JobView.misconfigured``).

        Returns:
            The transitions caused (one).

        Raises:
            UnknownShareError: no such share.
            DuplicateJobError: the name is taken.
            InvalidConfigError: a field value is invalid (count, priority, times).
        """
        spec = dataclasses.replace(spec, submittedAt=self._now)
        job = self._register(spec)
        mark = len(self._buffer)
        self._apply_submission(job)
        self._pass_due = True
        return self._take(mark)

    def schedule_submission(self, spec: JobSpec) -> None:
        """Register a job to be submitted at ``spec.submittedAt`` (>= ``now``).

        Submissions at the same time are applied in the order they were scheduled,
        after that time's actions. Until then the job's status is SUBMITTED.

        Raises:
            UnknownShareError, DuplicateJobError, InvalidConfigError: as :meth:`submit`;
                InvalidConfigError also when ``submittedAt`` is before ``now``.
        """
        if spec.submittedAt < self._now:
            raise InvalidConfigError(
                [f"submittedAt: {spec.submittedAt} is before the engine's time {self._now}"]
            )
        job = self._register(spec)
        self._push_event(spec.submittedAt, _SUBMISSION, job)

    def schedule_action(self, at: float, action: Action) -> None:
        """Run ``action(engine)`` at time ``at`` (>= ``now``), after that time's completions.

        Actions at the same time run in the order they were scheduled. The action
        typically calls :meth:`update_priority`, :meth:`update_share` or :meth:`terminate`.

        Raises:
            InvalidConfigError: ``at`` is before ``now``.
        """
        if at < self._now:
            raise InvalidConfigError([f"at: {at} is before the engine's time {self._now}"])
        self._push_event(at, _ACTION, action)

    def update_priority(self, job_name: str, priority: int) -> list[Transition]:
        """``UpdateServiceJob``: set a job's ``schedulingPriority`` (0-9999) at ``now``.

        A RUNNABLE job moves to its new place in its share's queue; a started job
        keeps running with the new priority (which victim order and in-share
        preemption then use). No effect on a finished job.

        Returns:
            The transitions caused (none; the pass runs on the next advance).

        Raises:
            UnknownJobError: no such job.
            InvalidConfigError: priority outside 0-9999.
        """
        job = self._job(job_name)
        faults = priority_faults(priority, "schedulingPriority")
        if faults:
            raise InvalidConfigError(faults)
        if job.status in TERMINAL_STATES:
            return []
        job.priority = priority
        if job.status == "RUNNABLE":
            self._ledger.shares[job.share].queue.reprioritize(job)
        self._memo.config_changed()
        self._pass_due = True
        return []

    def update_share(
        self,
        name: str,
        *,
        capacityLimits: Sequence[CapacityLimit | Mapping[str, Any]] | None = None,
        resourceSharingConfiguration: ResourceSharingConfiguration
        | Mapping[str, Any]
        | None = None,
        preemptionConfiguration: PreemptionConfiguration | Mapping[str, Any] | None = None,
        state: str | None = None,
    ) -> list[Transition]:
        """``UpdateQuotaShare`` at ``now``: fields given replace the old ones, omitted keep.

        Accepts the typed models or Batch-shaped mappings. Lowering a capacity limit
        preempts nothing at once: the instances above the new limit count as borrowed
        from then on (RESERVE shares too), so cross-share preemption may reclaim them.

        Returns:
            The transitions caused (none; the pass runs on the next advance).

        Raises:
            UnknownShareError: no such share.
            InvalidConfigError: the resulting configuration is invalid (nothing changes).
        """
        share = self._share(name)
        config = share.config
        changes: dict[str, Any] = {}
        try:
            if capacityLimits is not None:
                changes["capacityLimits"] = _as_capacity_limits(capacityLimits)
            if resourceSharingConfiguration is not None:
                rsc = resourceSharingConfiguration
                if not isinstance(rsc, ResourceSharingConfiguration):
                    rsc = ResourceSharingConfiguration(
                        strategy=rsc["strategy"], borrowLimit=int(rsc.get("borrowLimit", -1))
                    )
                changes["resourceSharingConfiguration"] = rsc
            if preemptionConfiguration is not None:
                pc = preemptionConfiguration
                if not isinstance(pc, PreemptionConfiguration):
                    pc = PreemptionConfiguration(pc["inSharePreemption"])
                changes["preemptionConfiguration"] = pc
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidConfigError([f"{name}: malformed update ({exc!r})"]) from exc
        if state is not None:
            changes["state"] = state
        new = dataclasses.replace(config, **changes)
        faults = share_faults(new, f"quotaShare {name!r}")
        if faults:
            raise InvalidConfigError(faults)
        self._ledger.reconfigure(share, new, self._now)
        self._memo.config_changed()
        self._pass_due = True
        return []

    def terminate(self, job_name: str, reason: str = REASON_TERMINATED) -> list[Transition]:
        """``TerminateServiceJob`` at ``now``: the job becomes FAILED with ``reason``.

        A started job releases its instances (its running time in the attempt is
        neither saved nor counted as lost: it was not preempted). No effect on a
        finished job.

        Returns:
            The transitions caused (none or one).

        Raises:
            UnknownJobError: no such job.
        """
        job = self._job(job_name)
        if job.status in TERMINAL_STATES:
            return []
        mark = len(self._buffer)
        share = self._ledger.shares[job.share]
        if job.status == "RUNNABLE":
            self._memo.dequeue_terminated(share, job)
        elif job.status in HOLDING_STATES:
            self._end_attempt(job, share)
        self._finish(job, "FAILED", reason)
        self._pass_due = True
        return self._take(mark)

    # -- advancing ---------------------------------------------------------------------

    def advance_to(self, t: float) -> list[Transition]:
        """Process every event up to and including ``t``; then ``now = t``.

        Returns:
            The transitions that happened during the call, in order.

        Raises:
            ValueError: ``t`` is before ``now``.
        """
        if t < self._now:
            raise ValueError(f"cannot go back in time from {self._now} to {t}")
        mark = len(self._buffer)
        events = self._events
        if self._pass_due and (not events or events[0][0] > self._now):
            self._scheduling_pass()
        while events and events[0][0] <= t:
            time = events[0][0]
            self._now = time
            while events and events[0][0] == time:
                _, kind, _, payload = heapq.heappop(events)
                self._handle(kind, payload)
            self._scheduling_pass()
        if t > self._now:
            self._now = t
        return self._take(mark)

    def next_event_time(self) -> float | None:
        """The time of the next pending event, or None when nothing is pending."""
        return self._events[0][0] if self._events else None

    def run_until_idle(self) -> list[Transition]:
        """Advance until no event is pending (jobs with ``runSeconds=None`` keep running).

        Returns:
            The transitions that happened, in order.
        """
        out = self.advance_to(self._now)
        while self._events:
            out += self.advance_to(self._events[0][0])
        return out

    def fork(self) -> Engine:
        """An independent deep copy (without listeners), to run forward for what-if."""
        listeners = self._listeners
        self._listeners = []
        try:
            clone = copy.deepcopy(self)
        finally:
            self._listeners = listeners
        return clone

    # -- reading -----------------------------------------------------------------------

    def job(self, name: str) -> JobView:
        """A snapshot of the job.

        Raises:
            UnknownJobError: no such job.
        """
        return self._view(self._job(name))

    def jobs(self) -> list[JobView]:
        """Snapshots of every job, in submission-registration order."""
        return [self._view(j) for j in self._jobs.values()]

    def job_names(self) -> list[str]:
        """Every job name, in registration order."""
        return list(self._jobs)

    def share(self, name: str) -> ShareConfig:
        """The share's current configuration.

        Raises:
            UnknownShareError: no such share.
        """
        return self._share(name).config

    def shares(self) -> list[ShareConfig]:
        """Every share's configuration, in input order."""
        return [s.config for s in self._ledger.share_list]

    def usage(self, name: str) -> dict[str, ShareUsage]:
        """The share's ``limit``/``used``/``idle``/``borrowed`` per instance type.

        Covers the types it has a limit for or holds instances of.

        Raises:
            UnknownShareError: no such share.
        """
        share = self._share(name)
        types = sorted(set(share.limits) | {u for u, n in share.used.items() if n})
        return {
            u: ShareUsage(u, share.limit(u), share.used.get(u, 0), share.idle(u), share.borrowed(u))
            for u in types
        }

    @property
    def capacity(self) -> dict[str, int]:
        """Instances per instance type in the service environment."""
        return dict(self._ledger.capacity)

    def free(self, instance_type: str) -> int:
        """``free(u)``: instances of the type no share holds."""
        return self._ledger.free_of(instance_type)

    def runnable_order(self, share_name: str) -> list[str]:
        """Names of the share's RUNNABLE jobs in queue order (priority, submission, input).

        Raises:
            UnknownShareError: no such share.
        """
        return [j.name for j in self._share(share_name).queue.ordered()]

    def running_jobs(self, share_name: str, instance_type: str) -> list[str]:
        """Names of the share's jobs holding instances of the type, in start order."""
        return [j.name for j in self._share(share_name).holding.get(instance_type, {})]

    def usage_integrals(self) -> dict[tuple[str, str], list[float]]:
        """Instance-second integrals up to ``now`` per (share, type):
        ``[used, borrowed, lent, used within limit, limit]`` (see :mod:`.usage`)."""
        ledger = self._ledger
        ledger.meter.flush(ledger, self._now)
        return ledger.meter.integrals

    # -- the pass's actuator -----------------------------------------------------------

    def start(self, job: Job, share: ShareRuntime, borrowed: bool) -> None:
        """Start the head ``job`` (scheduling pass only): SCHEDULED, STARTING, maybe RUNNING."""
        share.queue.pop(job)
        self._ledger.acquire(share, job, self._now)
        self._start_seq += 1
        job.start_seq = self._start_seq
        job.attempts += 1
        job.started_at = self._now
        job.borrowed_start = borrowed
        job.completion_token += 1
        job.pending_overhead = job.spec.restartOverheadSeconds if job.preemptions else 0
        self._emit(job, "SCHEDULED", REASON_BORROWED if borrowed else REASON_WITHIN_QUOTA)
        self._emit(job, "STARTING", REASON_STARTUP)
        startup = self.options.startupSeconds
        if startup:
            self._push_event(self._now + startup, _STARTUP_END, (job, job.completion_token))
        else:
            self._enter_running(job)

    def preempt(self, victim: Job, kind: str, for_job: Job) -> None:
        """Preempt a started job (scheduling pass only), applying the lost-work rule."""
        pkind: PreemptionKind = "IN_SHARE" if kind == "IN_SHARE" else "CROSS_SHARE"
        share = self._ledger.shares[victim.share]
        running = self._end_attempt(victim, share)
        outcome = preemption_outcome(
            running,
            victim.remaining,
            victim.spec.checkpointIntervalSeconds,
            victim.spec.restartOverheadSeconds,
        )
        victim.remaining = outcome.remaining
        victim.preemptions.append(
            Preemption(self._now, pkind, for_job.name, outcome.lost, outcome.saved)
        )
        details = {"kind": pkind, "forJob": for_job.name, "lostSeconds": outcome.lost}
        retries = victim.spec.preemptionRetriesBeforeTermination
        if retries_exhausted(len(victim.preemptions), retries):
            self._finish(victim, "FAILED", REASON_RETRIES_EXHAUSTED, **details)
        else:
            self._emit(victim, "RUNNABLE", REASON_PREEMPTED[pkind], **details)
            self._memo.enqueue_preempted(share, victim)

    # -- internals ---------------------------------------------------------------------

    def _register(self, spec: JobSpec) -> Job:
        if spec.quotaShareName not in self._ledger.shares:
            raise UnknownShareError(spec.quotaShareName)
        if spec.jobName in self._jobs:
            raise DuplicateJobError(spec.jobName)
        faults = job_faults(spec, f"job {spec.jobName!r}")
        if faults:
            raise InvalidConfigError(faults)
        job = Job(
            spec=spec,
            order=self._order,
            submitted_at=spec.submittedAt,
            priority=spec.schedulingPriority,
            remaining=spec.runSeconds,
        )
        self._order += 1
        self._jobs[spec.jobName] = job
        return job

    def _apply_submission(self, job: Job) -> None:
        share = self._ledger.shares[job.share]
        if not accepts_submissions(share):
            self._finish(job, "FAILED", REASON_SHARE_DISABLED)
            return
        self._emit(job, "RUNNABLE", REASON_SUBMITTED)
        self._memo.enqueue_submitted(self._ledger, share, job)

    def _handle(self, kind: int, payload: Any) -> None:
        if kind == _SUBMISSION:
            job: Job = payload
            if job.status == "SUBMITTED":
                self._apply_submission(job)
                self._pass_due = True
        elif kind == _ACTION:
            payload(self)
        elif kind == _COMPLETION:
            job, token = payload
            if job.completion_token == token and job.status == "RUNNING":
                share = self._ledger.shares[job.share]
                self._end_attempt(job, share)
                job.remaining = 0
                self._finish(job, "SUCCEEDED", REASON_COMPLETED)
        else:
            job, token = payload
            if job.completion_token == token and job.status == "STARTING":
                self._enter_running(job)

    def _enter_running(self, job: Job) -> None:
        self._emit(job, "RUNNING", REASON_STARTUP_COMPLETE)
        job.running_since = self._now
        if job.first_started_at is None:
            job.first_started_at = self._now
        if job.remaining is not None:
            self._push_event(self._now + job.remaining, _COMPLETION, (job, job.completion_token))

    def _end_attempt(self, job: Job, share: ShareRuntime) -> float:
        """Release the job's instances; returns the RUNNING seconds of the attempt."""
        running = 0.0
        if job.status == "RUNNING" and job.running_since is not None:
            running = self._now - job.running_since
        job.running_seconds += running
        job.overhead_seconds += min(job.pending_overhead, running)
        job.pending_overhead = 0
        job.running_since = None
        job.completion_token += 1
        self._ledger.release(share, job, self._now)
        return running

    def _finish(self, job: Job, status: JobStatus, reason: str, **details: Any) -> None:
        job.stopped_at = self._now
        job.status_reason = None if status == "SUCCEEDED" else reason
        self._emit(job, status, reason, **details)

    def _emit(self, job: Job, to: JobStatus, reason: str, **details: Any) -> None:
        transition = Transition(self._now, job.name, job.status, to, reason, **details)
        job.status = to
        self._buffer.append(transition)
        for listener in self._listeners:
            listener(transition)

    def _take(self, mark: int) -> list[Transition]:
        """The transitions recorded since ``mark``, removed from the buffer."""
        out = self._buffer[mark:]
        del self._buffer[mark:]
        return out

    def _push_event(self, at: float, kind: int, payload: Any) -> None:
        self._event_seq += 1
        heapq.heappush(self._events, (at, kind, self._event_seq, payload))

    def _scheduling_pass(self) -> None:
        """Run the pass (which the memo skips when nothing changed since a settled one)."""
        self._pass_due = False
        run_pass(self._ledger, self._memo, self)

    def _job(self, name: str) -> Job:
        job = self._jobs.get(name)
        if job is None:
            raise UnknownJobError(name)
        return job

    def _share(self, name: str) -> ShareRuntime:
        share = self._ledger.shares.get(name)
        if share is None:
            raise UnknownShareError(name)
        return share

    def _view(self, job: Job) -> JobView:
        remaining = job.remaining
        running = job.running_seconds
        overhead = job.overhead_seconds
        if job.status == "RUNNING" and job.running_since is not None:
            in_attempt = self._now - job.running_since
            running += in_attempt
            overhead += min(job.pending_overhead, in_attempt)
            if remaining is not None:
                remaining = remaining - in_attempt
        share = self._ledger.shares[job.share]
        return JobView(
            jobName=job.name,
            status=job.status,
            quotaShareName=job.share,
            instanceType=job.instance_type,
            instanceCount=job.count,
            schedulingPriority=job.priority,
            submittedAt=job.submitted_at,
            runSeconds=job.spec.runSeconds,
            attempts=job.attempts,
            preemptions=tuple(job.preemptions),
            lostSeconds=job.lost_seconds,
            firstStartedAt=job.first_started_at,
            stoppedAt=job.stopped_at,
            statusReason=job.status_reason,
            startedAt=job.started_at,
            runningSince=job.running_since,
            remainingSeconds=remaining,
            runningSeconds=running,
            overheadSeconds=overhead,
            misconfigured=job.instance_type not in share.limits,
        )
