"""Build real ``Batch Service Job State Change`` envelopes for tests.

The shape is AWS Batch User Guide, "Service job state change events",
https://docs.aws.amazon.com/batch/latest/userguide/service-job-events.html.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from support.aws import ACCOUNT, QUEUE_ARN, REGION


def training_job_arn(name: str) -> str:
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-job/AWSBatch{name}"


def attempt(name: str, started_ms: int, stopped_ms: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "serviceResourceId": {"name": "TrainingJobArn", "value": training_job_arn(name)},
        "startedAt": started_ms,
    }
    if stopped_ms is not None:
        out["stoppedAt"] = stopped_ms
        out["statusReason"] = "preempted"
    return out


def envelope(
    job_id: str,
    status: str,
    time_ms: int,
    *,
    share: str = "background",
    created_ms: int,
    attempts: list[dict[str, Any]] | None = None,
    preempted: list[dict[str, Any]] | None = None,
    preempted_count: int | None = None,
    retries: int | None = 1,
    stopped_ms: int | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One EventBridge envelope with the ``DescribeServiceJob``-shaped detail."""
    job_arn = f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/{job_id}"
    detail: dict[str, Any] = {
        "jobArn": job_arn,
        "jobId": job_id,
        "jobName": f"job-{job_id[:8]}",
        "jobQueue": QUEUE_ARN,
        "serviceJobType": "SAGEMAKER_TRAINING",
        "quotaShareName": share,
        "schedulingPriority": 10,
        "status": status,
        "statusReason": "<text not documented>",
        "createdAt": created_ms,
        "attempts": attempts or [],
        "retryStrategy": {"attempts": 1},
        "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 2.0}],
    }
    if attempts:
        detail["startedAt"] = attempts[0]["startedAt"]
        detail["latestAttempt"] = {"serviceResourceId": attempts[-1]["serviceResourceId"]}
    if retries is not None:
        detail["preemptionConfiguration"] = {"preemptionRetriesBeforeTermination": retries}
    if preempted_count is not None:
        detail["preemptionSummary"] = {
            "preemptedAttemptCount": preempted_count,
            "recentPreemptedAttempts": preempted or [],
        }
    if stopped_ms is not None:
        detail["stoppedAt"] = stopped_ms
    detail.update(extra or {})
    return {
        "version": "0",
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{job_id}/{status}/{time_ms}")),
        "detail-type": "Batch Service Job State Change",
        "source": "aws.batch",
        "account": ACCOUNT,
        "time": datetime.fromtimestamp(time_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": REGION,
        "resources": [job_arn],
        "detail": detail,
    }


def preempted_twice(job_id: str, created_ms: int) -> list[dict[str, Any]]:
    """A job (retries 1) preempted twice, ending FAILED; times in ms from ``created_ms``.

    Attempt 1 runs 1500 s (10:00 -> 10:25 after creation + 60 s), attempt 2 runs 900 s.
    """
    s = 1000
    t0 = created_ms
    a1_start, a1_stop = t0 + 60 * s, t0 + 60 * s + 1500 * s
    a2_start, a2_stop = a1_stop + 300 * s, a1_stop + 300 * s + 900 * s
    a1 = attempt("one", a1_start)
    a1_done = attempt("one", a1_start, a1_stop)
    a2 = attempt("two", a2_start)
    a2_done = attempt("two", a2_start, a2_stop)
    return [
        envelope(job_id, "RUNNABLE", t0 + 5 * s, created_ms=t0),
        envelope(job_id, "SCHEDULED", a1_start, created_ms=t0, attempts=[a1]),
        envelope(job_id, "RUNNING", a1_start + 30 * s, created_ms=t0, attempts=[a1]),
        envelope(
            job_id,
            "RUNNABLE",
            a1_stop,
            created_ms=t0,
            attempts=[a1_done],
            preempted=[a1_done],
            preempted_count=1,
        ),
        envelope(
            job_id,
            "RUNNING",
            a2_start + 30 * s,
            created_ms=t0,
            attempts=[a1_done, a2],
            preempted=[a1_done],
            preempted_count=1,
        ),
        envelope(
            job_id,
            "FAILED",
            a2_stop,
            created_ms=t0,
            attempts=[a1_done, a2_done],
            preempted=[a2_done, a1_done],
            preempted_count=2,
            stopped_ms=a2_stop,
        ),
    ]
