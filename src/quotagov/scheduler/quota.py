"""Quota accounting: ``limit``, ``used``, ``free``, ``idle`` and ``borrowed`` per instance type.

Definitions (``../shared/spec/scenario-format.md``, "Semantics"), for share ``s`` and
instance type ``u``:

- ``limit(s,u)``: the share's ``maxCapacity`` for ``u`` (0 when it has none: a share
  runs only the types it has capacity limits for);
- ``used(s,u)``: instances held by its SCHEDULED, STARTING and RUNNING jobs;
- ``free(u) = capacity(u) - sum of used(s,u)``;
- ``idle(s,u) = max(0, limit - used)``, ``borrowed(s,u) = max(0, used - limit)``;
- a share's jobs hold its quota in the order they started: the jobs that started last
  hold the borrowed instances (:meth:`QuotaLedger.borrowed_holders`).

The ledger keeps the per-type sums the scheduling pass needs in O(1): ``free(u)``,
the borrowed total and the idle quota of RESERVE shares, and a per-type ``stamp``
that changes whenever any of them may have changed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

from quotagov.scheduler.models import ShareConfig
from quotagov.scheduler.queueing import RunnableQueue
from quotagov.scheduler.state import Job
from quotagov.scheduler.usage import UsageMeter


class ShareRuntime:
    """One quota share's configuration, holdings and RUNNABLE queue."""

    __slots__ = (
        "best_effort",
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

    def __init__(self, config: ShareConfig, index: int, best_effort: bool) -> None:
        self.name = config.quotaShareName
        self.index = index
        self.best_effort = best_effort
        #: Jobs holding instances, per type, in start order (dict insertion order).
        self.holding: dict[str, dict[Job, None]] = {}
        self.used: dict[str, int] = {}
        self.queue = RunnableQueue()
        self.config = config
        self.limits: dict[str, int] = {}
        self.reserve = False
        self.lend_and_borrow = False
        self.in_share_enabled = False
        self.configure(config)

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
        self.shares: dict[str, ShareRuntime] = {}
        for i, cfg in enumerate(shares):
            self.shares[cfg.quotaShareName] = ShareRuntime(cfg, i, best_effort)
        self.share_list: list[ShareRuntime] = list(self.shares.values())
        self.free: dict[str, int] = {}
        self.borrowed_total: dict[str, int] = {}
        self.reserve_idle: dict[str, int] = {}
        #: Per type, the idle quota of the shares that lend (not RESERVE).
        self.lend_idle: dict[str, int] = {}
        self.stamp: dict[str, int] = {}
        #: Per type, the capacity no share's limit covers.
        self.unassigned: dict[str, int] = {}
        self._stamp_counter = 0
        #: Shares the scheduling pass must look at (dict as an ordered set), and the
        #: STRICT_FIFO shares whose head is known to fail until its type's stamp changes.
        self.active: dict[ShareRuntime, None] = {}
        self.parked: dict[str, list[ShareRuntime]] = {}
        #: BEST_EFFORT_FIFO shares whose whole queue is known to fail: the stamps of
        #: their queue's instance types and the epoch when they went dormant.
        self.dormant: dict[ShareRuntime, tuple[dict[str, int], int]] = {}
        #: The pass in progress: failing sweeps so far and shares with set-aside jobs.
        self.in_pass = False
        self.failing_sweeps = 0
        self.set_aside_shares: dict[ShareRuntime, None] = {}
        #: Outside a pass, a dormant share parked on a type that changed is woken only
        #: when ``wake_filter(ledger, share, type)`` holds (None: always woken). It must
        #: be False only when no queued job of the type in the share can start now
        #: (:func:`~.viability.may_start_some`); the share then stays dormant, with
        #: the type's new stamp in its record, exactly as if it had woken, tried them
        #: all and gone back to sleep.
        self.wake_filter: Callable[[QuotaLedger, ShareRuntime, str], bool] | None = None
        self.meter = UsageMeter(start)
        self._recompute_all(start)

    # -- reading ---------------------------------------------------------------------

    def types(self) -> list[str]:
        """Every instance type in the capacity or in some share's limits, sorted."""
        found = set(self.capacity)
        for share in self.share_list:
            found.update(share.limits)
        return sorted(found)

    def activate(self, share: ShareRuntime) -> None:
        """The share's queue or an instance type it waits on changed: look at it again.

        A dormant BEST_EFFORT_FIFO share woken during a pass first catches up with the
        set-asides the pass made so far (:meth:`_catch_up`).
        """
        record = self.dormant.pop(share, None)
        if record is not None and self.in_pass and self.failing_sweeps:
            self._catch_up(share, *record)
        self.active[share] = None

    def activate_all(self) -> None:
        """Priorities or configurations changed: every share's head is worth a look."""
        self.parked.clear()
        self.dormant.clear()
        for share in self.share_list:
            self.active[share] = None

    def park(self, share: ShareRuntime, instance_type: str) -> None:
        """The share's head cannot start until the state of ``instance_type`` changes."""
        self.active.pop(share, None)
        self.parked.setdefault(instance_type, []).append(share)

    def make_dormant(self, share: ShareRuntime, stamps: dict[str, int], epoch: int) -> None:
        """A BEST_EFFORT_FIFO share whose every job is known to fail in the current state
        sleeps until one of the types in ``stamps`` changes or its queue does."""
        self.active.pop(share, None)
        self.dormant[share] = (stamps, epoch)
        for u in stamps:
            self.parked.setdefault(u, []).append(share)

    def keep_dormant(self, share: ShareRuntime, instance_type: str) -> None:
        """Outside a pass: the dormant share's jobs of ``instance_type`` changed but none
        can start now; it stays dormant, waiting on the type at its current stamp."""
        stamps = self.dormant[share][0]
        if instance_type not in stamps:
            self.parked.setdefault(instance_type, []).append(share)
        stamps[instance_type] = self.stamp.get(instance_type, 0)

    def _catch_up(self, share: ShareRuntime, stamps: dict[str, int], epoch: int) -> None:
        """Set aside the heads a dormant share would have set aside in this pass so far.

        While dormant its state was unchanged, so in each failing sweep its head was a
        job known to fail (in the state given by ``stamps``) and was set aside: replaying
        that is exactly what the pass would have done.
        """
        queue = share.queue
        for _ in range(self.failing_sweeps):
            job = queue.head(stamps) if queue.size else None
            if job is None:
                break
            job.failed_epoch = epoch
            job.failed_stamp = stamps.get(job.instance_type, 0)
            queue.set_aside(job, stamps)
        self.set_aside_shares[share] = None

    @property
    def change_count(self) -> int:
        """Grows with every change of any ``used`` value or configuration."""
        return self._stamp_counter

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
        """``job`` of ``share`` starts holding its instances (it entered SCHEDULED)."""
        u = job.instance_type
        self.meter.touch(self, share, u, now)
        self._change_used(share, u, job.count)
        share.holding.setdefault(u, {})[job] = None

    def release(self, share: ShareRuntime, job: Job, now: float) -> None:
        """``job`` of ``share`` stops holding its instances."""
        u = job.instance_type
        self.meter.touch(self, share, u, now)
        del share.holding[u][job]
        self._change_used(share, u, -job.count)

    def reconfigure(self, share: ShareRuntime, config: ShareConfig, now: float) -> None:
        """Apply a share's new configuration and recompute every per-type sum."""
        self.meter.flush(self, now)
        share.configure(config)
        self._recompute_all(now)

    def _change_used(self, share: ShareRuntime, u: str, delta: int) -> None:
        old_b = share.borrowed(u)
        old_i = share.idle(u)
        share.used[u] = share.used.get(u, 0) + delta
        self.free[u] = self.free.get(u, 0) - delta
        self.borrowed_total[u] = self.borrowed_total.get(u, 0) + share.borrowed(u) - old_b
        if share.reserve:
            self.reserve_idle[u] = self.reserve_idle.get(u, 0) + share.idle(u) - old_i
        else:
            self.lend_idle[u] = self.lend_idle.get(u, 0) + share.idle(u) - old_i
        self._stamp_counter += 1
        self.stamp[u] = self._stamp_counter
        parked = self.parked.pop(u, None)
        if parked:
            self._wake(parked, u)

    def _wake(self, parked: list[ShareRuntime], u: str) -> None:
        """Activate the shares parked on type ``u``, whose stamp changed (see
        :attr:`wake_filter` for the dormant ones left asleep)."""
        wake_filter = self.wake_filter
        if wake_filter is None or self.in_pass:
            for waiting in parked:
                self.activate(waiting)
            return
        asleep: dict[ShareRuntime, None] = {}
        for waiting in parked:
            record = self.dormant.get(waiting)
            if record is not None and (waiting in asleep or not wake_filter(self, waiting, u)):
                record[0][u] = self.stamp[u]
                asleep[waiting] = None
            else:
                self.activate(waiting)
        if asleep:
            self.parked.setdefault(u, []).extend(asleep)

    def _recompute_all(self, now: float) -> None:
        self.activate_all()
        for u in self.types():
            covered = sum(s.limits.get(u, 0) for s in self.share_list)
            self.unassigned[u] = max(0, self.capacity.get(u, 0) - covered)
            used = sum(s.used.get(u, 0) for s in self.share_list)
            self.free[u] = self.capacity.get(u, 0) - used
            self.borrowed_total[u] = sum(s.borrowed(u) for s in self.share_list)
            self.reserve_idle[u] = sum(s.idle(u) for s in self.share_list if s.reserve)
            self.lend_idle[u] = sum(s.idle(u) for s in self.share_list if not s.reserve)
            self._stamp_counter += 1
            self.stamp[u] = self._stamp_counter
        self.meter.flush(self, now)
