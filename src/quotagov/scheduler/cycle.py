"""The scheduling pass, run at every event time.

Order (``docs/simulator/spec.md``, "Order of a scheduling pass"):

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

The sweeps (the spec's precise reading of "set aside"): a sweep tries steps 2 to 5
over the current heads, first step first and, within a step, first head first; the
first success ends the sweep. A sweep that starts nothing ends a STRICT_FIFO pass; under
BEST_EFFORT_FIFO it sets aside every current head at once (:mod:`.sweeps`).

Where AWS is silent, these are this project's documented choices (per the spec):
the step order above is a strict priority between steps (a head that fits within quota
anywhere starts before any reclaim, any reclaim before any borrowing, any borrowing
before any in-share preemption); ties between heads are broken by submission time, then
input order, never by share.

Speed, with no change to the outcome: under STRICT_FIFO, what the pass may skip
(heads known to fail, parked shares, a whole pass when nothing changed) is kept by
:class:`~.memo.PassMemo`; under BEST_EFFORT_FIFO, :mod:`.sweeps` counts runs of
failing sweeps at once.
"""

from __future__ import annotations

from quotagov.scheduler.memo import Head, PassMemo
from quotagov.scheduler.quota import QuotaLedger
from quotagov.scheduler.steps import STEPS, Actuator
from quotagov.scheduler.sweeps import best_effort_pass

__all__ = ["STEPS", "Actuator", "cross_share_order", "run_pass"]


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

    BEST_EFFORT_FIFO: :func:`~.sweeps.best_effort_pass`. STRICT_FIFO: a loop of
    sweeps; each takes the heads of the shares worth looking at (:meth:`PassMemo.heads`)
    and the first step by which each can start (:meth:`PassMemo.plan`: steps 2 to 5
    tried in order, kept while the state of its type is unchanged; a head that cannot
    start parks its share). Trying step 2 for every head, then step 3 for every head,
    and so on, starts the head with the earliest such step, the first in
    :func:`cross_share_order` among those with the same one; so that head starts, by
    that step, which ends the sweep, and the next one begins. A sweep in which no head
    can start ends the pass. The whole pass is skipped when ``memo`` knows nothing
    changed since the last one.
    """
    if ledger.best_effort:
        best_effort_pass(ledger, act)
        return
    if memo.is_settled():
        return
    while True:
        best: tuple[int, float, int] | None = None
        chosen: Head | None = None
        for head in memo.heads():
            job, share = head
            step = memo.plan(ledger, share, job)
            if step is None:
                continue
            key = (step, *cross_share_order(head))
            if best is None or key < best:
                best, chosen = key, head
        if best is None or chosen is None:
            # STRICT_FIFO sets nothing aside: the same pass again would start nothing.
            memo.pass_ran(True)
            return
        job, share = chosen
        if not STEPS[best[0]](ledger, act, share, job):
            raise RuntimeError(f"{job.name} was planned to start but did not")
