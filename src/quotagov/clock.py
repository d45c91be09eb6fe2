"""Injectable clocks, so the simulator, expiry and tests agree on time.

All clocks answer in seconds since the Unix epoch (float). See ``docs/design.md``,
"Decisions" ("Time comes from an injectable clock").
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """A source of the current time, in epoch seconds."""

    def now(self) -> float:
        """Return the current time in seconds since the Unix epoch."""
        ...


class SystemClock:
    """The wall clock (``time.time()``)."""

    def now(self) -> float:
        """Return the wall-clock time in epoch seconds."""
        return time.time()


class ManualClock:
    """A clock that moves only when told to; thread-safe.

    Args:
        start: initial time in epoch seconds.

    Raises:
        ValueError: from :meth:`set` or :meth:`advance` when asked to go backwards.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        """Return the current virtual time in epoch seconds."""
        with self._lock:
            return self._now

    def set(self, t: float) -> None:
        """Move the clock to ``t`` (epoch seconds); never backwards."""
        with self._lock:
            if t < self._now:
                raise ValueError(f"clock: cannot go back from {self._now} to {t}")
            self._now = float(t)

    def advance(self, seconds: float) -> float:
        """Move the clock forward by ``seconds`` (>= 0) and return the new time."""
        if seconds < 0:
            raise ValueError(f"clock: seconds must be >= 0, got {seconds}")
        with self._lock:
            self._now += seconds
            return self._now
