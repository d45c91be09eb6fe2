"""The engine's clock and pending events, and how time advances.

From ``docs/simulator/spec.md``: a scheduling pass runs at every event time
and only then ("Event times": submissions, startup ends, completions of the current
attempt, actions); events at the same time are applied in this order ("Semantics"):
jobs whose startup ends become RUNNING, then completions, then actions (in the order
they were scheduled), then submissions (likewise), then the pass.

Startup ends, completions and actions are kept in one binary heap keyed ``(time, kind,
sequence)``, the kinds numbered in that order. Submissions, by far the most numerous
events and all known in advance in a scenario, are kept apart in time order (two
parallel lists and a read position, sorted only when one is added out of order); as
they come last among the events of a time, the next event is the heap's top when its
time is not after the next submission's, else that submission. An event handled at
time ``t`` may add more at ``t``, which are handled before that time's pass. A stale
event (a startup end or completion of an attempt that was preempted) is still popped,
and ignored by its handler; its time is not an event time ("Event times"), so when
every event at a time is stale no pass runs then (the handler says whether an event
was live).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

_INF = float("inf")

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

    __slots__ = (
        "_events",
        "_seq",
        "_sub_next",
        "_sub_payloads",
        "_sub_sorted",
        "_sub_times",
        "now",
        "pass_due",
    )

    def __init__(self, start: float) -> None:
        #: The engine's clock, in seconds.
        self.now: float = start
        #: Whether a mutation at ``now`` calls for a pass not yet run.
        self.pass_due = False
        self._events: list[tuple[float, int, int, Any]] = []
        self._seq = 0
        #: Pending submissions: times and payloads from ``_sub_next`` on, in time order
        #: (then in the order they were added) once ``_sub_sorted``.
        self._sub_times: list[float] = []
        self._sub_payloads: list[Any] = []
        self._sub_next = 0
        self._sub_sorted = True

    def push(self, at: float, kind: int, payload: Any) -> None:
        """Add an event of ``kind`` at time ``at`` (seconds, not before ``now``)."""
        if kind == SUBMISSION:
            self.push_submission(at, payload)
            return
        self._seq += 1
        heapq.heappush(self._events, (at, kind, self._seq, payload))

    def push_submission(self, at: float, payload: Any) -> None:
        """Add a submission at time ``at`` (seconds, not before ``now``); submissions at
        the same time are handled in the order they were added."""
        times = self._sub_times
        if self._sub_sorted and len(times) > self._sub_next and at < times[-1]:
            self._sub_sorted = False
        times.append(at)
        self._sub_payloads.append(payload)

    def _sort_submissions(self) -> None:
        """Put the pending submissions in time order (stable: same-time ones keep the
        order they were added in); forget the handled ones."""
        start = self._sub_next
        times = self._sub_times[start:]
        payloads = self._sub_payloads[start:]
        order = sorted(range(len(times)), key=times.__getitem__)
        self._sub_times = [times[i] for i in order]
        self._sub_payloads = [payloads[i] for i in order]
        self._sub_next = 0
        self._sub_sorted = True

    def _next_submission_time(self) -> float:
        """The time of the next pending submission (``inf`` when none)."""
        if not self._sub_sorted:
            self._sort_submissions()
        i = self._sub_next
        return self._sub_times[i] if i < len(self._sub_times) else _INF

    def next_time(self) -> float | None:
        """The time of the next pending event, or None when nothing is pending."""
        sub = self._next_submission_time()
        events = self._events
        if events and events[0][0] <= sub:
            return events[0][0]
        return sub if self._sub_next < len(self._sub_times) else None

    def advance(self, t: float, handle: Handler, scheduling_pass: Callable[[], None]) -> None:
        """Apply every event up to and including ``t``, then set ``now = t``.

        A pass due at ``now`` with no event left at ``now`` runs first. Then, time by
        time: ``now`` moves to the time, its events are handled in the same-time order
        and the scheduling pass runs, unless every event at that time was stale.
        ``pass_due`` is cleared before every pass.
        """
        if self.pass_due:
            first = self.next_time()
            if first is None or first > self.now:
                self.pass_due = False
                scheduling_pass()
        self._run(t, handle, scheduling_pass, False)
        if t > self.now:
            self.now = t

    def _run(
        self,
        t: float,
        handle: Handler,
        scheduling_pass: Callable[[], None],
        each_time: bool,
    ) -> None:
        """Handle the events time by time up to and including ``t`` (``inf``: until
        none is pending), each time followed by its pass; ``now`` ends at the last
        event time handled. ``each_time``: as :meth:`advance` called for each event time
        in turn (a pass that a listener called for during the last pass runs at that
        pass's time, before the clock moves on)."""
        events = self._events
        heappop = heapq.heappop
        while True:
            sub = self._next_submission_time()
            if events and events[0][0] <= sub:
                time = events[0][0]
            elif self._sub_next < len(self._sub_times):
                time = sub
            else:
                break  # nothing pending
            if time > t:
                break
            if each_time and self.pass_due and time > self.now:
                self.pass_due = False
                scheduling_pass()
                continue  # that pass may have added events
            self.now = time
            live = False
            while True:
                if events and events[0][0] == time:  # kinds before SUBMISSION
                    _, kind, _, payload = heappop(events)
                    if handle(kind, payload):
                        live = True
                    if kind == ACTION:  # an action may schedule a submission
                        sub = self._next_submission_time()
                elif sub == time and self._sub_next < len(self._sub_times):
                    i = self._sub_next
                    self._sub_next = i + 1
                    if handle(SUBMISSION, self._sub_payloads[i]):
                        live = True
                    sub = self._next_submission_time()
                else:
                    break
            if live or self.pass_due:
                self.pass_due = False
                scheduling_pass()

    def run_until_idle(self, handle: Handler, scheduling_pass: Callable[[], None]) -> None:
        """:meth:`advance` to ``now``, then to each next event time until none is pending
        (``now`` ends at the last event's time).

        One loop over the event times (as :meth:`advance` to each in turn would do: a
        pass due at an event time runs after that time's events, so none is due
        between two of them).
        """
        self.advance(self.now, handle, scheduling_pass)
        self._run(_INF, handle, scheduling_pass, True)
