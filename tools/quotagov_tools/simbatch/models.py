"""The simulated Batch's backend: its resources and rules, one module per concern.

This is the "models" half of the simulated Batch (as moto splits a service): it keeps
the resources, enforces the API's rules and drives one local scheduler
(:class:`quotagov.scheduler.Engine`) per job queue. Request dictionaries come in
already checked against the botocore model; response dictionaries are built by
:mod:`quotagov_tools.simbatch.responses`.

:class:`SimBatchBackend` is :class:`~.core.BackendCore` (state, time, transitions)
with one mixin per resource; each module documents its rules and the choices made
where AWS is silent or vague:

- :mod:`.core`: the state, engine time vs. epoch milliseconds, applying transitions;
- :mod:`.quota_shares`: Create/Update/Describe/List/DeleteQuotaShare;
- :mod:`.service_jobs`: Submit/Update/Terminate/Describe/ListServiceJobs,
  ``clientToken``;
- :mod:`.checks`: request values the botocore model does not check;
- :mod:`.listing`: ``maxResults``, ``nextToken``, the ``ListServiceJobs`` filters;
- :mod:`.snapshot`: ``GetJobQueueSnapshot``;
- :mod:`.reasons`: the ``statusReason`` texts and the MISCONFIGURATION rule;
- :mod:`.errors`, :mod:`.arns`, :mod:`.ids`: errors, ARN formats, identifiers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quotagov.governance.ports import BatchNotFoundError
from quotagov_tools.simbatch.ids import IdFactory
from quotagov_tools.simbatch.quota_shares import QuotaShareOperations
from quotagov_tools.simbatch.reasons import (
    SERVICE_ENVIRONMENT_MAX_RESOURCE,
    SHARE_DELETED_REASON,
    preempted_reason,
    quota_management_limit_reason,
    retries_exhausted_reason,
)
from quotagov_tools.simbatch.records import JobQueueState
from quotagov_tools.simbatch.service_jobs import ServiceJobOperations
from quotagov_tools.simbatch.snapshot import job_queue_snapshot

__all__ = [
    "SERVICE_ENVIRONMENT_MAX_RESOURCE",
    "SHARE_DELETED_REASON",
    "IdFactory",
    "SimBatchBackend",
    "preempted_reason",
    "quota_management_limit_reason",
    "retries_exhausted_reason",
]


class SimBatchBackend(QuotaShareOperations, ServiceJobOperations):
    """The simulated Batch's resources and rules (no request checking, no throttling).

    Constructor arguments: those of :class:`~quotagov_tools.simbatch.core.BackendCore`.

    Every operation takes the request members as a mapping and returns the response
    dictionary; it raises :class:`~quotagov.governance.ports.BatchClientError` /
    :class:`~quotagov.governance.ports.BatchNotFoundError` with code
    ``ClientException`` for requests Batch refuses (see the operation modules).
    """

    def describe_job_queues(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``DescribeJobQueues``: the named queues (all without ``jobQueues``); unknown
        names are left out, as Batch does. Each queue has one service environment,
        ``<queue>-environment``."""
        wanted = request.get("jobQueues") or list(self.queues)
        found = []
        for ref in wanted:
            try:
                queue = self.find_queue("DescribeJobQueues", ref)
            except BatchNotFoundError:
                continue
            found.append(
                {
                    "jobQueueName": queue.name,
                    "jobQueueArn": queue.arn,
                    "state": "ENABLED",
                    "status": "VALID",
                    "priority": 1,
                    "jobQueueType": "SAGEMAKER_TRAINING",
                    "computeEnvironmentOrder": [],
                    "serviceEnvironmentOrder": [
                        {"order": 1, "serviceEnvironment": self._environment_arn(queue)}
                    ],
                }
            )
        return {"jobQueues": found}

    def describe_service_environments(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``DescribeServiceEnvironments``: the named environments (all without
        ``serviceEnvironments``), each with its queue's capacity as ``capacityLimits``."""
        wanted = set(request.get("serviceEnvironments") or [])
        found = []
        for queue in self.queues.values():
            name = f"{queue.name}-environment"
            arn = self._environment_arn(queue)
            if wanted and name not in wanted and arn not in wanted:
                continue
            found.append(
                {
                    "serviceEnvironmentName": name,
                    "serviceEnvironmentArn": arn,
                    "serviceEnvironmentType": "SAGEMAKER_TRAINING",
                    "state": "ENABLED",
                    "status": "VALID",
                    "capacityLimits": [
                        {"capacityUnit": u, "maxCapacity": c}
                        for u, c in sorted(queue.capacity.items())
                    ],
                }
            )
        return {"serviceEnvironments": found}

    def _environment_arn(self, queue: JobQueueState) -> str:
        return (
            f"arn:aws:batch:{self.region}:{self.account}:service-environment/"
            f"{queue.name}-environment"
        )

    def get_job_queue_snapshot(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``GetJobQueueSnapshot`` from the engine's queues and usage (see :mod:`.snapshot`).

        Raises:
            BatchNotFoundError: unknown job queue.
        """
        queue = self.find_queue("GetJobQueueSnapshot", request["jobQueue"])
        return job_queue_snapshot(queue, self.jobs, self.now_ms())
