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
      "serviceRequestPayload": {...},       # the SageMaker CreateTrainingJob request (an
                                            # object, or the JSON string Batch and the SDK use)
      "retryStrategy": {"attempts": 2, "evaluateOnExit": [...]},  # optional, Batch's shape
      "timeoutConfig": {"attemptDurationSeconds": 14400},          # optional, Batch's shape
      "tags": {"ticket": "GOV-1234"}        # optional: the service job's own tags
    }

``retryStrategy``, ``timeoutConfig`` and ``tags`` are the ``SubmitServiceJob`` members
of the same names (AWS Batch API reference,
https://docs.aws.amazon.com/batch/latest/APIReference/API_SubmitServiceJob.html): the
SageMaker Python SDK's ``TrainingQueue`` sends them beside the training request. Their
shape is checked here; the bounds each workload class allows (attempts, longest attempt)
and the tag keys reserved to quotagov are policy rules (:mod:`quotagov.governance.routing`).

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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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


#: ``retryStrategy.attempts`` Batch accepts for a service job (``SubmitServiceJob``).
MAX_RETRY_ATTEMPTS = 10
#: Most ``evaluateOnExit`` entries Batch accepts, and the longest ``onStatusReason`` glob.
MAX_EVALUATE_ON_EXIT = 5
MAX_STATUS_REASON_GLOB = 512
#: Tags a submission may set: Batch's 50 per service job (key 1-128 characters, value
#: at most 256) less the 5 quotagov sets itself.
MAX_TAGS = 45


class EvaluateOnExit(BaseModel):
    """One ``retryStrategy.evaluateOnExit`` rule: ``RETRY`` or ``EXIT`` when the attempt's
    status reason matches ``onStatusReason`` (a glob, at most 512 characters, that may end
    with ``*``; SageMaker reasons read ``Received status from SageMaker: ...``)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["RETRY", "EXIT"]
    onStatusReason: str | None = Field(default=None, min_length=1, max_length=512)

    @field_validator("action", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class RetryStrategy(BaseModel):
    """``retryStrategy`` of ``SubmitServiceJob``: ``attempts`` (1-10) counts every
    placement into ``RUNNABLE``, the first included; ``evaluateOnExit`` at most 5 rules."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(ge=1, le=MAX_RETRY_ATTEMPTS)
    evaluateOnExit: list[EvaluateOnExit] | None = Field(
        default=None, max_length=MAX_EVALUATE_ON_EXIT
    )


class TimeoutConfig(BaseModel):
    """``timeoutConfig`` of ``SubmitServiceJob``: Batch ends an attempt that runs longer
    than ``attemptDurationSeconds`` (seconds, >= 1)."""

    model_config = ConfigDict(extra="forbid")

    attemptDurationSeconds: int = Field(ge=1)


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
        serviceRequestPayload: the ``CreateTrainingJob`` request: an object, or the JSON
            string of one (what ``SubmitServiceJob`` and the SageMaker SDK carry).
        retryStrategy, timeoutConfig: Batch's settings for the service job, within the
            class's bounds (``maxRetryAttempts``, ``maxAttemptDurationSeconds``).
        tags: the service job's own tags (at most 45, Batch's 50 less quotagov's own; key 1-128
            characters, value at most 256); keys starting ``quotagov:`` or ``aws:`` are
            refused.
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
    retryStrategy: RetryStrategy | None = None
    timeoutConfig: TimeoutConfig | None = None
    tags: dict[str, str] | None = Field(default=None, max_length=MAX_TAGS)

    @field_validator("checkpointIntervalSeconds", mode="before")
    @classmethod
    def _no_boolean_seconds(cls, value: Any) -> Any:
        """JSON ``true`` is not 1 second (pydantic's lax mode would take it as 1)."""
        if isinstance(value, bool):
            raise ValueError("must be a whole number of seconds, not a boolean")
        return value

    @field_validator("serviceRequestPayload", mode="before")
    @classmethod
    def _decode_payload(cls, value: Any) -> Any:
        """The JSON string form: decoded, and it must hold an object."""
        if not isinstance(value, str):
            return value
        try:
            decoded = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"a string must be the request as JSON: {exc}") from None
        if not isinstance(decoded, dict):
            raise ValueError(f"the JSON string must hold an object, not {type(decoded).__name__}")
        return decoded

    @field_validator("tags")
    @classmethod
    def _tag_sizes(cls, tags: dict[str, str] | None) -> dict[str, str] | None:
        for key, value in (tags or {}).items():
            if not 1 <= len(key) <= 128:
                raise ValueError(f"tag key {key[:40]!r} has {len(key)} characters, 1-128 allowed")
            if len(value) > 256:
                raise ValueError(f"tag {key!r}: value has {len(value)} characters, 256 allowed")
        return tags

    def batch_settings(self) -> dict[str, Any]:
        """``retryStrategy``, ``timeoutConfig`` and ``tags`` as plain JSON values (None
        for a member not set; ``evaluateOnExit`` members not set left out): what the
        job record stores and ``SubmitServiceJob`` receives."""
        retry, timeout = self.retryStrategy, self.timeoutConfig
        return {
            "retryStrategy": retry.model_dump(mode="json", exclude_none=True) if retry else None,
            "timeoutConfig": timeout.model_dump(mode="json") if timeout else None,
            "tags": dict(self.tags) if self.tags else None,
        }

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
