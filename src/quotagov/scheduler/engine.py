"""The local scheduler, drivable step by step: submit, update, terminate, advance, read.

Semantics: ``docs/simulator/spec.md``. The engine is a discrete-event
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

Layout (one concern per module): this facade checks arguments and reads;
:mod:`.timeline` keeps the clock and the pending events (same-time order);
:mod:`.lifecycle` moves jobs through their states and is the pass's actuator;
:mod:`.config_updates` checks the set-up and builds ``UpdateQuotaShare`` results;
:mod:`.cycle` runs the pass with its memo (:mod:`.memo`); :mod:`.views` builds the
snapshots; :mod:`.errors` has the exceptions.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from quotagov.scheduler.config_updates import setup_faults, updated_share
from quotagov.scheduler.cycle import run_pass
from quotagov.scheduler.errors import (
    DuplicateJobError,
    EngineError,
    InvalidConfigError,
    UnknownJobError,
    UnknownShareError,
)
from quotagov.scheduler.lifecycle import JobLifecycle, Listener
from quotagov.scheduler.memo import PassMemo
from quotagov.scheduler.models import (
    CapacityLimit,
    JobSpec,
    Options,
    PreemptionConfiguration,
    ResourceSharingConfiguration,
    ShareConfig,
)
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.rules import priority_faults
from quotagov.scheduler.state import REASON_TERMINATED, TERMINAL_STATES, Transition
from quotagov.scheduler.timeline import ACTION, COMPLETION, SUBMISSION, Timeline
from quotagov.scheduler.views import JobView, ShareUsage, job_view, share_usage

__all__ = [
    "Action",
    "DuplicateJobError",
    "Engine",
    "EngineError",
    "InvalidConfigError",
    "JobView",
    "Listener",
    "ShareUsage",
    "UnknownJobError",
    "UnknownShareError",
]

Action = Callable[["Engine"], object]


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
        faults = setup_faults(capacity, shares)
        if faults:
            raise InvalidConfigError(faults)
        self.options = options or Options()
        best_effort = self.options.queueing == "BEST_EFFORT_FIFO"
        self._ledger = QuotaLedger(capacity, shares, best_effort, start)
        self._memo = PassMemo(self._ledger)
        self._ledger.watcher = self._memo
        self._timeline = Timeline(start)
        self._life = JobLifecycle(self._ledger, self._memo, self._timeline, self.options)

    # -- clock and listeners -----------------------------------------------------------

    @property
    def now(self) -> float:
        """The engine's clock, in seconds."""
        return self._timeline.now

    @property
    def epoch(self) -> int:
        """Changes with every share update and priority change (the pass's memo key)."""
        return self._memo.epoch

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(transition)`` for every transition, as it happens."""
        self._life.listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener``.

        Raises:
            ValueError: it was not added.
        """
        self._life.listeners.remove(listener)

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
        spec = dataclasses.replace(spec, submittedAt=self._timeline.now)
        life = self._life
        job = life.register(spec)
        mark = life.mark()
        life.submit(job)
        self._timeline.pass_due = True
        return life.take(mark)

    def schedule_submission(self, spec: JobSpec) -> None:
        """Register a job to be submitted at ``spec.submittedAt`` (>= ``now``).

        Submissions at the same time are applied in the order they were scheduled,
        after that time's actions. Until then the job's status is SUBMITTED.

        Raises:
            UnknownShareError, DuplicateJobError, InvalidConfigError: as :meth:`submit`;
                InvalidConfigError also when ``submittedAt`` is before ``now``.
        """
        now = self._timeline.now
        if spec.submittedAt < now:
            raise InvalidConfigError(
                [f"submittedAt: {spec.submittedAt} is before the engine's time {now}"]
            )
        job = self._life.register(spec)
        self._timeline.push(spec.submittedAt, SUBMISSION, job)

    def mark_unschedulable(self, job_name: str, reason: str) -> None:
        """Mark a job not yet submitted as one that can never be admitted (``reason``
        says why, with the numbers): once RUNNABLE it never becomes its share's head, so
        it never blocks the jobs behind it, and it is reported as ``UNSCHEDULABLE``.

        Raises:
            UnknownJobError: no such job.
            InvalidConfigError: the job was already submitted.
        """
        job = self._life.job(job_name)
        if job.status != "SUBMITTED":
            raise InvalidConfigError([f"{job_name}: already submitted ({job.status})"])
        job.unschedulable = reason

    def schedule_action(self, at: float, action: Action) -> None:
        """Run ``action(engine)`` at time ``at`` (>= ``now``), after that time's completions.

        Actions at the same time run in the order they were scheduled. The action
        typically calls :meth:`update_priority`, :meth:`update_share` or :meth:`terminate`.

        Raises:
            InvalidConfigError: ``at`` is before ``now``.
        """
        now = self._timeline.now
        if at < now:
            raise InvalidConfigError([f"at: {at} is before the engine's time {now}"])
        self._timeline.push(at, ACTION, action)

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
        job = self._life.job(job_name)
        faults = priority_faults(priority, "schedulingPriority")
        if faults:
            raise InvalidConfigError(faults)
        if job.status in TERMINAL_STATES:
            return []
        if job.status == "RUNNABLE":
            queue = self._ledger.shares[job.share].queue
            queue.discard(job)
            job.priority = priority
            queue.push(job)
        else:
            job.priority = priority
        self._ledger.priority_changed(job.instance_type)
        self._memo.config_changed()
        self._timeline.pass_due = True
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
        new = updated_share(
            share.config,
            capacityLimits=capacityLimits,
            resourceSharingConfiguration=resourceSharingConfiguration,
            preemptionConfiguration=preemptionConfiguration,
            state=state,
        )
        self._ledger.reconfigure(share, new, self._timeline.now)
        self._memo.config_changed()
        self._timeline.pass_due = True
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
        life = self._life
        job = life.job(job_name)
        if job.status in TERMINAL_STATES:
            return []
        mark = life.mark()
        life.terminate(job, reason)
        self._timeline.pass_due = True
        return life.take(mark)

    # -- advancing ---------------------------------------------------------------------

    def advance_to(self, t: float) -> list[Transition]:
        """Process every event up to and including ``t``; then ``now = t``.

        Returns:
            The transitions that happened during the call, in order.

        Raises:
            ValueError: ``t`` is before ``now``.
        """
        now = self._timeline.now
        if t < now:
            raise ValueError(f"cannot go back in time from {now} to {t}")
        mark = self._life.mark()
        self._timeline.advance(t, self._handle, self._scheduling_pass)
        return self._life.take(mark)

    def run(self, horizon: float | None = None) -> None:
        """Advance to ``horizon`` (:meth:`advance_to`), or until no event is pending when
        None (:meth:`run_until_idle`), keeping no transition: they reach the listeners
        only. For long runs (``quotagov simulate``), where keeping them all would cost
        memory and time.

        Raises:
            ValueError: ``horizon`` is before ``now``.
        """
        now = self._timeline.now
        if horizon is not None and horizon < now:
            raise ValueError(f"cannot go back in time from {now} to {horizon}")
        life = self._life
        collecting = life.collecting
        life.collecting = False
        try:
            if horizon is None:
                self._timeline.run_until_idle(self._handle, self._scheduling_pass)
            else:
                self._timeline.advance(horizon, self._handle, self._scheduling_pass)
        finally:
            life.collecting = collecting

    def next_event_time(self) -> float | None:
        """The time of the next pending event, or None when nothing is pending."""
        return self._timeline.next_time()

    def run_until_idle(self) -> list[Transition]:
        """Advance until no event is pending (jobs with ``runSeconds=None`` keep running).

        Returns:
            The transitions that happened, in order.
        """
        mark = self._life.mark()
        self._timeline.run_until_idle(self._handle, self._scheduling_pass)
        return self._life.take(mark)

    def fork(self) -> Engine:
        """An independent deep copy (without listeners), to run forward for what-if."""
        life = self._life
        listeners = life.listeners
        life.listeners = []
        try:
            clone = copy.deepcopy(self)
        finally:
            life.listeners = listeners
        return clone

    # -- reading -----------------------------------------------------------------------

    def job(self, name: str) -> JobView:
        """A snapshot of the job.

        Raises:
            UnknownJobError: no such job.
        """
        job = self._life.job(name)
        return job_view(job, self._ledger.shares[job.share], self._timeline.now)

    def jobs(self) -> list[JobView]:
        """Snapshots of every job, in submission-registration order."""
        shares = self._ledger.shares
        now = self._timeline.now
        return [job_view(j, shares[j.share], now) for j in self._life.jobs.values()]

    def iter_jobs(self, by_name: bool = False) -> Iterator[JobView]:
        """Snapshots of every job, made one at a time as they are read (none is kept:
        for runs too large for a list of them), in registration order or, with
        ``by_name``, in ``jobName`` order."""
        jobs = self._life.jobs
        shares = self._ledger.shares
        now = self._timeline.now
        names: Iterable[str] = sorted(jobs) if by_name else jobs
        for name in names:
            job = jobs[name]
            yield job_view(job, shares[job.share], now)

    def job_names(self) -> list[str]:
        """Every job name, in registration order."""
        return list(self._life.jobs)

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
        return share_usage(self._share(name))

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

    def borrowed_holders(self, share_name: str, instance_type: str) -> list[str]:
        """Names of the share's jobs holding borrowed instances of the type, the latest
        started first (spec, "Semantics": stacking a share's jobs in start order, the
        ones whose instances lie above its ``limit(s,u)``; empty when it borrows none).

        Raises:
            UnknownShareError: no such share.
        """
        share = self._share(share_name)
        return [j.name for j in self._ledger.borrowed_holders(share, instance_type)]

    def usage_integrals(self) -> dict[tuple[str, str], list[float]]:
        """Instance-second integrals up to ``now`` per (share, type):
        ``[used, borrowed, lent, used within limit, limit]`` (see :mod:`.usage`)."""
        ledger = self._ledger
        ledger.meter.flush(ledger, self._timeline.now)
        return ledger.meter.integrals

    # -- internals ---------------------------------------------------------------------

    def _handle(self, kind: int, payload: Any) -> bool:
        """Apply one event at ``now`` (see :mod:`.timeline` for the kinds).

        Returns:
            False for a stale startup end or completion (of an attempt that is over):
            its time is not an event time (spec, "Event times").
        """
        if kind == SUBMISSION:
            job = payload
            if job.status == "SUBMITTED":
                self._life.submit(job)
                self._timeline.pass_due = True
            return True
        if kind == COMPLETION:
            return self._life.complete(*payload)
        if kind == ACTION:
            payload(self)
            return True
        return self._life.startup_ended(*payload)

    def _scheduling_pass(self) -> None:
        """Run the pass at ``now`` (the memo skips it when nothing changed since a settled one)."""
        run_pass(self._ledger, self._memo, self._life)

    def _share(self, name: str) -> ShareRuntime:
        share = self._ledger.shares.get(name)
        if share is None:
            raise UnknownShareError(name)
        return share
