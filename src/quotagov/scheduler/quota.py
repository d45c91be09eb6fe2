"""Quota accounting: ``limit``, ``used``, ``free``, ``idle`` and ``borrowed`` per instance type.

Definitions (``docs/simulator/spec.md``, "Semantics"), for share ``s`` and
instance type ``u``:

- ``limit(s,u)``: the share's ``maxCapacity`` for ``u`` (0 when it has none: a share
  runs only the types it has capacity limits for);
- ``used(s,u)``: instances held by its SCHEDULED, STARTING and RUNNING jobs;
- ``free(u) = capacity(u) - sum of used(s,u)``;
- ``idle(s,u) = max(0, limit - used)``, ``borrowed(s,u) = max(0, used - limit)``;
- a share's jobs hold its quota in the order they started: the jobs that started last
  hold the borrowed instances (:meth:`QuotaLedger.borrowed_holders`).

The ledger keeps the per-type sums the scheduling pass needs in O(1): ``free(u)``,
the borrowed total and the idle quota of RESERVE shares, and two change stamps per type
(values of one counter): ``stamp`` changes whenever any of them may have changed;
``released`` only with the changes after which a job of the type may start where none
could before (releases, priority and configuration changes; a start never is one:
:meth:`QuotaLedger.acquire`). So "no job of type ``u`` of a share can start" found at
some ``released[u]`` holds while that is unchanged, and after a release still holds
for a share where :func:`~.admission.may_start_any` says none can. Its
:attr:`QuotaLedger.watcher` (the pass's memo, :mod:`.memo`) hears of every stamp change
as it happens.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Protocol

from quotagov.scheduler.models import ShareConfig
from quotagov.scheduler.queueing import RunnableQueue
from quotagov.scheduler.state import Job
from quotagov.scheduler.sweep_queue import OWN_NONE, SweepCounter, SweepQueue
from quotagov.scheduler.usage import UsageMeter


class StampWatcher(Protocol):
    """Who the ledger tells of stamp changes (:class:`~.memo.PassMemo`)."""

    def type_changed(
        self,
        ledger: QuotaLedger,
        instance_type: str,
        released: bool,
        owner: ShareRuntime | None,
    ) -> None:
        """The stamp of ``instance_type`` just changed (``ledger.stamp`` has the new one);
        ``released``: so did ``ledger.released`` (a job of the type may start where none
        could before); ``owner``: the share whose use of the type changed (None: a
        priority change, which may concern every share)."""
        ...


class ShareRuntime:
    """One quota share's configuration, holdings and RUNNABLE queue."""

    __slots__ = (
        "_victim_order",
        "best_effort",
        "changed_at",
        "config",
        "holding",
        "in_share_enabled",
        "index",
        "lend_and_borrow",
        "limits",
        "name",
        "queue",
        "reserve",
        "used",
    )

    def __init__(
        self,
        config: ShareConfig,
        index: int,
        best_effort: bool,
        counter: SweepCounter | None = None,
    ) -> None:
        self.name = config.quotaShareName
        self.index = index
        self.best_effort = best_effort
        #: Jobs holding instances, per type, in start order (dict insertion order).
        self.holding: dict[str, dict[Job, None]] = {}
        #: Per type, the holding jobs in victim order (built on first read, dropped
        #: when a job of the type starts or stops holding, or changes priority).
        self._victim_order: dict[str, list[Job]] = {}
        self.used: dict[str, int] = {}
        #: Per type, the ledger's stamp at the last change of the share's own use or
        #: holdings of it, of a priority of the type, or of the configuration.
        self.changed_at: dict[str, int] = {}
        #: STRICT_FIFO: a RunnableQueue (with the pass's memo, :mod:`.memo`);
        #: BEST_EFFORT_FIFO: a SweepQueue (the sweeps of :mod:`.sweeps`).
        self.queue: RunnableQueue | SweepQueue = (
            SweepQueue(counter or SweepCounter(), index) if best_effort else RunnableQueue()
        )
        self.config = config
        self.limits: dict[str, int] = {}
        self.reserve = False
        self.lend_and_borrow = False
        self.in_share_enabled = False
        self.configure(config)

    def victim_order(self, instance_type: str) -> list[Job]:
        """The share's jobs holding ``instance_type`` in victim order
        (:func:`~.preemption.victims.victim_order_key`: priority ascending, latest
        start first), kept until the holdings of the type or a priority change.

        The list is shared: callers must not change it.
        """
        ordered = self._victim_order.get(instance_type)
        if ordered is None:
            # imported here: the preemption package imports this module
            from quotagov.scheduler.preemption.victims import victim_order_key

            held = self.holding.get(instance_type)
            ordered = sorted(held, key=victim_order_key) if held else []
            self._victim_order[instance_type] = ordered
        return ordered

    def holdings_changed(self, instance_type: str) -> None:
        """Forget the victim order of the type (a job started or stopped holding it, or
        a job of the type changed priority)."""
        self._victim_order.pop(instance_type, None)

    def configure(self, config: ShareConfig) -> None:
        """Adopt a (new) configuration; holdings are kept as they are."""
        self.config = config
        self.limits = config.limits()
        strategy = config.resourceSharingConfiguration.strategy
        self.reserve = strategy == "RESERVE"
        self.lend_and_borrow = strategy == "LEND_AND_BORROW"
        self.in_share_enabled = config.preemptionConfiguration.inSharePreemption == "ENABLED"
        self.queue.set_configured_types(frozenset(self.limits))

    @property
    def enabled(self) -> bool:
        """Whether the share's ``state`` is ENABLED (accepts new jobs)."""
        return self.config.state == "ENABLED"

    @property
    def borrow_limit(self) -> int:
        """``borrowLimit`` in percent (-1: no cap)."""
        return self.config.resourceSharingConfiguration.borrowLimit

    def limit(self, instance_type: str) -> int:
        """``limit(s,u)``; 0 when the share has no capacity limit for the type."""
        return self.limits.get(instance_type, 0)

    def borrowed(self, instance_type: str) -> int:
        """``borrowed(s,u) = max(0, used - limit)``."""
        return max(0, self.used.get(instance_type, 0) - self.limits.get(instance_type, 0))

    def idle(self, instance_type: str) -> int:
        """``idle(s,u) = max(0, limit - used)``."""
        return max(0, self.limits.get(instance_type, 0) - self.used.get(instance_type, 0))


class QuotaLedger:
    """Capacity, per-share usage and the per-type sums derived from them.

    Args:
        capacity: instances per instance type in the service environment.
        shares: the shares, in input order.
        best_effort: whether queueing is BEST_EFFORT_FIFO.
        start: the time usage metering starts, in seconds.
    """

    def __init__(
        self,
        capacity: Mapping[str, int],
        shares: Sequence[ShareConfig],
        best_effort: bool,
        start: float,
    ) -> None:
        self.capacity: dict[str, int] = dict(capacity)
        self.best_effort = best_effort
        self.shares: dict[str, ShareRuntime] = {}
        #: The BEST_EFFORT_FIFO pass in progress (shared by the shares' queues).
        self.sweeps = SweepCounter()
        for i, cfg in enumerate(shares):
            self.shares[cfg.quotaShareName] = ShareRuntime(cfg, i, best_effort, self.sweeps)
        self.share_list: list[ShareRuntime] = list(self.shares.values())
        self.free: dict[str, int] = {}
        self.borrowed_total: dict[str, int] = {}
        self.reserve_idle: dict[str, int] = {}
        #: Per type, the idle quota of the shares that lend (not RESERVE).
        self.lend_idle: dict[str, int] = {}
        self.stamp: dict[str, int] = {}
        #: Per type, the stamp of the last change after which a job of the type may
        #: start where none could before (see :meth:`acquire`).
        self.released: dict[str, int] = {}
        #: Per type, the capacity no share's limit covers.
        self.unassigned: dict[str, int] = {}
        self._stamp_counter = 0
        #: BEST_EFFORT_FIFO: per type, the queues of the shares with a limit for it.
        self._queues_by_type: dict[str, list[SweepQueue]] = {}
        #: Told of every change of a type's stamp outside :meth:`reconfigure` (the
        #: scheduling pass's memo, :class:`~.memo.PassMemo`); None: nobody listens.
        self.watcher: StampWatcher | None = None
        self.meter = UsageMeter(start)
        self._recompute_all(start)

    # -- reading ---------------------------------------------------------------------

    def types(self) -> list[str]:
        """Every instance type in the capacity or in some share's limits, sorted."""
        found = set(self.capacity)
        for share in self.share_list:
            found.update(share.limits)
        return sorted(found)

    def free_of(self, instance_type: str) -> int:
        """``free(u)``."""
        return self.free.get(instance_type, 0)

    def borrowed_holders(
        self, share: ShareRuntime, instance_type: str, removed: Collection[Job] = ()
    ) -> Iterator[Job]:
        """Jobs of ``share`` holding borrowed instances of the type, latest start first.

        A job holds borrowed instances when, stacking the share's jobs in start order,
        part of its instances lie above ``limit(s,u)``. ``removed`` jobs are treated
        as already released (the preemption search uses it for victims it took).
        """
        jobs = share.holding.get(instance_type)
        if not jobs:
            return
        limit = share.limit(instance_type)
        total = share.used.get(instance_type, 0)
        if removed:
            total -= sum(j.count for j in removed if j in jobs)
        for job in reversed(jobs):
            if total <= limit:
                return
            if job in removed:
                continue
            yield job
            total -= job.count

    # -- changing --------------------------------------------------------------------

    def acquire(self, share: ShareRuntime, job: Job, now: float) -> None:
        """``job`` of ``share`` starts holding its instances (it entered SCHEDULED).

        This cannot let any other share's job of the type start that could not start
        before, so ``released`` stays (from the spec's "Admission" and preemption
        rules):

        - steps 2 and 3 together admit a within-quota job of ``c`` instances exactly
          when ``c <= free(u) + H``, ``H`` the instances of the other shares' jobs that
          hold borrowed ones (the reclaim candidates; a reclaim fails only when all of
          them are not enough). Taken within quota, the job lowers ``free(u)`` and
          leaves ``H``; taken above its share's limit, it lowers ``free(u)`` by its
          count and, being on top of its share's start order, adds just that count to
          ``H`` (the jobs below it hold what they held);
        - step 4 needs ``free(u) - Σ idle of RESERVE shares``, which does not grow
          (a RESERVE share's idle quota shrinks with ``free(u)``);
        - step 5 takes victims only from the job's own share, whose holdings do not
          change, then admits as steps 2 to 4 do.

        (The share's own jobs may: it holds one job more, a victim for a
        higher-priority one. Under STRICT_FIFO the jobs behind the one that starts have
        no higher priority; under BEST_EFFORT_FIFO its queue changes with the start, and
        is looked at again.)"""
        u = job.instance_type
        self.meter.touch(self, share, u, now)
        self._change_used(share, u, job.count)
        share.holding.setdefault(u, {})[job] = None
        share.holdings_changed(u)

    def release(self, share: ShareRuntime, job: Job, now: float) -> None:
        """``job`` of ``share`` stops holding its instances."""
        u = job.instance_type
        self.meter.touch(self, share, u, now)
        del share.holding[u][job]
        share.holdings_changed(u)
        self._change_used(share, u, -job.count)

    def priority_changed(self, instance_type: str) -> None:
        """A job of the type changed ``schedulingPriority`` (queued or holding: in-share
        preemption and victim order read it), so the state of the type changed."""
        for share in self.share_list:
            share.holdings_changed(instance_type)
        self._bump(instance_type, release=True)
        for share in self.share_list:
            share.changed_at[instance_type] = self._stamp_counter

    def reconfigure(self, share: ShareRuntime, config: ShareConfig, now: float) -> None:
        """Apply a share's new configuration and recompute every per-type sum.

        Every stamp changes; the watcher is not told type by type (a reconfiguration
        voids the whole memo: the engine calls :meth:`~.memo.PassMemo.config_changed`).
        """
        self.meter.flush(self, now)
        share.configure(config)
        self._recompute_all(now)

    def _change_used(self, share: ShareRuntime, u: str, delta: int) -> None:
        """``used(s,u) += delta``, with the per-type sums that follow from it."""
        limit = share.limits.get(u, 0)
        used = share.used
        old = used.get(u, 0)
        new = old + delta
        used[u] = new
        self.free[u] = self.free.get(u, 0) - delta
        # borrowed(s,u) = max(0, used - limit), idle(s,u) = max(0, limit - used)
        borrowed = (new - limit if new > limit else 0) - (old - limit if old > limit else 0)
        self.borrowed_total[u] = self.borrowed_total.get(u, 0) + borrowed
        idle = (limit - new if limit > new else 0) - (limit - old if limit > old else 0)
        pool = self.reserve_idle if share.reserve else self.lend_idle
        pool[u] = pool.get(u, 0) + idle
        self._bump(u, release=delta < 0, owner=share)

    def _bump(self, u: str, release: bool = False, owner: ShareRuntime | None = None) -> None:
        """A change of the state of type ``u``: a new ``stamp``; also a new ``released``
        when the change may let a job of the type start where none could (``release``:
        a release, a priority or configuration change); ``owner``: the share whose use
        of ``u`` changed (:attr:`ShareRuntime.changed_at`), None for a change of all."""
        self._stamp_counter += 1
        stamp = self.stamp[u] = self._stamp_counter
        if owner is not None:
            owner.changed_at[u] = stamp
        if release:
            self.released[u] = stamp
        if self.watcher is not None:
            self.watcher.type_changed(self, u, release, owner)
        if self.best_effort:
            # the queues holding jobs of the type look again at their first job of it
            # that can start (:func:`~.sweeps.best_effort_pass`, before their results)
            # (a queue whose cache says none of its jobs of the type can start still
            # has none after another share's start, see :meth:`acquire`, and after any
            # change but its own when its own state alone ruled them out)
            pending = self.sweeps.pending
            other = -1 if owner is None else owner.index
            for queue in self._queues_by_type.get(u, ()):
                if u in queue.type_counts:
                    cached = queue.cache.get(u)
                    if (
                        cached is not None
                        and cached[2] is None
                        and (
                            not release
                            or (cached[3] == OWN_NONE and other >= 0 and queue.share_index != other)
                        )
                    ):
                        continue
                    pending[queue] = None

    def _recompute_all(self, now: float) -> None:
        self._queues_by_type = {}
        for share in self.share_list:
            queue = share.queue
            if isinstance(queue, SweepQueue):
                self.sweeps.stale[queue] = None
                for u in share.limits:
                    self._queues_by_type.setdefault(u, []).append(queue)
        for u in self.types():
            covered = sum(s.limits.get(u, 0) for s in self.share_list)
            self.unassigned[u] = max(0, self.capacity.get(u, 0) - covered)
            used = sum(s.used.get(u, 0) for s in self.share_list)
            self.free[u] = self.capacity.get(u, 0) - used
            self.borrowed_total[u] = sum(s.borrowed(u) for s in self.share_list)
            self.reserve_idle[u] = sum(s.idle(u) for s in self.share_list if s.reserve)
            self.lend_idle[u] = sum(s.idle(u) for s in self.share_list if not s.reserve)
            self._stamp_counter += 1
            self.stamp[u] = self.released[u] = self._stamp_counter
            for share in self.share_list:
                share.changed_at[u] = self._stamp_counter
        self.meter.flush(self, now)
