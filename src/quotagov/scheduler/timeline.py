"""The engine's clock and pending events, and how time advances.

From ``../shared/spec/scenario-format.md``: a scheduling pass runs at every event time
and only then ("Event times": submissions, startup ends, completions of the current
attempt, actions); events at the same time are applied in this order ("Semantics"):
jobs whose startup ends become RUNNING, then completions, then actions (in the order
they were scheduled), then submissions (likewise), then the pass.

Events are kept in one binary heap keyed ``(time, kind, sequence)``, the kinds
numbered in that order; an event handled at time ``t`` may add more at ``t``, which
are handled before that time's pass. A stale event (a startup end or completion of an
attempt that was preempted) is still popped, and ignored by its handler; its time is
not an event time ("Event times"), so when every event at a time is stale no pass runs
then (the handler says whether an event was live).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

#: Event kinds, in the spec's same-time order.
STARTUP_END, COMPLETION, ACTION, SUBMISSION = 0, 1, 2, 3

#: ``handle(kind, payload)``: apply one event at ``timeline.now``; returns False when
#: the event was stale (it changed nothing and its time is not an event time).
Handler = Callable[[int, Any], bool]


class Timeline:
    """The clock (seconds) and the pending events.

    Args:
        start: the initial clock value, in seconds.
    """

    __slots__ = ("_events", "_seq", "now", "pass_due")

    def __init__(self, start: float) -> None:
        #: The engine's clock, in seconds.
        self.now: float = start
        #: Whether a mutation at ``now`` calls for a pass not yet run.
        self.pass_due = False
        self._events: list[tuple[float, int, int, Any]] = []
        self._seq = 0

    def push(self, at: float, kind: int, payload: Any) -> None:
        """Add an event of ``kind`` at time ``at`` (seconds, not before ``now``)."""
        self._seq += 1
        heapq.heappush(self._events, (at, kind, self._seq, payload))

    def next_time(self) -> float | None:
        """The time of the next pending event, or None when nothing is pending."""
        return self._events[0][0] if self._events else None

    def advance(self, t: float, handle: Handler, scheduling_pass: Callable[[], None]) -> None:
        """Apply every event up to and including ``t``, then set ``now = t``.

        A pass due at ``now`` with no event left at ``now`` runs first. Then, time by
        time: ``now`` moves to the time, its events are handled in the same-time order
        and the scheduling pass runs, unless every event at that time was stale.
        ``pass_due`` is cleared before every pass.
        """
        events = self._events
        if self.pass_due and (not events or events[0][0] > self.now):
            self.pass_due = False
            scheduling_pass()
        while events and events[0][0] <= t:
            time = events[0][0]
            self.now = time
            live = False
            while events and events[0][0] == time:
                _, kind, _, payload = heapq.heappop(events)
                if handle(kind, payload):
                    live = True
            if live or self.pass_due:
                self.pass_due = False
                scheduling_pass()
        if t > self.now:
            self.now = t

    def run_until_idle(self, handle: Handler, scheduling_pass: Callable[[], None]) -> None:
        """:meth:`advance` to ``now``, then to each next event time until none is pending
        (``now`` ends at the last event's time)."""
        self.advance(self.now, handle, scheduling_pass)
        events = self._events
        while events:
            self.advance(events[0][0], handle, scheduling_pass)
