"""Instance-second integrals of usage per share and instance type, for the metrics.

Everything a share's metrics integrate is piecewise constant between changes of that
share's use or limits, except the share of its idle quota that is lent, which also moves
with the rest of the type. So the meter keeps, per instance type ``u``, the cumulative
integral ``F_u`` of the lent fraction ``f_u`` (O(1) per change of ``u``), and per
(share, type) its own integrals, brought up to date only when that share changes: the
lent instance-seconds over a stretch where ``idle(s,u)`` is constant are
``idle(s,u) x (F_u(now) - F_u(then))``. Each change costs O(1), whatever the number of
shares.

Attributing lent instances is this project's documented choice (AWS does not say which
lender an instance came from): borrowed instances of a type come first from capacity
that no share's limit covers, then from the idle quota of the non-RESERVE shares in
proportion to their idle quota (each lending at most its idle quota):
``f_u = min(1, (borrowed - from uncovered capacity) / sum of non-RESERVE idle)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from quotagov.scheduler.quota import QuotaLedger, ShareRuntime

#: Integral names, in instance-seconds.
USED, BORROWED, LENT, WITHIN, LIMIT = range(5)
_LAST, _F_AT_LAST = 5, 6


class UsageMeter:
    """Integrals ``[used, borrowed, lent, within-limit used, limit]`` per (share, type).

    Args:
        start: the time integration starts, in seconds.
    """

    def __init__(self, start: float) -> None:
        self.start = start
        self._type_last: dict[str, float] = {}
        self._lent_fraction_integral: dict[str, float] = {}
        #: Per share name, per type: ``[used, borrowed, lent, within, limit, last, F]``.
        self._state: dict[str, dict[str, list[float]]] = {}

    def _advance_type(self, ledger: QuotaLedger, u: str, now: float) -> float:
        """Bring ``F_u`` up to ``now``; returns it."""
        f_integral = self._lent_fraction_integral.get(u, 0.0)
        last = self._type_last.get(u, self.start)
        if now > last:
            borrowed = ledger.borrowed_total.get(u, 0)
            if borrowed > 0:
                rest = borrowed - min(borrowed, ledger.unassigned.get(u, 0))
                pool = ledger.lend_idle.get(u, 0)
                if rest > 0 and pool > 0:
                    f_integral += min(1.0, rest / pool) * (now - last)
                    self._lent_fraction_integral[u] = f_integral
            self._type_last[u] = now
        return f_integral

    def touch(self, ledger: QuotaLedger, share: ShareRuntime, u: str, now: float) -> None:
        """Integrate (share, type) up to ``now``; call before changing its use or limit."""
        f_integral = self._advance_type(ledger, u, now)
        by_type = self._state.get(share.name)
        if by_type is None:
            by_type = self._state[share.name] = {}
        state = by_type.get(u)
        if state is None:
            by_type[u] = [0.0, 0.0, 0.0, 0.0, 0.0, now, f_integral]
            return
        dt = now - state[_LAST]
        if dt > 0:
            used = share.used.get(u, 0)
            limit = share.limits.get(u, 0)
            if used:
                state[USED] += used * dt
                if used > limit:
                    state[BORROWED] += (used - limit) * dt
                    state[WITHIN] += limit * dt
                else:
                    state[WITHIN] += used * dt
            if limit:
                state[LIMIT] += limit * dt
                if not share.reserve and limit > used:
                    state[LENT] += (limit - used) * (f_integral - state[_F_AT_LAST])
        state[_LAST] = now
        state[_F_AT_LAST] = f_integral

    def flush(self, ledger: QuotaLedger, now: float) -> None:
        """Integrate every (share, type) up to ``now``."""
        for u in ledger.types():
            for share in ledger.share_list:
                if (
                    u in share.limits
                    or share.used.get(u, 0)
                    or u in self._state.get(share.name, ())
                ):
                    self.touch(ledger, share, u, now)

    @property
    def integrals(self) -> dict[tuple[str, str], list[float]]:
        """``{(share, type): [used, borrowed, lent, within, limit]}`` as of the last touch."""
        return {
            (name, u): state[:5]
            for name, by_type in self._state.items()
            for u, state in by_type.items()
        }
