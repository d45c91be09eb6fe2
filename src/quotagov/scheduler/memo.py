"""The scheduling pass's memo: which heads are known to fail, and which shares to look at.

The pass (:mod:`.cycle`) would reach the same outcome by looking at every share and
trying every head at every event time (the rules are
``../shared/spec/scenario-format.md``, "Order of a scheduling pass"); this object keeps
what lets it skip that work, and is the one place that decides when what it knows no
longer holds. The property tests compare the outcome with these shortcuts switched
off (``tests/scheduler/test_properties.py``).

Since it knows which shares to look at and which heads to skip, it also hands the pass
each sweep's heads (:meth:`PassMemo.heads`, phase 1 of :func:`~.cycle.run_pass`) and
keeps the heads a sweep sets aside until the pass ends (:meth:`PassMemo.set_aside`,
phase 3): the part Kueue's queue manager plays for its scheduler. The rules it applies
there are the spec's (a share's head; STRICT_FIFO heads block, BEST_EFFORT_FIFO heads
are set aside together when a sweep starts nothing); the admission steps stay in
:mod:`.cycle`.

What it knows (stamps are the ledger's per-type change counters,
:attr:`QuotaLedger.stamp`; the epoch counts configuration and priority changes; none
has a unit):

- *known failing*: a head whose attempt to start failed, with the epoch and its
  instance type's stamp at that time (:meth:`PassMemo.failed`): it is not tried again
  while both are unchanged (:meth:`PassMemo.heads` leaves it out);
- *active* shares: the ones the next sweep looks at (a dict used as an ordered set);
- *parked* STRICT_FIFO shares: one whose head is known to fail is not looked at until
  its head's type changes stamp or its queue changes (:meth:`PassMemo.park`);
- *dormant* BEST_EFFORT_FIFO shares: one whose every queued job is known to fail
  sleeps until one of the types it waits on changes stamp or its queue changes
  (:meth:`PassMemo.make_dormant`). Outside a pass it sleeps through a change that no
  queued job of the changed type can use (the *wake filter*,
  :func:`~.viability.may_start_some`; it then records the type's new stamp, exactly as
  if it had woken, tried them all and gone back to sleep). Woken in mid-pass, it first
  catches up with the set-asides the pass made so far (:meth:`PassMemo._catch_up`);
- *exhausted* BEST_EFFORT_FIFO shares (queued jobs, but all set aside or passed over):
  they leave the sweeps until the next start, the only thing in a pass that can give
  them a head again;
- *settled*: a pass that ended settled is not run again while nothing changed
  (:meth:`PassMemo.is_settled`).

Invalidation, each event in one method: a type's stamp changed
(:meth:`PassMemo.type_changed`, called by the ledger), a share's configuration or a
job's priority changed (:meth:`PassMemo.config_changed`), a job entered or left a
queue (:meth:`PassMemo.enqueue_submitted`, :meth:`PassMemo.enqueue_preempted`,
:meth:`PassMemo.dequeue_terminated`).
"""

from __future__ import annotations

from collections.abc import Callable

from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.state import Job

#: A share's head as the pass sees it: the job and its share.
Head = tuple[Job, ShareRuntime]

#: ``wake_filter(ledger, share, type)``: False only when no queued job of the type in
#: the share can start now (:func:`~.viability.may_start_some`).
WakeFilter = Callable[[QuotaLedger, ShareRuntime, str], bool]


class PassMemo:
    """What the scheduling pass knows it can skip, and when that stops holding.

    Args:
        ledger: the quota ledger whose stamps and shares the memo follows (it must
            call :meth:`type_changed` on every stamp change, see
            :attr:`QuotaLedger.watcher`). The memo keeps no reference to the ledger
            itself, only to its ``stamp`` dict and ``share_list``.
        wake_filter: decides whether a change wakes a dormant share outside a pass.
    """

    __slots__ = (
        "_active",
        "_changes",
        "_dormant",
        "_exhausted",
        "_failing_sweeps",
        "_in_pass",
        "_parked",
        "_set_aside",
        "_settled_at",
        "_shares",
        "_stamps",
        "_wake_filter",
        "epoch",
    )

    def __init__(self, ledger: QuotaLedger, wake_filter: WakeFilter) -> None:
        #: Changes with every configuration or priority change (the failing-head key).
        self.epoch = 0
        self._stamps = ledger.stamp
        self._shares = ledger.share_list
        self._wake_filter = wake_filter
        self._active: dict[ShareRuntime, None] = dict.fromkeys(ledger.share_list)
        #: Per instance type, the shares waiting on a change of its stamp.
        self._parked: dict[str, list[ShareRuntime]] = {}
        #: Dormant BEST_EFFORT_FIFO shares: the stamps of the types their jobs wait on.
        self._dormant: dict[ShareRuntime, dict[str, int]] = {}
        #: Counts every change the memo hears of; ``_settled_at`` its value after the
        #: last pass that ended settled (None: the last pass did not).
        self._changes = 0
        self._settled_at: int | None = None
        #: The pass in progress: failing sweeps so far, shares with set-aside jobs, and
        #: exhausted shares.
        self._in_pass = False
        self._failing_sweeps = 0
        self._set_aside: dict[ShareRuntime, None] = {}
        self._exhausted: list[ShareRuntime] = []

    # -- invalidation (outside and inside a pass) ------------------------------------

    def type_changed(self, ledger: QuotaLedger, instance_type: str) -> None:
        """The ledger's stamp of ``instance_type`` changed: wake the shares parked on it."""
        self._changes += 1
        parked = self._parked.pop(instance_type, None)
        if parked:
            self._wake(ledger, parked, instance_type)

    def config_changed(self) -> None:
        """A share's configuration or a job's priority changed: nothing known holds."""
        self.epoch += 1
        self._changes += 1
        self._parked.clear()
        self._dormant.clear()
        for share in self._shares:
            self._active[share] = None

    def enqueue_submitted(self, ledger: QuotaLedger, share: ShareRuntime, job: Job) -> None:
        """Push a newly RUNNABLE ``job`` on its share's queue (outside a pass).

        A dormant share stays asleep when the job would never be one of its heads
        (:meth:`~.queueing.RunnableQueue.passes_over`: every job it would set aside is
        still known to fail) or when no job of the job's type can start now (as if it
        woke, tried and slept again); otherwise it wakes.
        """
        self._changes += 1
        queue = share.queue
        if share not in self._dormant:
            self._activate(share)
            queue.push(job)
            return
        if queue.passes_over(job):
            queue.push_passed_over(job)
            return
        queue.push(job)
        if self._wake_filter(ledger, share, job.instance_type):
            self._activate(share)
        else:
            self._keep_dormant(share, job.instance_type)

    def enqueue_preempted(self, share: ShareRuntime, job: Job) -> None:
        """Push a preempted ``job`` back on its share's queue (in a pass)."""
        self._activate(share)  # before the push: a dormant share catches up first
        share.queue.push(job)
        self._changes += 1

    def dequeue_terminated(self, share: ShareRuntime, job: Job) -> None:
        """Remove a RUNNABLE ``job`` that is terminated from its share's queue."""
        share.queue.discard(job)
        self._changes += 1
        self._activate(share)

    # -- skipping whole passes -------------------------------------------------------

    def is_settled(self) -> bool:
        """Whether nothing changed since a pass that ended settled (a pass would start
        nothing)."""
        return self._settled_at == self._changes

    def pass_ran(self, settled: bool) -> None:
        """A pass just ended; ``settled``: running it again now would start nothing."""
        self._settled_at = self._changes if settled else None

    # -- during a pass -----------------------------------------------------------------

    def begin_pass(self) -> None:
        """A pass starts: nothing is set aside yet."""
        self._in_pass = True
        self._failing_sweeps = 0
        self._set_aside.clear()

    def heads(self) -> tuple[list[Head], list[Head]]:
        """Phase 1 of a sweep: the heads worth trying, from the shares worth looking at.

        Each active share's head is its queue's :meth:`~.queueing.RunnableQueue.head`.
        A share with no head leaves the sweeps (a BEST_EFFORT_FIFO one with queued jobs
        comes back after the next start). A head known to fail (:meth:`failed` in this
        epoch and at its type's current stamp) is not tried: a STRICT_FIFO one blocks
        its share, which is parked on the head's type; a BEST_EFFORT_FIFO one is
        returned, to be set aside.

        Returns:
            ``(live, failing)``: the heads to try (in share order) and the
            BEST_EFFORT_FIFO heads known to fail.
        """
        live: list[Head] = []
        failing: list[Head] = []
        active = self._active
        epoch = self.epoch
        stamps = self._stamps
        for share in list(active):  # a copy: parking deactivates
            queue = share.queue
            job = queue.head(stamps) if queue.size else None
            if job is None:
                del active[share]
                if share.best_effort and queue.size:
                    self._exhausted.append(share)
            elif job.failed_epoch == epoch and job.failed_stamp == stamps.get(
                job.instance_type, 0
            ):  # known to fail: same epoch, same stamp of its type
                if share.best_effort:
                    failing.append((job, share))
                else:
                    self.park(share, job.instance_type)
            else:
                live.append((job, share))
        return live, failing

    def failed(self, heads: list[Head]) -> list[Head]:
        """These heads were all tried in a sweep that started nothing: each is known to
        fail from now on; a STRICT_FIFO one's share is parked on the head's type.

        Returns:
            The BEST_EFFORT_FIFO ones (to set aside), in the given order.
        """
        epoch = self.epoch
        stamps = self._stamps
        failing: list[Head] = []
        for head in heads:
            job, share = head
            job.failed_epoch = epoch
            job.failed_stamp = stamps.get(job.instance_type, 0)
            if share.best_effort:
                failing.append(head)
            else:
                self.park(share, job.instance_type)
        return failing

    def park(self, share: ShareRuntime, instance_type: str) -> None:
        """The share's head is known to fail until the stamp of ``instance_type`` changes."""
        self._active.pop(share, None)
        self._parked.setdefault(instance_type, []).append(share)

    def job_started(self) -> None:
        """A job started: exhausted shares may have a head again."""
        for share in self._exhausted:
            self._active[share] = None
        self._exhausted.clear()

    def set_aside(self, heads: list[Head]) -> None:
        """Phase 3 of a sweep that started nothing: set these BEST_EFFORT_FIFO heads aside
        at once, until the pass ends (:meth:`~.queueing.RunnableQueue.set_aside`;
        :meth:`end_pass` puts them back)."""
        self._failing_sweeps += 1
        stamps = self._stamps
        set_aside = self._set_aside
        for job, share in heads:
            share.queue.set_aside(job, stamps)
            set_aside[share] = None

    def sweeps_ended(self) -> bool:
        """The last sweep started nothing and had nothing to set aside.

        Shares whose set-aside jobs are all known to fail go dormant.

        Returns:
            True when the pass ends *settled*: running it again on the same state would
            start nothing. False when a set-aside job was set aside before a later
            start changed its type's state (at the next event time it deserves another
            try).
        """
        settled = True
        for share in self._set_aside:
            waiting = self._known_failing_types(share)
            if waiting is None:
                settled = False
            else:
                self.make_dormant(share, waiting)
        return settled

    def end_pass(self) -> None:
        """The pass ends: set-aside jobs are put back in their queues
        (:meth:`~.queueing.RunnableQueue.restore`), and the next pass looks at the
        exhausted shares and at the shares with set-aside jobs that did not go dormant."""
        self._in_pass = False
        active = self._active
        set_aside = self._set_aside
        if self._exhausted:
            for share in self._exhausted:
                if share not in set_aside:  # only passed over (no capacity limit for them)
                    active[share] = None
            self._exhausted.clear()
        for share in set_aside:
            share.queue.restore()
            if share not in self._dormant:
                self._activate(share)
        set_aside.clear()

    def make_dormant(self, share: ShareRuntime, stamps: dict[str, int]) -> None:
        """A BEST_EFFORT_FIFO share whose every job is known to fail in the current state
        sleeps until one of the types in ``stamps`` changes or its queue does."""
        self._active.pop(share, None)
        self._dormant[share] = stamps
        for u in stamps:
            self._parked.setdefault(u, []).append(share)

    # -- internals ---------------------------------------------------------------------

    def _activate(self, share: ShareRuntime) -> None:
        """Look at the share again; a dormant one woken in mid-pass catches up first."""
        stamps = self._dormant.pop(share, None)
        if stamps is not None and self._in_pass and self._failing_sweeps:
            self._catch_up(share, stamps)
        self._active[share] = None

    def _wake(self, ledger: QuotaLedger, parked: list[ShareRuntime], u: str) -> None:
        """Activate the shares parked on type ``u``, whose stamp changed (outside a pass,
        the wake filter may leave a dormant one asleep)."""
        if self._in_pass:
            for waiting in parked:
                self._activate(waiting)
            return
        asleep: dict[ShareRuntime, None] = {}
        for waiting in parked:
            stamps = self._dormant.get(waiting)
            if stamps is not None and (
                waiting in asleep or not self._wake_filter(ledger, waiting, u)
            ):
                stamps[u] = self._stamps[u]
                asleep[waiting] = None
            else:
                self._activate(waiting)
        if asleep:
            self._parked.setdefault(u, []).extend(asleep)

    def _keep_dormant(self, share: ShareRuntime, instance_type: str) -> None:
        """The dormant share's jobs of ``instance_type`` changed but none can start now:
        it stays dormant, waiting on the type at its current stamp."""
        stamps = self._dormant[share]
        if instance_type not in stamps:
            self._parked.setdefault(instance_type, []).append(share)
        stamps[instance_type] = self._stamps.get(instance_type, 0)

    def _catch_up(self, share: ShareRuntime, stamps: dict[str, int]) -> None:
        """Set aside the heads a dormant share would have set aside in this pass so far.

        While dormant its state was unchanged, so in each failing sweep its head was a
        job known to fail (in the state given by ``stamps``) and was set aside: replaying
        that is exactly what the pass would have done.
        """
        queue = share.queue
        for _ in range(self._failing_sweeps):
            job = queue.head(stamps) if queue.size else None
            if job is None:
                break
            job.failed_epoch = self.epoch
            job.failed_stamp = stamps.get(job.instance_type, 0)
            queue.set_aside(job, stamps)
        self._set_aside[share] = None

    def _known_failing_types(self, share: ShareRuntime) -> dict[str, int] | None:
        """``{type: stamp}`` of the types of the share's set-aside jobs (which cover the
        passed-over jobs too) with their current stamps, when every set-aside job is
        known to fail in the current state; else None."""
        types: dict[str, int] = {}
        for job in share.queue.set_aside_jobs():
            u = job.instance_type
            stamp = self._stamps.get(u, 0)
            if job.failed_epoch != self.epoch or job.failed_stamp != stamp:
                return None
            types[u] = stamp
        return types
