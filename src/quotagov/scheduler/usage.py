"""Instance-second integrals of usage per share and instance type, for the metrics.

Each quantity is piecewise constant between changes of its instance type, so the meter
integrates a type only when that type changes (``advance``), never per event.

Attributing lent instances is this project's documented choice (AWS does not say which
lender an instance came from): borrowed instances of a type come first from capacity
that no share's limit covers, then from the idle quota of the non-RESERVE shares in
proportion to their idle quota (each lending at most its idle quota).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from quotagov.scheduler.quota import QuotaLedger

#: Integral names, in instance-seconds.
USED, BORROWED, LENT, WITHIN, LIMIT = range(5)


class UsageMeter:
    """Integrals ``[used, borrowed, lent, within-limit used, limit]`` per (share, type).

    Args:
        start: the time integration starts, in seconds.
    """

    def __init__(self, start: float) -> None:
        self.start = start
        self._last: dict[str, float] = {}
        self.integrals: dict[tuple[str, str], list[float]] = {}

    def advance(self, ledger: QuotaLedger, instance_type: str, now: float) -> None:
        """Integrate ``instance_type``'s current values from its last change to ``now``."""
        last = self._last.get(instance_type, self.start)
        self._last[instance_type] = now
        dt = now - last
        if dt <= 0:
            return
        shares = ledger.share_list
        u = instance_type
        borrowed_total = ledger.borrowed_total.get(u, 0)
        lent: dict[str, float] = {}
        if borrowed_total > 0:
            covered = sum(s.limit(u) for s in shares)
            from_unassigned = min(borrowed_total, max(0, ledger.capacity.get(u, 0) - covered))
            rest = borrowed_total - from_unassigned
            if rest > 0:
                lenders = [(s.name, s.idle(u)) for s in shares if not s.reserve and s.idle(u)]
                pool = sum(i for _, i in lenders)
                if pool > 0:
                    share_of = min(1.0, rest / pool)
                    lent = {name: idle * share_of for name, idle in lenders}
        for s in shares:
            used = s.used.get(u, 0)
            limit = s.limit(u)
            if not used and not limit:
                continue
            acc = self.integrals.get((s.name, u))
            if acc is None:
                acc = self.integrals[(s.name, u)] = [0.0, 0.0, 0.0, 0.0, 0.0]
            acc[USED] += used * dt
            acc[BORROWED] += max(0, used - limit) * dt
            acc[LENT] += lent.get(s.name, 0.0) * dt
            acc[WITHIN] += min(used, limit) * dt
            acc[LIMIT] += limit * dt
