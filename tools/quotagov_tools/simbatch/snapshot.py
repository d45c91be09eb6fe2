"""``GetJobQueueSnapshot`` of the simulated Batch: the fronts of the queue and its shares, usage.

Shape (botocore's ``batch`` service model, ``GetJobQueueSnapshot``): ``frontOfQueue`` (at
most :data:`MAX_FRONT_OF_QUEUE`
RUNNABLE jobs), ``frontOfQuotaShares`` (the first RUNNABLE job of each share) and
``queueUtilization`` (instances held per instance type, in total and per share), each
with ``lastUpdatedAt`` (epoch ms).

Choices where AWS is vague, documented here once:

- ``frontOfQueue`` merges the shares' queues by ``schedulingPriority`` (high first),
  then submission time; ``earliestTimeAtPosition`` is when the job last became
  RUNNABLE.
- Every live quota share has an entry in ``frontOfQuotaShares`` (an empty list when
  it has no RUNNABLE job).
- ``quotaShareUtilization.topCapacityUtilization`` lists every share that holds
  instances, the most instances first, then by name (not capped at 20).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quotagov_tools.simbatch.records import JobQueueState, QuotaShareRecord, ServiceJob

#: How many jobs ``frontOfQueue.jobs`` lists at most (the model's documentation).
MAX_FRONT_OF_QUEUE = 100


def job_queue_snapshot(
    queue: JobQueueState, jobs: Mapping[str, ServiceJob], now_ms: int
) -> dict[str, Any]:
    """The ``GetJobQueueSnapshot`` response for ``queue``.

    Args:
        queue: the job queue (its engine gives each share's RUNNABLE order).
        jobs: every service job of the simulated Batch by job id, in submission order.
        now_ms: ``lastUpdatedAt``, epoch milliseconds.
    """
    fronts: dict[str, list[dict[str, Any]]] = {}
    runnable: list[ServiceJob] = []
    usage: list[dict[str, Any]] = []
    totals: dict[str, float] = {}
    for share in queue.live_shares():
        order = queue.engine.runnable_order(share.name) if queue.engine else []
        queued = [jobs[name] for name in order]
        runnable += queued
        fronts[share.name] = [_front_entry(j) for j in queued[:1]]
        held = _held(queue, share, jobs)
        for unit, count in held.items():
            totals[unit] = totals.get(unit, 0.0) + count
        if held:
            usage.append({"quotaShareName": share.name, "capacityUsage": _capacity(held)})
    runnable.sort(key=lambda j: (-j.scheduling_priority, j.created_at, j.seq))
    usage.sort(key=lambda u: (-sum(c["quantity"] for c in u["capacityUsage"]), u["quotaShareName"]))
    return {
        "frontOfQueue": {
            "jobs": [_front_entry(j) for j in runnable[:MAX_FRONT_OF_QUEUE]],
            "lastUpdatedAt": now_ms,
        },
        "frontOfQuotaShares": {"quotaShares": fronts, "lastUpdatedAt": now_ms},
        "queueUtilization": {
            "totalCapacityUsage": _capacity(totals),
            "quotaShareUtilization": {"topCapacityUtilization": usage},
            "lastUpdatedAt": now_ms,
        },
    }


def _held(
    queue: JobQueueState, share: QuotaShareRecord, jobs: Mapping[str, ServiceJob]
) -> dict[str, float]:
    """Instances the share's jobs hold now, per instance type."""
    held: dict[str, float] = {}
    for job in jobs.values():
        mine = job.queue_name == queue.name and job.quota_share_name == share.name
        if mine and job.holding:
            unit = job.training.instance_type
            held[unit] = held.get(unit, 0.0) + job.training.instance_count
    return held


def _capacity(quantities: Mapping[str, float]) -> list[dict[str, Any]]:
    return [{"capacityUnit": u, "quantity": q} for u, q in sorted(quantities.items())]


def _front_entry(job: ServiceJob) -> dict[str, Any]:
    return {"jobArn": job.job_arn, "earliestTimeAtPosition": job.runnable_since or job.created_at}
