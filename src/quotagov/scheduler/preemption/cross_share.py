"""Cross-share preemption (reclaim) of borrowed instances for a within-quota job.

Rule (``docs/simulator/spec.md``, "Cross-share preemption"; AWS Batch:
cross-share preemption always returns borrowed capacity to a lender that has work):
when a within-quota job does not fit because other shares hold borrowed instances of
its type, the candidates are the SCHEDULED, STARTING or RUNNING jobs of that type in
other shares that hold borrowed instances (:meth:`QuotaLedger.borrowed_holders`; a
capacity-limit cut makes the excess count as borrowed, RESERVE shares included).
Victims are taken in :func:`victim_order_key` order until the job fits, then the ones
not needed are kept back (:func:`keep_back`). If the job cannot fit even after all
candidates, nothing is preempted.
"""

from __future__ import annotations

from quotagov.scheduler.preemption.victims import keep_back, victim_order_key
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.state import Job


def reclaim_victims(
    ledger: QuotaLedger, share: ShareRuntime, job: Job, released: int = 0
) -> list[Job] | None:
    """Plan the reclaim of other shares' borrowed instances so that ``job`` fits.

    Args:
        ledger: the quota state.
        share: the job's share (its own jobs are never candidates here).
        job: the RUNNABLE job needing ``job.count`` instances of ``job.instance_type``.
        released: instances already planned to be freed (in-share victims).

    Returns:
        The victims (possibly empty when the job already fits), or None when even all
        candidates would not make room (then nothing may be preempted).
    """
    u = job.instance_type
    need = job.count
    free = ledger.free.get(u, 0) + released
    if free >= need:
        return []
    if ledger.borrowed_total.get(u, 0) - share.borrowed(u) <= 0:
        return None
    others = [s for s in ledger.share_list if s is not share and s.borrowed(u) > 0]
    taken: list[Job] = []
    removed: dict[str, set[Job]] = {s.name: set() for s in others}
    gained = 0
    while free + gained < need:
        best: Job | None = None
        best_key: tuple[int, int] | None = None
        for other in others:
            for candidate in ledger.borrowed_holders(other, u, removed[other.name]):
                key = victim_order_key(candidate)
                if best_key is None or key < best_key:
                    best, best_key = candidate, key
        if best is None:
            return None
        taken.append(best)
        removed[best.share].add(best)
        gained += best.count

    def enough(victims: list[Job]) -> bool:
        return free + sum(v.count for v in victims) >= need

    return keep_back(taken, enough)
