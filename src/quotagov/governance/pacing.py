"""Pacing of ``SubmitServiceJob`` calls: at most N calls per second per worker.

``SubmitServiceJob`` is limited to 5 transactions per second per account (AWS Batch
service quotas). The submit worker runs with reserved concurrency 2 and paces each
instance to 2 calls per second, so the account stays at or below 4 calls per second;
the boto3 adapter's adaptive retry mode absorbs what other callers add.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from quotagov.clock import Clock

#: Default ``SubmitServiceJob`` calls per second per worker instance.
SUBMIT_CALLS_PER_SECOND = 2.0


class Pacer:
    """Blocks so that successive calls are at least ``1 / rate`` seconds apart.

    Args:
        rate_per_second: calls per second (> 0).
        clock: the time source (epoch seconds).
        sleep: how to wait ``seconds`` (``time.sleep``, or a virtual clock's ``advance``).

    Raises:
        ValueError: for a rate <= 0.
    """

    def __init__(
        self, rate_per_second: float, clock: Clock, sleep: Callable[[float], object]
    ) -> None:
        if rate_per_second <= 0:
            raise ValueError(f"rate_per_second must be > 0, got {rate_per_second}")
        self.interval = 1.0 / rate_per_second
        self._clock = clock
        self._sleep = sleep
        self._next = float("-inf")
        self._lock = threading.Lock()

    def __call__(self) -> None:
        """Wait for the next free slot, then take it."""
        with self._lock:
            now = self._clock.now()
            if self._next > now:
                self._sleep(self._next - now)
                now = self._clock.now()
            self._next = max(now, self._next) + self.interval
