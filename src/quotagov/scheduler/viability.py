"""Whether any queued job of one instance type in a share could start now (a quick
necessary condition, used to leave a dormant BEST_EFFORT_FIFO share asleep).

A job of share ``s`` needing ``c`` instances of ``u`` can start in the scheduling pass
(:mod:`.cycle`) only if one of these holds (each follows from the step's rule in
:mod:`.admission` and :mod:`.preemption`; all quantities are the ledger's, in
instances):

- steps 2 and 3: within quota (``used(s,u) + c <= limit(s,u)``) and either
  ``free(u) >= c`` or other shares hold borrowed instances of ``u``;
- step 4: ``s`` is LEND_AND_BORROW, its borrowed amount after admission stays within
  its borrow limit, and ``free(u) - idle of RESERVE shares >= c``;
- step 5: ``s`` has in-share preemption ENABLED and holds a job of ``u`` with a
  strictly lower ``schedulingPriority``.

Each condition is easiest for the smallest count and the highest priority among the
share's queued jobs of ``u``, so testing those covers every such job.
"""

from __future__ import annotations

from quotagov.scheduler.admission import lendable_free
from quotagov.scheduler.models import UNLIMITED_BORROW
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime


def may_start_some(ledger: QuotaLedger, share: ShareRuntime, instance_type: str) -> bool:
    """False only when no RUNNABLE job of ``instance_type`` in ``share`` can start now.

    Args:
        ledger: the quota state (outside a scheduling pass).
        share: the share; its queue must have nothing set aside.
        instance_type: the type ``u``.
    """
    u = instance_type
    limit = share.limits.get(u)
    if limit is None:
        return False  # such jobs never start (never the head)
    extremes = share.queue.type_extremes(u)
    if extremes is None:
        return False
    count, priority = extremes
    used = share.used.get(u, 0)
    free = ledger.free.get(u, 0)
    if used + count <= limit and (
        free >= count or ledger.borrowed_total.get(u, 0) - share.borrowed(u) > 0
    ):
        return True
    if share.lend_and_borrow and lendable_free(ledger, u) >= count:
        borrow_limit = share.borrow_limit
        if borrow_limit == UNLIMITED_BORROW or (used + count - limit) * 100 <= limit * borrow_limit:
            return True
    if share.in_share_enabled:
        for job in share.holding.get(u, ()):
            if job.priority < priority:
                return True
    return False
