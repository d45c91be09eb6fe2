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
        u = instance_type
        last = self._last.get(u, self.start)
        self._last[u] = now
        dt = now - last
        if dt <= 0:
            return
        shares = ledger.type_shares.get(u, ())
        borrowed_total = ledger.borrowed_total.get(u, 0)
        share_of = 0.0
        if borrowed_total > 0:
            rest = borrowed_total - min(borrowed_total, ledger.unassigned.get(u, 0))
            if rest > 0:
                pool = sum(
                    max(0, s.limits.get(u, 0) - s.used.get(u, 0)) for s in shares if not s.reserve
                )
                if pool > 0:
                    share_of = min(1.0, rest / pool)
        integrals = self.integrals
        for s in shares:
            used = s.used.get(u, 0)
            limit = s.limits.get(u, 0)
            acc = integrals.get((s.name, u))
            if acc is None:
                acc = integrals[(s.name, u)] = [0.0, 0.0, 0.0, 0.0, 0.0]
            if used:
                acc[USED] += used * dt
                if used > limit:
                    acc[BORROWED] += (used - limit) * dt
                    acc[WITHIN] += limit * dt
                else:
                    acc[WITHIN] += used * dt
            if limit:
                acc[LIMIT] += limit * dt
                if share_of and not s.reserve and limit > used:
                    acc[LENT] += (limit - used) * share_of * dt
