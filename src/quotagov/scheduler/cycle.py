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

This project's documented reading of "set aside" (the spec's sweeps): a *sweep* tries
steps 2 to 5 over the current heads, first step first and, within a step, first head
first; the first success restarts the sweep. When a whole sweep starts nothing, every
BEST_EFFORT_FIFO head is set aside at once and the next sweep runs with the new heads.
The code follows that as three phases per sweep (:func:`run_pass`): (1) collect the
heads and (3) set aside are done by the pass's memo, which knows which shares to look
at and which heads to skip; (2) find the first step that starts is done here.

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
from quotagov.scheduler.memo import Head, PassMemo
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


def cross_share_order(head: Head) -> tuple[float, int]:
    """Sort key of the heads within a step: the spec's "first" across shares.

    Criteria, in order:

    1. earliest ``submittedAt`` first;
    2. then earlier in the input (the job's registration order, unique).

    Never the share: two shares' heads are ordered as their jobs are.
    """
    job = head[0]
    return (job.submitted_at, job.order)


def run_pass(ledger: QuotaLedger, memo: PassMemo, act: Actuator) -> None:
    """Run the scheduling pass at the current time.

    The pass is a loop of sweeps; each sweep runs these phases:

    1. collect the heads (:meth:`PassMemo.heads`): each looked-at share's first job
       not set aside nor passed over; heads known to fail are not tried (the memo
       plays the part of Kueue's queue manager, which keeps inadmissible workloads
       out of the heads until something they wait on changes);
    2. find the first step that starts (:func:`_start_first`): steps 2 to 5 in strict
       priority, within a step the heads in :func:`cross_share_order`; a start ends
       the sweep and the next sweep begins at phase 1; when nothing starts, the heads
       tried are known to fail from then on (:meth:`PassMemo.failed`);
    3. set aside (:meth:`PassMemo.set_aside`): when the sweep started nothing, every
       BEST_EFFORT_FIFO head is set aside at once and the next sweep begins; with no
       head to set aside the pass ends.

    Set-aside jobs are put back in their queues when the pass ends. The whole pass is
    skipped when ``memo`` knows nothing changed since one that ended settled (it would
    start nothing).
    """
    if memo.is_settled():
        return
    memo.pass_ran(_sweeps(ledger, memo, act))


def _sweeps(ledger: QuotaLedger, memo: PassMemo, act: Actuator) -> bool:
    """The sweeps of one pass (:func:`run_pass`); set-aside jobs are put back at the end.

    Returns:
        True when the pass ends *settled* (see :meth:`PassMemo.sweeps_ended`).
    """
    memo.begin_pass()
    try:
        while True:
            live, failing = memo.heads()  # phase 1
            if live:
                if _start_first(ledger, act, live):  # phase 2
                    memo.job_started()
                    continue
                failing += memo.failed(live)
            if not failing:
                return memo.sweeps_ended()
            memo.set_aside(failing)  # phase 3
    finally:
        memo.end_pass()


def _start_first(ledger: QuotaLedger, act: Actuator, heads: list[Head]) -> bool:
    """Phase 2: start one head by the first step that can, trying every head (in
    :func:`cross_share_order`) at a step before any head at the next step.

    Returns:
        True when a job started (with the preemptions its step made).
    """
    heads.sort(key=cross_share_order)
    for step in STEPS:
        for job, share in heads:
            if step(ledger, act, share, job):
                return True
    return False
