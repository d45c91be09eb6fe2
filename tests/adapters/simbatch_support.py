"""Real-shaped requests for driving the simulated Batch in tests."""

from __future__ import annotations

import json
from typing import Any

from quotagov.adapters.simbatch import CHECKPOINT_INTERVAL_HINT, RUN_SECONDS_HINT

EPOCH = 1_780_000_000.0
QUEUE = "ml-gov-queue"
ACCOUNT = "111122223333"
REGION = "eu-west-1"
QUEUE_ARN = f"arn:aws:batch:{REGION}:{ACCOUNT}:job-queue/{QUEUE}"
GPU = "ml.g5.xlarge"


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
    payload: dict[str, Any] = {
        "TrainingJobName": name,
        "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/sm-exec",
        "AlgorithmSpecification": {
            "TrainingImage": f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/train:1",
            "TrainingInputMode": "File",
        },
        "ResourceConfig": {
            "InstanceType": instance_type,
            "InstanceCount": count,
            "VolumeSizeInGB": 100,
        },
        "OutputDataConfig": {"S3OutputPath": "s3://example-artifacts/out/"},
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
    }
    if checkpoint:
        payload["CheckpointConfig"] = {"S3Uri": f"s3://example-artifacts/ckpt/{name}/"}
    return json.dumps(payload)


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
