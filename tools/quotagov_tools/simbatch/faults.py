"""Fault injection for the simulated Batch: failures queued per operation, and throttling.

A test or the local stack makes the simulated Batch refuse calls the way Batch does:
:meth:`FaultInjector.fail_next` queues failures that go through the boto3 adapter's
own error mapping (:func:`quotagov.adapters.batch_boto3.map_client_error`), and
:meth:`FaultInjector.throttle_above` answers ``TooManyRequestsException`` above a rate
counted on the injected clock (:class:`~quotagov_tools.simbatch.throttle.TokenBucket`;
Batch's documented ceiling is 5 TPS for ``SubmitServiceJob``, AWS Batch User Guide,
"AWS Batch service quotas", https://docs.aws.amazon.com/batch/latest/userguide/service_limits.html).
A refused call changes nothing. Not thread-safe: the caller holds its lock.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from botocore.exceptions import ClientError

from quotagov.adapters.batch_boto3 import map_client_error
from quotagov.clock import Clock
from quotagov.governance.ports import BatchThrottledError
from quotagov_tools.simbatch.throttle import TokenBucket

#: HTTP status of an injected error code when none is given (other codes: 400).
DEFAULT_STATUS = {"ServerException": 500, "TooManyRequestsException": 429}


class FaultInjector:
    """The failures and the throttling to apply to the next calls, per operation.

    Args:
        clock: the clock whose seconds the throttling buckets count.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._buckets: dict[str | None, TokenBucket] = {}
        self._throttled_operations: frozenset[str] | None = None
        self._rate: tuple[float, float | None] | None = None
        self._failures: list[tuple[str, str, str, int]] = []

    def throttle_above(
        self,
        rate_per_second: float | None,
        *,
        burst: float | None = None,
        operations: Iterable[str] | None = None,
    ) -> None:
        """Throttle ``operations`` (default: all) above ``rate_per_second``; None: stop.

        Each operation gets its own bucket of ``burst`` calls (default: the rate, at
        least 1), refilled at ``rate_per_second`` per clock second.

        Raises:
            ValueError: a non-positive rate or a burst below 1.
        """
        self._buckets.clear()
        if rate_per_second is None:
            self._throttled_operations = None
            self._rate = None
            return
        TokenBucket(rate_per_second, self._clock, burst)  # checks the arguments
        self._rate = (rate_per_second, burst)
        self._throttled_operations = frozenset(operations) if operations else None

    def fail_next(
        self, operation: str, *, code: str, message: str, status: int | None, times: int
    ) -> None:
        """Make the next ``times`` calls of ``operation`` fail with ``code`` and ``message``.

        ``status`` is the HTTP status (default :data:`DEFAULT_STATUS`, else 400).
        """
        http = status if status is not None else DEFAULT_STATUS.get(code, 400)
        self._failures.extend([(operation, code, message, http)] * times)

    def admit(self, operation: str) -> None:
        """Let one call of ``operation`` through, or raise what was injected for it.

        Raises:
            BatchError: the first failure queued for ``operation`` (mapped like boto3's).
            BatchThrottledError: ``operation`` is throttled and its bucket is empty.
        """
        for i, (op, code, message, status) in enumerate(self._failures):
            if op == operation:
                del self._failures[i]
                answer: Any = {
                    "Error": {"Code": code, "Message": message},
                    "ResponseMetadata": {"HTTPStatusCode": status},
                }
                raise map_client_error(operation, ClientError(answer, operation))
        rate = self._rate
        if rate is None:
            return
        ops = self._throttled_operations
        if ops is not None and operation not in ops:
            return
        bucket = self._buckets.get(operation)
        if bucket is None:
            bucket = self._buckets[operation] = TokenBucket(rate[0], self._clock, rate[1])
        if not bucket.try_take():
            raise BatchThrottledError(operation, "TooManyRequestsException", "Too Many Requests")
