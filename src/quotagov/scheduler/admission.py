"""Admission rules: within quota, borrowing (borrow limit, RESERVE rule), DISABLED shares.

From ``docs/simulator/spec.md`` ("Admission of a job j of share s needing c
instances of u"), which follows the AWS Batch quota-management pages (resource
sharing strategies and ``borrowLimit``):

1. Within quota: ``used(s,u) + c <= limit(s,u)``; the job starts when ``free(u) >= c``
   (otherwise cross-share preemption may make room).
2. Borrowing: only LEND_AND_BORROW shares, only when (1) does not hold; the borrowed
   amount after admission stays within ``limit x borrowLimit / 100`` (no cap for -1)
   and ``free(u) - sum of idle(r,u) over RESERVE shares r >= c``: the idle quota of a
   RESERVE share is never lent. Borrowing never preempts.
3. A DISABLED share accepts no new jobs (:func:`accepts_submissions`).

Every function takes ``released``: instances the caller plans to free first (the
in-share preemption search asks "could it be admitted once these victims are gone?").
Those instances are assumed to be the share's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from quotagov.scheduler.models import UNLIMITED_BORROW

if TYPE_CHECKING:  # the ledger uses these rules (no import cycle at run time)
    from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
    from quotagov.scheduler.state import Job


def accepts_submissions(share: ShareRuntime) -> bool:
    """Rule 3: a share accepts new jobs only while its ``state`` is ENABLED."""
    return share.enabled


def is_within_quota(share: ShareRuntime, job: Job, released: int = 0) -> bool:
    """Rule 1's condition: ``used(s,u) - released + c <= limit(s,u)`` (and a limit exists)."""
    u = job.instance_type
    limit = share.limits.get(u)
    if limit is None:
        return False
    return share.used.get(u, 0) - released + job.count <= limit


def fits_in_free(ledger: QuotaLedger, job: Job, released: int = 0) -> bool:
    """``free(u) + released >= c``."""
    return ledger.free.get(job.instance_type, 0) + released >= job.count


def within_borrow_limit(share: ShareRuntime, job: Job, released: int = 0) -> bool:
    """Rule 2's cap: borrowed after admission ``<= limit x borrowLimit / 100`` (-1: no cap)."""
    borrow_limit = share.borrow_limit
    if borrow_limit == UNLIMITED_BORROW:
        return True
    u = job.instance_type
    limit = share.limits.get(u, 0)
    borrowed_after = share.used.get(u, 0) - released + job.count - limit
    return borrowed_after * 100 <= limit * borrow_limit


def lendable_free(ledger: QuotaLedger, instance_type: str, released: int = 0) -> int:
    """``free(u) + released - sum of idle(r,u) over RESERVE shares`` (never lent)."""
    return ledger.free.get(instance_type, 0) + released - ledger.reserve_idle.get(instance_type, 0)


def may_borrow(ledger: QuotaLedger, share: ShareRuntime, job: Job, released: int = 0) -> bool:
    """Rule 2: the job may start now by borrowing idle capacity."""
    if not share.lend_and_borrow or job.instance_type not in share.limits:
        return False
    if is_within_quota(share, job, released):
        return False
    if not within_borrow_limit(share, job, released):
        return False
    return lendable_free(ledger, job.instance_type, released) >= job.count


def may_start_any(ledger: QuotaLedger, share: ShareRuntime, u: str) -> bool:
    """False when no job of type ``u`` of ``share`` can start now by any step, whatever
    its count and priority (a necessary condition only). From the rules: steps 2 and 3
    need room within quota (rule 1) and a free instance or another share's borrowed
    one to reclaim; step 5 a job of the type the share holds, as a victim (in-share
    preemption); step 4 a LEND_AND_BORROW share below its borrow limit and lendable
    free instances (rule 2)."""
    limit = share.limits.get(u)
    if limit is None:
        return False
    used = share.used.get(u, 0)
    # within quota there is room only below the limit, where the share borrows nothing
    if used < limit and (ledger.free.get(u, 0) > 0 or ledger.borrowed_total.get(u, 0) > 0):
        return True
    if share.in_share_enabled and used > 0:
        return True
    if not share.lend_and_borrow or lendable_free(ledger, u) < 1:
        return False
    cap = share.borrow_limit
    return cap == UNLIMITED_BORROW or (used + 1 - limit) * 100 <= limit * cap
