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

Speed, with no change to the outcome: what the pass may skip (heads known to fail,
parked STRICT_FIFO shares, dormant and exhausted BEST_EFFORT_FIFO shares, a whole pass
when nothing changed since a settled one) is kept by one object, :class:`~.memo.PassMemo`,
which also decides when it stops holding. This keeps a pass cheap however many shares
and queued jobs there are.
"""

from __future__ import annotations

from typing import Protocol

from quotagov.scheduler.admission import fits_in_free, is_within_quota, may_borrow
from quotagov.scheduler.memo import PassMemo
from quotagov.scheduler.preemption import in_share_plan, reclaim_victims
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.state import Job


class Actuator(Protocol):
    """What the pass needs from the engine to carry out its decisions."""

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


def run_pass(ledger: QuotaLedger, memo: PassMemo, act: Actuator) -> None:
    """Run the scheduling pass at the current time, unless ``memo`` knows that nothing
    changed since a pass that ended settled (then it would start nothing)."""
    if memo.is_settled():
        return
    memo.pass_ran(_sweeps(ledger, memo, act))


def _sweeps(ledger: QuotaLedger, memo: PassMemo, act: Actuator) -> bool:
    """Run one scheduling pass; set-aside heads are put back in their queues at the end.

    Returns:
        True when the pass ends *settled* (see :meth:`PassMemo.sweeps_ended`).
    """
    stamps = ledger.stamp
    memo.begin_pass()
    try:
        while True:
            # Heads that may start, in cross-share order ("first" = earliest submitted,
            # then earlier in the input); and memoized heads known to fail as things are.
            live: list[tuple[float, int, Job, ShareRuntime]] = []
            known_failing: list[tuple[Job, ShareRuntime]] = []
            for share in memo.shares_to_look_at():
                queue = share.queue
                job = queue.head(stamps) if queue.size else None
                if job is None:
                    memo.headless(share)
                    continue
                if memo.known_failing(job):
                    if share.best_effort:
                        known_failing.append((job, share))
                    else:
                        memo.park(share, job.instance_type)
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
                    memo.job_started()
                    continue
                for _, _, job, share in live:
                    memo.remember_failing(job)
                    if share.best_effort:
                        known_failing.append((job, share))
                    else:
                        memo.park(share, job.instance_type)
            # A whole sweep started nothing: BEST_EFFORT_FIFO heads are set aside.
            if not known_failing:
                return memo.sweeps_ended()
            for job, share in known_failing:
                share.queue.set_aside(job, stamps)
            memo.heads_set_aside(share for _, share in known_failing)
    finally:
        for share in memo.end_pass():
            share.queue.restore()


def _first(item: tuple[float, int, Job, ShareRuntime]) -> tuple[float, int]:
    """Across shares: earliest submitted first, then earlier in the input."""
    return (item[0], item[1])
