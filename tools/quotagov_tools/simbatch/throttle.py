"""A token bucket on the virtual clock, so the simulated Batch can throttle like Batch does.

Batch limits ``SubmitServiceJob`` to 5 transactions per second per account and answers
HTTP 429 ``TooManyRequestsException`` above that (the limit: AWS Batch User Guide, "AWS
Batch service quotas", https://docs.aws.amazon.com/batch/latest/userguide/service_limits.html;
the error is not in botocore's ``batch`` model, AWS does not document it). The
bucket counts **clock seconds of the injected clock** (epoch seconds), not wall time:
with a :class:`~quotagov.clock.ManualClock` a test that submits 300 jobs at 5 per
virtual second runs in milliseconds, and with the system clock it behaves like Batch.
"""

from __future__ import annotations

from quotagov.clock import Clock

#: Tolerance for epoch-second floats (about 2.4e-7 s of resolution around 1.7e9).
_EPSILON = 1e-6


class TokenBucket:
    """Allows ``rate_per_second`` calls per clock second on average, ``burst`` at once.

    Args:
        rate_per_second: refill rate in calls per clock second (> 0).
        burst: bucket size (>= 1); default ``max(1, rate_per_second)``.
        clock: the clock whose seconds are counted.

    Raises:
        ValueError: for a non-positive rate or a burst below 1.
    """

    def __init__(self, rate_per_second: float, clock: Clock, burst: float | None = None) -> None:
        if rate_per_second <= 0:
            raise ValueError(f"rate_per_second: must be > 0, got {rate_per_second}")
        size = max(1.0, float(rate_per_second)) if burst is None else float(burst)
        if size < 1:
            raise ValueError(f"burst: must be >= 1, got {burst}")
        self.rate = float(rate_per_second)
        self.burst = size
        self._clock = clock
        self._tokens = size
        self._last = clock.now()

    def try_take(self) -> bool:
        """Take one token if there is one; False (and nothing taken) when empty."""
        now = self._clock.now()
        self._tokens = min(self.burst, self._tokens + max(0.0, now - self._last) * self.rate)
        self._last = max(self._last, now)
        if self._tokens >= 1 - _EPSILON:
            self._tokens = max(0.0, self._tokens - 1)
            return True
        return False
