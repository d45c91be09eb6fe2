"""The four ways a head starts (steps 2 to 5 of a scheduling pass), and their actuator.

Rules (``docs/simulator/spec.md``, "Order of a scheduling pass" and
"Admission"): step 2 within quota in free capacity; step 3 within quota, reclaiming
other shares' borrowed instances (:func:`~.preemption.reclaim_victims`); step 4
borrowing idle capacity (:func:`~.admission.may_borrow`, never preempts); step 5
in-share preemption of strictly lower-priority jobs (:func:`~.preemption.in_share_plan`).
Each step function either starts the job (with the preemptions it needs) and returns
True, or changes nothing and returns False. :func:`first_step` only plans.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from quotagov.scheduler.admission import (
    fits_in_free,
    is_within_quota,
    lendable_free,
    may_borrow,
    may_start_any,
)
from quotagov.scheduler.models import UNLIMITED_BORROW
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


class StartBounds(NamedTuple):
    """What any job of one instance type ``u`` in one share could start with now (in
    instances), for a quick test before the steps' own rules (:func:`could_start`).

    Attributes:
        room: ``limit(s,u) - used(s,u)``: the largest count within quota (rule 1).
        quota_max: the largest count steps 2 and 3 could start: ``room``, or at most
            ``free(u)`` when no other share holds borrowed instances of ``u``.
        borrow_max: the largest count step 4 could start (0 when the share does not
            borrow): the lendable free instances, within the borrow limit.
        lowest_held: the lowest ``schedulingPriority`` of the share's jobs holding
            ``u`` when in-share preemption is ENABLED (step 5), else None.
        held: those jobs in victim order (priority ascending; empty when None).
        lendable: the lendable free instances when the share borrows, else None.
        borrow_cap: ``floor(limit x borrowLimit / 100)``, the most it may borrow
            (None: no cap).
    """

    room: int
    quota_max: int
    borrow_max: int
    lowest_held: int | None
    held: list[Job]
    lendable: int | None
    borrow_cap: int | None


_new_bounds = tuple.__new__  # the named tuple's constructor without its keyword handling
_NONE_HELD: list[Job] = []


def start_bounds(ledger: QuotaLedger, share: ShareRuntime, u: str) -> StartBounds | None:
    """The :class:`StartBounds` of type ``u`` in ``share``; None when the share has no
    capacity limit for ``u`` (no job of the type can start). From the rules: steps 2 and
    3 need the job within quota and free instances or other shares' borrowed ones;
    step 4 a LEND_AND_BORROW share, the borrow limit and lendable free instances
    (:mod:`.admission`); step 5 in-share preemption and strictly lower-priority jobs
    of the type held by the share, enough of them to admit the job once released
    (:mod:`.preemption.in_share`)."""
    limit = share.limits.get(u)
    if limit is None:
        return None
    used = share.used.get(u, 0)
    free = ledger.free.get(u, 0)
    room = limit - used
    own_borrowed = used - limit if used > limit else 0
    reclaimable = ledger.borrowed_total.get(u, 0) - own_borrowed > 0
    quota_max = room if reclaimable else min(room, free)
    borrow_max = 0
    lendable: int | None = None
    borrow_cap: int | None = None
    if share.lend_and_borrow:
        lendable = lendable_free(ledger, u)
        cap = share.borrow_limit
        if cap == UNLIMITED_BORROW:
            borrow_max = lendable
        else:
            borrow_cap = limit * cap // 100
            borrow_max = min(lendable, room + borrow_cap)
    lowest_held: int | None = None
    held = _NONE_HELD
    if share.in_share_enabled:
        held = share.victim_order(u)
        if held:
            lowest_held = held[0].priority
    return _new_bounds(
        StartBounds, (room, quota_max, borrow_max, lowest_held, held, lendable, borrow_cap)
    )


def could_start(bounds: StartBounds, count: int, priority: int) -> bool:
    """False when no step can start a job of ``count`` instances and ``priority`` under
    ``bounds`` (a necessary condition only: True means "try the steps").

    Step 5 needs strictly lower-priority jobs held whose release (``R`` instances)
    could admit it: ``count <= room + R``, or by borrowing ``count <= lendable + R``
    within the borrow cap (the test of :mod:`.preemption.in_share` before its search).
    """
    if count <= bounds.quota_max or bounds.room < count <= bounds.borrow_max:
        return True
    lowest = bounds.lowest_held
    if lowest is None or lowest >= priority:
        return False
    released = 0
    for held in bounds.held:
        if held.priority >= priority:
            break
        released += held.count
    room = bounds.room + released
    if count <= room:
        return True
    lendable = bounds.lendable
    if lendable is None or count > lendable + released:
        return False
    cap = bounds.borrow_cap
    return cap is None or count - room <= cap


def own_state_excludes(bounds: StartBounds, count: int, priority: int) -> bool:
    """True when the share's own state alone rules out every step for a job of
    ``count`` instances and ``priority`` under ``bounds``, whatever the other shares
    hold: it is not within quota (``count > room + R``, ``R`` the instances of the
    strictly lower-priority jobs it holds when in-share preemption is ENABLED, else 0)
    and cannot borrow (no LEND_AND_BORROW, or ``count - room - R`` above the borrow
    cap). Then :func:`could_start` is False until the share's own use, holdings or
    configuration change (the rules of :mod:`.admission` and :mod:`.preemption.in_share`).
    """
    released = 0
    lowest = bounds.lowest_held
    if lowest is not None and lowest < priority:
        for held in bounds.held:
            if held.priority >= priority:
                break
            released += held.count
    over = count - bounds.room - released
    if over <= 0:
        return False
    if bounds.lendable is None:
        return True
    cap = bounds.borrow_cap
    return cap is not None and over > cap


def first_step(ledger: QuotaLedger, share: ShareRuntime, job: Job) -> int | None:
    """The index in :data:`STEPS` (0 to 3 for the spec's steps 2 to 5) of the first step
    by which ``job`` of ``share`` can start now, or None. Plans only: nothing changes.

    Most jobs that cannot start are told apart in O(1) by
    :func:`~.admission.may_start_any` and :func:`could_start`.
    """
    if not may_start_any(ledger, share, job.instance_type):
        return None
    bounds = start_bounds(ledger, share, job.instance_type)
    if bounds is None or not could_start(bounds, job.count, job.priority):
        return None
    return planned_step(ledger, share, job)


def planned_step(ledger: QuotaLedger, share: ShareRuntime, job: Job) -> int | None:
    """:func:`first_step` by the steps' own rules alone (no quick test)."""
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
