"""The submission a researcher sends (``POST /jobs`` body, or a submission-queue message).

Shape (JSON)::

    {
      "team": "research",                   # a team of the policy
      "workloadClass": "exploratory",       # a class the team may use
      "priorityLevel": "standard",          # a level the team may set directly
      "jobName": "resnet-sweep-017",        # optional; default: TrainingJobName
      "quotaShareName": "background",       # optional; default: the first share that fits
      "checkpointIntervalSeconds": 600,     # required when the class requires checkpointing
      "clientRequestId": "sweep-017-try-1", # optional; retries with the same id are one submission
      "serviceRequestPayload": {...}        # the SageMaker CreateTrainingJob request
    }

The caller's identity is never part of the body: it comes from the API Gateway
request context or the queue message's ``principal`` attribute.

Schema faults are reported by pydantic with the field path (``loc``), e.g.
``serviceRequestPayload.ResourceConfig.InstanceCount``; the handlers turn them into
HTTP 400 (API) or a FAILED record (queue). Limits: ``SubmitServiceJob`` API reference
(``jobName`` 1-128 letters, digits, ``-``, ``_``; ``clientToken`` 1-64) and the AWS Batch
service quotas page (``serviceRequestPayload`` at most 10 KiB); SageMaker
``CreateTrainingJob`` (``TrainingJobName`` pattern, ``CheckpointConfig.S3Uri``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: ``serviceRequestPayload`` size limit in bytes (AWS Batch service quotas: 10 KiB).
MAX_PAYLOAD_BYTES = 10 * 1024
#: Longest ``checkpointIntervalSeconds`` accepted (one week).
MAX_CHECKPOINT_INTERVAL_SECONDS = 604_800

_NAME = r"^[A-Za-z0-9_-]{1,128}$"
_TRAINING_JOB_NAME = r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$"


class TrainingResourceConfig(BaseModel):
    """``ResourceConfig`` of the training request: one instance type and a count.

    ``InstanceGroups`` and ``InstancePreferences`` are refused: how Batch counts their
    capacity against quota shares is not documented.
    """

    model_config = ConfigDict(extra="allow")

    InstanceType: str = Field(pattern=r"^ml\.[a-z0-9-]+\.[a-z0-9-]+$")
    InstanceCount: int = Field(ge=1)

    @model_validator(mode="before")
    @classmethod
    def _single_instance_type_only(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name in ("InstanceGroups", "InstancePreferences"):
                if name in data:
                    raise ValueError(
                        f"{name} is not supported: use InstanceType and InstanceCount, "
                        "the capacity Batch counts against quota shares"
                    )
        return data


class TrainingCheckpointConfig(BaseModel):
    """``CheckpointConfig``: where SageMaker syncs checkpoints (``S3Uri``, ``s3://...``)."""

    model_config = ConfigDict(extra="forbid")

    S3Uri: str = Field(pattern=r"^s3://[^/]+(/.*)?$", max_length=1024)
    LocalPath: str | None = Field(default=None, max_length=4096)


class TrainingJobRequest(BaseModel):
    """The SageMaker ``CreateTrainingJob`` request sent as ``serviceRequestPayload``.

    Only the members quotagov relies on are checked; every other member is passed to
    Batch unchanged (Batch does not validate the payload; SageMaker does at run time).
    """

    model_config = ConfigDict(extra="allow")

    TrainingJobName: str = Field(min_length=1, max_length=63, pattern=_TRAINING_JOB_NAME)
    RoleArn: str = Field(min_length=20, max_length=2048)
    AlgorithmSpecification: dict[str, Any]
    OutputDataConfig: dict[str, Any]
    ResourceConfig: TrainingResourceConfig
    CheckpointConfig: TrainingCheckpointConfig | None = None

    @model_validator(mode="after")
    def _fits_batch(self) -> TrainingJobRequest:
        size = len(self.to_json().encode())
        if size > MAX_PAYLOAD_BYTES:
            raise ValueError(
                f"the request is {size} bytes as JSON, Batch accepts at most {MAX_PAYLOAD_BYTES}"
            )
        return self

    def to_json(self) -> str:
        """The request as compact JSON: the ``serviceRequestPayload`` string."""
        return json.dumps(
            self.model_dump(mode="json", exclude_unset=True), separators=(",", ":"), sort_keys=True
        )

    @property
    def checkpoints(self) -> bool:
        """True when the request configures checkpoints (``CheckpointConfig.S3Uri``)."""
        return self.CheckpointConfig is not None


class SubmissionRequest(BaseModel):
    """A submission: team, workload class, priority level and the training request.

    Attributes:
        team, workloadClass, priorityLevel: names in the policy.
        jobName: the Batch ``jobName``; default the payload's ``TrainingJobName``.
        quotaShareName: asks for one of the class's shares; default the first that fits.
        checkpointIntervalSeconds: how often the training code writes a checkpoint
            (1-604800 s); required when the class requires checkpointing, since the
            estimate of work lost to preemption depends on it.
        clientRequestId: the caller's idempotency key (1-64 characters); the same
            caller retrying with the same key gets the same submission.
        serviceRequestPayload: the ``CreateTrainingJob`` request (an object, not a string).
    """

    model_config = ConfigDict(extra="forbid")

    team: str = Field(pattern=_NAME)
    workloadClass: str = Field(pattern=_NAME)
    priorityLevel: str = Field(pattern=_NAME)
    jobName: str | None = Field(default=None, pattern=_NAME)
    quotaShareName: str | None = Field(default=None, pattern=_NAME)
    checkpointIntervalSeconds: int | None = Field(
        default=None, ge=1, le=MAX_CHECKPOINT_INTERVAL_SECONDS
    )
    clientRequestId: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.:-]{1,64}$")
    serviceRequestPayload: TrainingJobRequest

    @property
    def batch_job_name(self) -> str:
        """The Batch ``jobName``: ``jobName`` or the payload's ``TrainingJobName``."""
        return self.jobName or self.serviceRequestPayload.TrainingJobName


#: Longest ``MaxRuntimeInSeconds`` SageMaker accepts without a raised quota (28 days).
MAX_RUNTIME_SECONDS = 2_419_200


def training_rule_faults(payload: TrainingJobRequest) -> list[tuple[str, str]]:
    """The ``CreateTrainingJob`` rules botocore's model does not carry, as ``(path, fault)``.

    From the SageMaker API reference, ``StoppingCondition`` and ``CreateTrainingJob``:

    - ``StoppingCondition.MaxWaitTimeInSeconds`` is for managed spot training only: it
      needs ``EnableManagedSpotTraining: true``, and spot training needs it;
    - it must be at least ``MaxRuntimeInSeconds`` (the wait includes the run);
    - ``MaxRuntimeInSeconds`` is at most 2,419,200 s (28 days).

    Paths are relative to the payload (``StoppingCondition.MaxWaitTimeInSeconds``).
    Values of the wrong type are left to the model check
    (:mod:`quotagov.adapters.sagemaker_model`), which reports them.
    """
    extra = payload.model_extra or {}
    spot = extra.get("EnableManagedSpotTraining") is True
    stopping = extra.get("StoppingCondition")
    stopping = stopping if isinstance(stopping, dict) else {}

    def number(name: str) -> int | None:
        value = stopping.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    runtime, wait = number("MaxRuntimeInSeconds"), number("MaxWaitTimeInSeconds")
    faults: list[tuple[str, str]] = []
    if "MaxWaitTimeInSeconds" in stopping and not spot:
        faults.append(
            (
                "StoppingCondition.MaxWaitTimeInSeconds",
                "only for managed spot training: set EnableManagedSpotTraining to true "
                "or leave MaxWaitTimeInSeconds out",
            )
        )
    if spot and "MaxWaitTimeInSeconds" not in stopping:
        faults.append(
            (
                "StoppingCondition.MaxWaitTimeInSeconds",
                "required with EnableManagedSpotTraining (how long to wait for spot capacity "
                "and run, in seconds)",
            )
        )
    if runtime is not None and wait is not None and wait < runtime:
        faults.append(
            (
                "StoppingCondition.MaxWaitTimeInSeconds",
                f"{wait} s is shorter than MaxRuntimeInSeconds ({runtime} s); it must be at "
                "least as long",
            )
        )
    if runtime is not None and runtime > MAX_RUNTIME_SECONDS:
        faults.append(
            (
                "StoppingCondition.MaxRuntimeInSeconds",
                f"{runtime} s is above SageMaker's limit of {MAX_RUNTIME_SECONDS} s (28 days)",
            )
        )
    return faults


def error_path(loc: tuple[int | str, ...] | list[int | str]) -> str:
    """A pydantic error location as a field path: ``a.b[2].c`` (``(body)`` when empty)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(body)"


def schema_faults(errors: list[Any]) -> list[str]:
    """``path: message`` for each pydantic error dict (``loc``, ``msg``), in order."""
    return [f"{error_path(tuple(e.get('loc', ())))}: {e.get('msg', 'invalid')}" for e in errors]
