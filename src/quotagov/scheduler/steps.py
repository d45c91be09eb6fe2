"""The four ways a head starts (steps 2 to 5 of a scheduling pass), and their actuator.

Rules (``../shared/spec/scenario-format.md``, "Order of a scheduling pass" and
"Admission"): step 2 within quota in free capacity; step 3 within quota, reclaiming
other shares' borrowed instances (:func:`~.preemption.reclaim_victims`); step 4
borrowing idle capacity (:func:`~.admission.may_borrow`, never preempts); step 5
in-share preemption of strictly lower-priority jobs (:func:`~.preemption.in_share_plan`).
Each step function either starts the job (with the preemptions it needs) and returns
True, or changes nothing and returns False. :func:`first_step` only plans.
"""

from __future__ import annotations

from typing import Protocol

from quotagov.scheduler.admission import fits_in_free, is_within_quota, may_borrow
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


def first_step(ledger: QuotaLedger, share: ShareRuntime, job: Job) -> int | None:
    """The index in :data:`STEPS` (0 to 3 for the spec's steps 2 to 5) of the first step
    by which ``job`` of ``share`` can start now, or None. Plans only: nothing changes."""
    u = job.instance_type
    if is_within_quota(share, job):
        if fits_in_free(ledger, job):
            return 0
        if ledger.borrowed_total.get(u, 0) - share.borrowed(u) > 0 and reclaim_victims(
            ledger, share, job
        ):
            return 1
    elif may_borrow(ledger, share, job):
        return 2
    if share.in_share_enabled and in_share_plan(ledger, share, job) is not None:
        return 3
    return None
