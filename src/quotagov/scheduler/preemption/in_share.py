"""In-share preemption: a job displaces strictly lower-priority jobs of its own share.

Rule (``docs/simulator/spec.md``, "In-share preemption"; AWS Batch
``preemptionConfiguration.inSharePreemption``): when the job cannot start otherwise,
its share has in-share preemption ENABLED and holds SCHEDULED, STARTING or RUNNING
jobs of its type with strictly lower ``schedulingPriority`` (equal priority never
preempts), victims of its own share are taken in :func:`~.victims.victim_order_key` order until,
after their release, the job can be admitted: within quota, with any instances still
missing reclaimed from other shares' borrowed ones by cross-share preemption; or by
borrowing, where its share may borrow. The "no more than needed, or none" rule holds
for the own-share victims, then for the reclaimed ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from quotagov.scheduler.admission import is_within_quota, lendable_free, may_borrow
from quotagov.scheduler.models import UNLIMITED_BORROW
from quotagov.scheduler.preemption.cross_share import reclaim_victims
from quotagov.scheduler.preemption.victims import keep_back
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.state import Job


@dataclass(frozen=True, slots=True)
class InSharePlan:
    """The outcome of the in-share search.

    Attributes:
        own_victims: jobs of the same share to preempt (IN_SHARE), in the order taken.
        reclaimed: jobs of other shares to preempt (CROSS_SHARE), in the order taken.
        borrowed: True when the job is then admitted by borrowing, False within quota.
    """

    own_victims: list[Job]
    reclaimed: list[Job]
    borrowed: bool


def _admission_after(
    ledger: QuotaLedger, share: ShareRuntime, job: Job, victims: list[Job]
) -> InSharePlan | None:
    released = sum(v.count for v in victims)
    if is_within_quota(share, job, released):
        reclaimed = reclaim_victims(ledger, share, job, released)
        if reclaimed is None:
            return None
        return InSharePlan(list(victims), reclaimed, borrowed=False)
    if may_borrow(ledger, share, job, released):
        return InSharePlan(list(victims), [], borrowed=True)
    return None


def _may_fit(ledger: QuotaLedger, share: ShareRuntime, job: Job, ordered: list[Job]) -> bool:
    """False when even releasing every strictly lower-priority job the share holds
    (``R`` instances) cannot admit ``job`` (a necessary condition only, from the
    admission rules of ``docs/simulator/spec.md``): within quota needs
    ``count <= limit - used + R``; borrowing needs a LEND_AND_BORROW share,
    ``count <= limit - used + R + floor(limit x borrowLimit / 100)`` (no cap at -1) and
    ``count <= lendable free + R``. Every subset of those victims releases at most
    ``R``, so the search of :func:`in_share_plan` would find nothing either."""
    u = job.instance_type
    priority = job.priority
    released = 0
    for held in ordered:
        if held.priority >= priority:
            break
        released += held.count
    limit = share.limits.get(u, 0)
    room = limit - share.used.get(u, 0) + released
    count = job.count
    if count <= room:
        return True
    if not share.lend_and_borrow or lendable_free(ledger, u, released) < count:
        return False
    cap = share.borrow_limit
    return cap == UNLIMITED_BORROW or (count - room) * 100 <= limit * cap


def in_share_plan(ledger: QuotaLedger, share: ShareRuntime, job: Job) -> InSharePlan | None:
    """Plan the in-share preemption that would let ``job`` start, or None (nothing to do).

    The caller has checked that the job cannot start within quota, by reclaim or by
    borrowing. Returns None when in-share preemption is DISABLED, when there is no
    strictly lower-priority job of the type in the share, or when even all of them
    (and all reclaimable instances) would not make room.
    """
    if not share.in_share_enabled or job.instance_type not in share.limits:
        return None
    # the holding jobs in victim order: those of strictly lower priority come first
    priority = job.priority
    ordered = share.victim_order(job.instance_type)
    if not _may_fit(ledger, share, job, ordered):
        return None
    taken: list[Job] = []
    for candidate in ordered:
        if candidate.priority >= priority:
            return None
        taken.append(candidate)
        if _admission_after(ledger, share, job, taken) is not None:
            break
    else:
        return None

    def enough(victims: list[Job]) -> bool:
        return _admission_after(ledger, share, job, victims) is not None

    needed = keep_back(taken, enough)
    return _admission_after(ledger, share, job, needed)
