"""The service environment's capacity behind the governed job queue, cached.

Read from Batch with ``DescribeJobQueues`` (the queue's ``serviceEnvironmentOrder``)
and ``DescribeServiceEnvironments`` (each environment's ``capacityLimits``,
``[{capacityUnit, maxCapacity}]``; botocore's ``batch`` model): instances per instance
type, summed over the queue's environments. ``POST /jobs`` uses it to refuse a job
that needs more instances than the environment has (Batch would hold it RUNNABLE with
``MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE`` and it would block its share).

Cached for ``ttl_seconds`` (default 300 s) per job queue, so a burst of submissions
costs two Describe calls per container and five minutes. A failing call is logged and
answers None (unknown: the check is skipped, the submission is not refused for it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from quotagov.clock import Clock
from quotagov.governance.ports import BatchError, BatchPort

logger = logging.getLogger(__name__)

#: How long a capacity read stays fresh, in seconds.
DEFAULT_TTL_SECONDS = 300.0


class EnvironmentCapacity:
    """Instances per instance type of a job queue's service environments, cached.

    Args:
        batch: builds the Batch port on first use (the API function creates its client
            only when a submission needs it).
        clock: epoch seconds.
        ttl_seconds: how long a read stays fresh.
    """

    def __init__(
        self,
        batch: Callable[[], BatchPort],
        clock: Clock,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
    ) -> None:
        self._batch = batch
        self._clock = clock
        self._ttl = ttl_seconds
        self._cache: dict[str, tuple[float, dict[str, int]]] = {}

    def of(self, job_queue: str) -> dict[str, int] | None:
        """The capacity behind ``job_queue`` (name or ARN), or None when Batch cannot
        tell (a failing call, an unknown queue, a queue without service environments)."""
        now = self._clock.now()
        cached = self._cache.get(job_queue)
        if cached is not None and now - cached[0] < self._ttl:
            return cached[1]
        try:
            capacity = self._read(job_queue)
        except BatchError as exc:
            logger.warning("cannot read the service environment of %s: %s", job_queue, exc)
            return None
        if capacity is not None:
            self._cache[job_queue] = (now, capacity)
        return capacity

    def _read(self, job_queue: str) -> dict[str, int] | None:
        batch = self._batch()
        queues = batch.describe_job_queues(jobQueues=[job_queue]).get("jobQueues") or []
        environments = [
            entry["serviceEnvironment"]
            for queue in queues
            for entry in queue.get("serviceEnvironmentOrder") or []
            if entry.get("serviceEnvironment")
        ]
        if not environments:
            return None
        described = batch.describe_service_environments(serviceEnvironments=environments)
        capacity: dict[str, int] = {}
        for environment in described.get("serviceEnvironments") or []:
            for limit in environment.get("capacityLimits") or []:
                unit = limit.get("capacityUnit")
                if unit:
                    capacity[unit] = capacity.get(unit, 0) + int(limit.get("maxCapacity") or 0)
        return capacity
