"""The ``statusReason`` texts of the simulated Batch, and when a job is misconfigured.

Sources (AWS Batch User Guide, "Jobs stuck in RUNNABLE due to misconfiguration",
https://docs.aws.amazon.com/batch/latest/userguide/sm_job_stuck_in_runnable_misconfiguration.html):
the ``MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE`` text is Batch's own; the
``MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED`` code is documented but its text is
not. AWS does not document the texts of preempted attempts, of jobs failed because
their preemption retries ran out, and of jobs of a deleted share: this project's
wording, here and nowhere else.
"""

from __future__ import annotations

import math

from quotagov.scheduler.models import UNLIMITED_BORROW
from quotagov_tools.simbatch.payload import TrainingRequest
from quotagov_tools.simbatch.records import JobQueueState, QuotaShareRecord

#: statusReason of a job its service environment can never run (Batch's documented text).
SERVICE_ENVIRONMENT_MAX_RESOURCE = (
    "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - Service environment(s) associated "
    "with the job queue cannot meet the capacity requirement of the job."
)
#: statusReason of the jobs ``DeleteQuotaShare`` terminates (AWS does not document it).
SHARE_DELETED_REASON = "Quota share deleted"
#: statusReason of an attempt that completed.
COMPLETED_REASON = "Completed"


def quota_management_limit_reason(share_name: str) -> str:
    """statusReason of a job its quota share can never run (code documented, text ours)."""
    return (
        "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Quota share "
        f"{share_name} cannot meet the capacity requirement of the job."
    )


def preempted_reason(kind: str | None, for_job_arn: str) -> str:
    """statusReason of a preempted attempt (AWS does not document it; this project's wording).

    ``kind`` is the scheduler's preemption kind (``IN_SHARE`` or ``CROSS_SHARE``);
    ``for_job_arn`` the ARN of the job the capacity went to.
    """
    if kind == "IN_SHARE":
        return f"PREEMPTED:IN_SHARE - preempted by higher-priority job {for_job_arn}"
    return f"PREEMPTED:CROSS_SHARE - capacity reclaimed for job {for_job_arn}"


def retries_exhausted_reason(preemptions: int, retries: int | None) -> str:
    """statusReason of a job FAILED because its preemption retries ran out (text ours).

    ``preemptions`` is how many times the job was preempted; ``retries`` its
    ``preemptionRetriesBeforeTermination``.
    """
    return (
        f"PREEMPTION_RETRIES_EXHAUSTED - preempted {preemptions} times, "
        f"preemptionRetriesBeforeTermination is {retries}"
    )


def misconfiguration_reason(
    queue: JobQueueState, share: QuotaShareRecord, training: TrainingRequest
) -> str | None:
    """The MISCONFIGURATION statusReason when the job can never start, else None.

    The service environment must have ``InstanceCount`` instances of the job's type;
    the share must have a limit for that type, and the count must fit the lower of the
    environment's capacity and the share's ceiling (its limit, or for
    ``LEND_AND_BORROW`` the limit plus ``borrowLimit`` percent of it, the environment
    when the borrow limit is unlimited).
    """
    unit, count = training.instance_type, training.instance_count
    available = queue.capacity.get(unit, 0)
    if count > available:
        return SERVICE_ENVIRONMENT_MAX_RESOURCE
    limit = share.limit(unit)
    if limit is None:
        return quota_management_limit_reason(share.name)
    ceiling = limit
    if share.resource_sharing.get("strategy") == "LEND_AND_BORROW":
        borrow = int(share.resource_sharing.get("borrowLimit", UNLIMITED_BORROW))
        ceiling = (
            available if borrow == UNLIMITED_BORROW else limit + math.floor(limit * borrow / 100)
        )
    if count > min(ceiling, available):
        return quota_management_limit_reason(share.name)
    return None
