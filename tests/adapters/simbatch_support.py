"""Real-shaped requests for driving the simulated Batch in tests."""

from __future__ import annotations

import json
from typing import Any

from quotagov_tools.simbatch import CHECKPOINT_INTERVAL_HINT, RUN_SECONDS_HINT
from support.aws import GPU
from support.aws import QUEUE_NAME as QUEUE
from support.payloads import training_job_request

EPOCH = 1_780_000_000.0


def share(
    name: str,
    max_capacity: int = 1,
    strategy: str = "LEND_AND_BORROW",
    in_share: str = "DISABLED",
    unit: str = GPU,
    **extra: Any,
) -> dict[str, Any]:
    """A CreateQuotaShare request (without jobQueue)."""
    return {
        "quotaShareName": name,
        "capacityLimits": [{"capacityUnit": unit, "maxCapacity": max_capacity}],
        "resourceSharingConfiguration": {"strategy": strategy},
        "preemptionConfiguration": {"inSharePreemption": in_share},
        **extra,
    }


def training_payload(
    name: str, instance_type: str = GPU, count: int = 1, checkpoint: bool = False
) -> str:
    """A SageMaker CreateTrainingJob request as JSON, as the submission path sends it."""
    checkpoint_uri = f"s3://example-artifacts/ckpt/{name}/" if checkpoint else None
    return json.dumps(
        training_job_request(
            name, instance_type=instance_type, instance_count=count, checkpoint_uri=checkpoint_uri
        )
    )


def submit_request(
    name: str,
    quota_share: str,
    *,
    run_seconds: float | None = None,
    checkpoint_interval: float | None = None,
    priority: int = 0,
    count: int = 1,
    instance_type: str = GPU,
    retries: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A SubmitServiceJob request with simulation hints in its tags."""
    tags: dict[str, str] = {"team": "vision"}
    if run_seconds is not None:
        tags[RUN_SECONDS_HINT] = str(run_seconds)
    if checkpoint_interval is not None:
        tags[CHECKPOINT_INTERVAL_HINT] = str(checkpoint_interval)
    request: dict[str, Any] = {
        "jobName": name,
        "jobQueue": QUEUE,
        "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": training_payload(
            name, instance_type, count, checkpoint=checkpoint_interval is not None
        ),
        "quotaShareName": quota_share,
        "schedulingPriority": priority,
        "tags": tags,
    }
    if retries is not None:
        request["preemptionConfiguration"] = {"preemptionRetriesBeforeTermination": retries}
    request.update(extra)
    return request
