"""Wire shapes of the simulated Batch: the response dictionaries and EventBridge envelopes.

Everything here turns :mod:`~quotagov_tools.simbatch.records` into the dictionaries
boto3 returns for the ``batch`` API (botocore model 2016-08-10): epoch milliseconds for
times, ``TrainingJobArn`` service resource ids, ``capacityUsage`` as doubles. Members
without a value are left out, as Batch does, never sent as null.

Choices where AWS does not document the behaviour, documented here once:

- ``recentPreemptedAttempts`` lists the latest :data:`RECENT_PREEMPTED_WINDOW`
  preempted attempts, **most recent first** (AWS sample code reads index 0 as the
  most recent).
- Events carry every member ``DescribeServiceJob`` returns except ``tags`` and
  ``serviceRequestPayload``, including ``quotaShareName``, ``capacityUsage``,
  ``preemptionSummary`` and ``isTerminated`` when they have a value.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

from quotagov_tools.simbatch.records import Attempt, QuotaShareRecord, ServiceJob

#: How many preempted attempts ``preemptionSummary.recentPreemptedAttempts`` keeps.
RECENT_PREEMPTED_WINDOW = 5

EVENT_SOURCE = "aws.batch"
EVENT_DETAIL_TYPE = "Batch Service Job State Change"

_ECHOED_MEMBERS = ("retryStrategy", "preemptionConfiguration", "timeoutConfig")


def _resource_id(arn: str) -> dict[str, str]:
    return {"name": "TrainingJobArn", "value": arn}


def _attempt_detail(attempt: Attempt) -> dict[str, Any]:
    out: dict[str, Any] = {"serviceResourceId": _resource_id(attempt.training_job_arn)}
    if attempt.started_at is not None:
        out["startedAt"] = attempt.started_at
    if attempt.stopped_at is not None:
        out["stoppedAt"] = attempt.stopped_at
    if attempt.status_reason is not None:
        out["statusReason"] = attempt.status_reason
    return out


def _latest(job: ServiceJob) -> dict[str, Any]:
    return {"serviceResourceId": _resource_id(job.attempts[-1].training_job_arn)}


def _capacity_usage(job: ServiceJob) -> list[dict[str, Any]]:
    return [
        {
            "capacityUnit": job.training.instance_type,
            "quantity": float(job.training.instance_count),
        }
    ]


def _times(job: ServiceJob, out: dict[str, Any]) -> None:
    out["createdAt"] = job.created_at
    if job.scheduled_at is not None:
        out["scheduledAt"] = job.scheduled_at
    if job.started_at is not None:
        out["startedAt"] = job.started_at
    if job.stopped_at is not None:
        out["stoppedAt"] = job.stopped_at


def describe_service_job(job: ServiceJob) -> dict[str, Any]:
    """The ``DescribeServiceJob`` response for ``job``.

    ``startedAt`` is the first time the job became RUNNING (absent before);
    ``scheduledAt`` the latest time it was handed to SageMaker (SCHEDULED);
    ``attempts[].startedAt`` the time that attempt became RUNNING.
    """
    out: dict[str, Any] = {
        "jobArn": job.job_arn,
        "jobId": job.job_id,
        "jobName": job.job_name,
        "jobQueue": job.queue_arn,
        "serviceJobType": job.request["serviceJobType"],
        "status": job.status,
    }
    if job.status_reason is not None:
        out["statusReason"] = job.status_reason
    _times(job, out)
    out["schedulingPriority"] = job.scheduling_priority
    out["quotaShareName"] = job.quota_share_name
    out["capacityUsage"] = _capacity_usage(job)
    if job.attempts:
        out["attempts"] = [_attempt_detail(a) for a in job.attempts]
        out["latestAttempt"] = {
            "serviceResourceId": _resource_id(job.attempts[-1].training_job_arn)
        }
    if job.preempted_attempts:
        out["preemptionSummary"] = {
            "preemptedAttemptCount": len(job.preempted_attempts),
            "recentPreemptedAttempts": [
                _attempt_detail(a) for a in job.preempted_attempts[:RECENT_PREEMPTED_WINDOW]
            ],
        }
    if job.is_terminated:
        out["isTerminated"] = True
    for member in _ECHOED_MEMBERS:
        if member in job.request:
            out[member] = copy.deepcopy(job.request[member])
    out["serviceRequestPayload"] = job.request["serviceRequestPayload"]
    if job.request.get("tags"):
        out["tags"] = dict(job.request["tags"])
    return out


def service_job_summary(job: ServiceJob) -> dict[str, Any]:
    """One ``ServiceJobSummary`` of ``ListServiceJobs``; ``isTerminated`` only when true."""
    out: dict[str, Any] = {
        "jobArn": job.job_arn,
        "jobId": job.job_id,
        "jobName": job.job_name,
        "serviceJobType": job.request["serviceJobType"],
        "status": job.status,
    }
    if job.status_reason is not None:
        out["statusReason"] = job.status_reason
    _times(job, out)
    if job.attempts:
        out["latestAttempt"] = {
            "serviceResourceId": _resource_id(job.attempts[-1].training_job_arn)
        }
    out["capacityUsage"] = _capacity_usage(job)
    out["quotaShareName"] = job.quota_share_name
    if job.is_terminated:
        out["isTerminated"] = True
    return out


def event_detail(job: ServiceJob) -> dict[str, Any]:
    """The ``detail`` of a state-change event: ``DescribeServiceJob`` minus tags and payload."""
    detail = describe_service_job(job)
    detail.pop("tags", None)
    detail.pop("serviceRequestPayload", None)
    return detail


def iso_time(epoch_ms: int) -> str:
    """``2026-05-04T09:15:27Z``: EventBridge's ``time`` format (UTC, whole seconds)."""
    moment = datetime.datetime.fromtimestamp(epoch_ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def state_change_event(
    job: ServiceJob, *, event_id: str, epoch_ms: int, region: str, account: str
) -> dict[str, Any]:
    """A full ``Batch Service Job State Change`` EventBridge envelope for ``job`` now.

    Shape (AWS Batch User Guide, "Service job state change events",
    https://docs.aws.amazon.com/batch/latest/userguide/service-job-events.html):
    ``version "0"``, ``id``, ``detail-type``, ``source
    aws.batch``, ``account``, ``time`` (ISO 8601 UTC), ``region``, ``resources`` =
    ``[jobArn]``, ``detail`` = :func:`event_detail`.
    """
    return {
        "version": "0",
        "id": event_id,
        "detail-type": EVENT_DETAIL_TYPE,
        "source": EVENT_SOURCE,
        "account": account,
        "time": iso_time(epoch_ms),
        "region": region,
        "resources": [job.job_arn],
        "detail": event_detail(job),
    }


def quota_share_detail(
    share: QuotaShareRecord, *, queue_arn: str, with_tags: bool
) -> dict[str, Any]:
    """``DescribeQuotaShare`` (``with_tags``) or one ``QuotaShareDetail`` of ``ListQuotaShares``.

    ``status`` is always ``VALID``: the simulated Batch applies changes at once.
    """
    out: dict[str, Any] = {
        "quotaShareName": share.name,
        "quotaShareArn": share.arn,
        "jobQueueArn": queue_arn,
        "capacityLimits": copy.deepcopy(share.capacity_limits),
        "resourceSharingConfiguration": dict(share.resource_sharing),
        "preemptionConfiguration": dict(share.preemption),
        "state": share.state,
        "status": "VALID",
    }
    if with_tags and share.tags:
        out["tags"] = dict(share.tags)
    return out
