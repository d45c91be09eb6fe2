"""The scheduling pass, run at every event time.

Order (``../shared/spec/scenario-format.md``, "Order of a scheduling pass"):

1. Each share's RUNNABLE jobs are in queue order (:mod:`.queueing`); its first job is
   its head. STRICT_FIFO: a head that cannot start blocks its share. BEST_EFFORT_FIFO:
   a head that cannot start in steps 2 to 5 is set aside until the next event time
   and the next job of its share becomes the head.
2. Heads that fit within quota in free capacity start.
3. Heads within quota whose instances are lent out reclaim them
   (:func:`~.preemption.reclaim_victims`).
4. Heads of LEND_AND_BORROW shares borrow (:func:`~.admission.may_borrow`).
5. Heads that still cannot start may preempt lower-priority jobs of their own share
   (:func:`~.preemption.in_share_plan`).

Across shares, "first" always means earliest submitted, then earlier in the input
(the FIFO idle-resource assignment of the scheduling policy). Whenever a job starts,
the pass begins again at step 2; it ends when no step can start anything.

This project's documented reading of "set aside": a *sweep* tries steps 2 to 5 over
the current heads, first step first and, within a step, first head first; the first
success restarts the sweep. When a whole sweep starts nothing, every BEST_EFFORT_FIFO
head is set aside at once and the next sweep runs with the new heads.

Where AWS is silent, these are this project's documented choices (per the spec):
the step order above is a strict priority between steps (a head that fits within quota
anywhere starts before any reclaim, any reclaim before any borrowing, any borrowing
before any in-share preemption); ties between heads are broken by submission time, then
input order, never by share.

Speed, with no change to the outcome: a head whose attempt failed is not tried again
while nothing it depends on changed (the ledger's stamp of its instance type and the
engine's epoch, which moves with every priority or share update), and a STRICT_FIFO
share with such a head is *parked* (not even looked at) until its instance type's
stamp changes or its queue does (:meth:`QuotaLedger.park`). This keeps a pass cheap
however many shares and queued jobs there are. Under BEST_EFFORT_FIFO, a share whose
jobs are all set aside or passed over leaves the sweeps until the next start (only a
start or preemption can give it a head again), and a dormant share sleeps through a
change that none of its jobs of the changed type could use
(:attr:`QuotaLedger.wake_filter`).
"""

from __future__ import annotations

from typing import Protocol

from quotagov.scheduler.admission import fits_in_free, is_within_quota, may_borrow
from quotagov.scheduler.preemption import in_share_plan, reclaim_victims
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.state import Job


class Actuator(Protocol):
    """What the pass needs from the engine to carry out its decisions."""

    @property
    def epoch(self) -> int:
        """A counter that changes with every configuration or priority change."""
        ...

    def start(self, job: Job, share: ShareRuntime, borrowed: bool) -> None:
        """Start the head ``job`` of ``share`` (it enters SCHEDULED)."""
        ...

    def preempt(self, victim: Job, kind: str, for_job: Job) -> None:
        """Preempt ``victim`` (``kind`` CROSS_SHARE or IN_SHARE) to make room for ``for_job``."""
        ...


def _start_within_quota(ledger: QuotaLedger, act: Actuator, share: ShareRuntime, job: Job) -> bool:
    """Step 2: within quota and in free capacity."""
    if is_within_quota(share, job) and fits_in_free(ledger, job):
        act.start(job, share, borrowed=False)
        return True
    return False


def _start_by_reclaim(ledger: QuotaLedger, act: Actuator, share: ShareRuntime, job: Job) -> bool:
    """Step 3: within quota, reclaiming instances other shares borrowed."""
    if not is_within_quota(share, job):
        return False
    victims = reclaim_victims(ledger, share, job)
    if not victims:
        return False
    for victim in victims:
        act.preempt(victim, "CROSS_SHARE", job)
    act.start(job, share, borrowed=False)
    return True


def _start_by_borrowing(ledger: QuotaLedger, act: Actuator, share: ShareRuntime, job: Job) -> bool:
    """Step 4: borrowing idle capacity (never preempts)."""
    if may_borrow(ledger, share, job):
        act.start(job, share, borrowed=True)
        return True
    return False


def _start_by_in_share_preemption(
    ledger: QuotaLedger, act: Actuator, share: ShareRuntime, job: Job
) -> bool:
    """Step 5: in-share preemption of strictly lower-priority jobs (plus any reclaim)."""
    plan = in_share_plan(ledger, share, job)
    if plan is None:
        return False
    for victim in plan.own_victims:
        act.preempt(victim, "IN_SHARE", job)
    for victim in plan.reclaimed:
        act.preempt(victim, "CROSS_SHARE", job)
    act.start(job, share, borrowed=plan.borrowed)
    return True


STEPS = (
    _start_within_quota,
    _start_by_reclaim,
    _start_by_borrowing,
    _start_by_in_share_preemption,
)


def run_pass(ledger: QuotaLedger, act: Actuator) -> bool:
    """Run one scheduling pass; set-aside heads are put back in their queues at the end.

    Returns:
        True when the pass ends *settled*: running it again on the same state (same
        queues, stamps and epoch) would start nothing. False only when a job set aside
        under BEST_EFFORT_FIFO was set aside before a later start changed its
        instance type's state (at the next event time it deserves another try).
    """
    started = 0
    stamps = ledger.stamp
    ledger.in_pass = True
    ledger.failing_sweeps = 0
    set_aside_in = ledger.set_aside_shares
    set_aside_in.clear()
    # BEST_EFFORT_FIFO shares with jobs but no head: looked at again only after a start.
    exhausted: list[ShareRuntime] = []
    settled = False
    try:
        while True:
            epoch = act.epoch
            # Heads that may start, in cross-share order ("first" = earliest submitted,
            # then earlier in the input); and memoized heads known to fail as things are.
            live: list[tuple[float, int, Job, ShareRuntime]] = []
            known_failing: list[tuple[Job, ShareRuntime]] = []
            active = ledger.active
            for share in list(active):
                queue = share.queue
                job = queue.head(stamps) if queue.size else None
                if job is None:
                    # Nothing startable: back on the next push or reconfiguration. A
                    # BEST_EFFORT_FIFO share whose jobs are only passed over comes back
                    # after the next start (a start or preemption of their type makes
                    # them eligible again; nothing else in the pass can).
                    del active[share]
                    if share.best_effort and queue.size:
                        exhausted.append(share)
                    continue
                if job.failed_epoch == epoch and job.failed_stamp == stamps.get(
                    job.instance_type, 0
                ):
                    if share.best_effort:
                        known_failing.append((job, share))
                    else:
                        ledger.park(share, job.instance_type)
                    continue
                live.append((job.submitted_at, job.order, job, share))
            if live:
                live.sort(key=_first)
                progressed = False
                for step in STEPS:
                    for _, _, job, share in live:
                        if step(ledger, act, share, job):
                            progressed = True
                            break
                    if progressed:
                        break
                if progressed:
                    started += 1
                    for share in exhausted:
                        active[share] = None
                    exhausted.clear()
                    continue
                for _, _, job, share in live:
                    job.failed_epoch = epoch
                    job.failed_stamp = stamps.get(job.instance_type, 0)
                    if share.best_effort:
                        known_failing.append((job, share))
                    else:
                        ledger.park(share, job.instance_type)
            # A whole sweep started nothing: BEST_EFFORT_FIFO heads are set aside.
            if not known_failing:
                settled = True
                for share in set_aside_in:
                    waiting = share.queue.known_failing_types(epoch, stamps)
                    if waiting is None:
                        settled = False
                    else:
                        ledger.make_dormant(share, waiting, epoch)
                return settled
            ledger.failing_sweeps += 1
            for job, share in known_failing:
                share.queue.set_aside(job, stamps)
                set_aside_in[share] = None
    finally:
        ledger.in_pass = False
        for share in exhausted:
            if share not in set_aside_in:  # only passed over (no capacity limit for them)
                ledger.active[share] = None
        for share in set_aside_in:
            share.queue.restore()
            if share not in ledger.dormant:
                ledger.activate(share)
        set_aside_in.clear()


def _first(item: tuple[float, int, Job, ShareRuntime]) -> tuple[float, int]:
    """Across shares: earliest submitted first, then earlier in the input."""
    return (item[0], item[1])
