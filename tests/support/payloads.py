"""SageMaker ``CreateTrainingJob`` requests: the ``serviceRequestPayload`` of a service job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from support.aws import ACCOUNT, GPU, REGION

ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/sm-exec"
IMAGE = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/train:1"
OUTPUT_PATH = "s3://example-artifacts/out/"


def training_job_request(
    name: str,
    *,
    instance_type: str = GPU,
    instance_count: int = 1,
    volume_gb: int | None = 100,
    role_arn: str = ROLE_ARN,
    image: str = IMAGE,
    output_path: str = OUTPUT_PATH,
    max_runtime_seconds: int | None = 86400,
    checkpoint_uri: str | None = None,
    tags: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A ``CreateTrainingJob`` request named ``name`` (a dict; callers JSON-encode it).

    ``volume_gb`` or ``max_runtime_seconds`` ``None`` leaves ``VolumeSizeInGB`` or
    ``StoppingCondition`` out; ``checkpoint_uri`` adds a ``CheckpointConfig``; ``tags``
    (even empty) become ``Tags`` in SageMaker's ``[{"Key", "Value"}]`` form, in order,
    where the simulated Batch reads its hints (``quotagov:simRunSeconds`` ...).
    """
    resources: dict[str, Any] = {"InstanceType": instance_type, "InstanceCount": instance_count}
    if volume_gb is not None:
        resources["VolumeSizeInGB"] = volume_gb
    request: dict[str, Any] = {
        "TrainingJobName": name,
        "RoleArn": role_arn,
        "AlgorithmSpecification": {"TrainingImage": image, "TrainingInputMode": "File"},
        "ResourceConfig": resources,
        "OutputDataConfig": {"S3OutputPath": output_path},
    }
    if max_runtime_seconds is not None:
        request["StoppingCondition"] = {"MaxRuntimeInSeconds": max_runtime_seconds}
    if checkpoint_uri is not None:
        request["CheckpointConfig"] = {"S3Uri": checkpoint_uri}
    if tags is not None:
        request["Tags"] = [{"Key": key, "Value": value} for key, value in tags.items()]
    return request
