"""Reading a ``SubmitServiceJob`` request for what the simulated Batch needs to schedule it.

The ``serviceRequestPayload`` is a SageMaker ``CreateTrainingJob`` request as a JSON
string (Amazon SageMaker API Reference, "CreateTrainingJob",
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateTrainingJob.html). From
it the simulator takes:

- ``ResourceConfig.InstanceType`` (the quota capacity unit) and
  ``ResourceConfig.InstanceCount`` (instances held, default 1),
- whether ``CheckpointConfig`` is present (checkpointing on or off),
- ``TrainingJobName`` (for the ``AWSBatch<name><32 hex>`` training-job ARNs).

How long a job runs is not in a training request (``StoppingCondition.
MaxRuntimeInSeconds`` is a cap, not a duration), so the simulator reads **simulation
hints**, looked up first in the ``SubmitServiceJob`` ``tags`` and then in the
payload's SageMaker ``Tags`` list (``[{"Key": ..., "Value": ...}]``), so a hint survives
a submission path that forwards the training request unchanged:

================================================  =====================================
hint (tag key)                                    meaning
================================================  =====================================
``quotagov:simRunSeconds``                        seconds of RUNNING the job needs to
                                                  succeed; absent: runs until terminated
``quotagov:simCheckpointIntervalSeconds``         checkpoint interval, used only when
                                                  the payload has ``CheckpointConfig``
``quotagov:simRestartOverheadSeconds``            work added after each preemption
================================================  =====================================

Without ``CheckpointConfig`` a job does not checkpoint (a preemption loses the whole
attempt), whatever the hints say. With ``CheckpointConfig`` and no interval hint, the
simulator's default interval applies (see :class:`~quotagov_tools.batch_simulated.
SimulatedBatch`).

Only ``InstanceType`` + ``InstanceCount`` payloads are supported; ``InstanceGroups`` and
``InstancePreferences`` are refused, because Batch does not document how they are
counted against capacity limits (AWS does not document this).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

RUN_SECONDS_HINT = "quotagov:simRunSeconds"
CHECKPOINT_INTERVAL_HINT = "quotagov:simCheckpointIntervalSeconds"
RESTART_OVERHEAD_HINT = "quotagov:simRestartOverheadSeconds"

#: ``serviceRequestPayload`` size limit (AWS Batch User Guide, "AWS Batch service quotas").
MAX_PAYLOAD_BYTES = 10 * 1024


class PayloadError(ValueError):
    """The request cannot be scheduled; the message starts with the field path."""


@dataclass(frozen=True, slots=True)
class TrainingRequest:
    """What the simulator schedules for one service job.

    Attributes:
        training_job_name: ``TrainingJobName`` of the payload ("" when absent).
        instance_type: SageMaker instance type, the capacity unit.
        instance_count: instances held while started (>= 1).
        checkpointing: the payload has a ``CheckpointConfig``.
        run_seconds: seconds of RUNNING needed to succeed; None = never ends by itself.
        checkpoint_interval_seconds: None when the job does not checkpoint.
        restart_overhead_seconds: work added after each preemption (>= 0).
    """

    training_job_name: str
    instance_type: str
    instance_count: int
    checkpointing: bool
    run_seconds: float | None
    checkpoint_interval_seconds: float | None
    restart_overhead_seconds: float


def _hints(request: Mapping[str, Any], payload: Mapping[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    sm_tags = payload.get("Tags")
    if isinstance(sm_tags, list):
        for tag in sm_tags:
            if isinstance(tag, Mapping) and isinstance(tag.get("Key"), str):
                found[tag["Key"]] = str(tag.get("Value", ""))
    batch_tags = request.get("tags")
    if isinstance(batch_tags, Mapping):
        found.update({str(k): str(v) for k, v in batch_tags.items()})
    return found


def _seconds(hints: Mapping[str, str], key: str, *, positive: bool) -> float | None:
    raw = hints.get(key)
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise PayloadError(f"tags[{key!r}]: {raw!r} is not a number of seconds") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise PayloadError(f"tags[{key!r}]: {raw!r} is not a finite number of seconds")
    if positive and value <= 0:
        raise PayloadError(f"tags[{key!r}]: must be > 0 seconds, got {raw}")
    if value < 0:
        raise PayloadError(f"tags[{key!r}]: must be >= 0 seconds, got {raw}")
    return value


def _payload(request: Mapping[str, Any]) -> dict[str, Any]:
    """The ``serviceRequestPayload`` as a JSON object of at most 10 KiB."""
    text = request.get("serviceRequestPayload")
    if not isinstance(text, str):
        raise PayloadError("serviceRequestPayload: required, a JSON string")
    size = len(text.encode())
    if size > MAX_PAYLOAD_BYTES:
        raise PayloadError(
            f"serviceRequestPayload: {size} bytes, the limit is {MAX_PAYLOAD_BYTES} bytes"
        )
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PayloadError(f"serviceRequestPayload: not valid JSON ({exc.msg})") from None
    if not isinstance(payload, dict):
        raise PayloadError("serviceRequestPayload: must be a JSON object (CreateTrainingJob)")
    return payload


def _instances(payload: Mapping[str, Any]) -> tuple[str, int]:
    """``(InstanceType, InstanceCount)`` of the payload's ``ResourceConfig``."""
    resources = payload.get("ResourceConfig")
    if not isinstance(resources, dict):
        raise PayloadError("serviceRequestPayload.ResourceConfig: required, an object")
    for unsupported in ("InstanceGroups", "InstancePreferences"):
        if unsupported in resources:
            raise PayloadError(
                f"serviceRequestPayload.ResourceConfig.{unsupported}: not supported by the "
                "simulated Batch (capacity accounting is undocumented); use InstanceType"
            )
    instance_type = resources.get("InstanceType")
    if not isinstance(instance_type, str) or not instance_type:
        raise PayloadError(
            "serviceRequestPayload.ResourceConfig.InstanceType: required, e.g. 'ml.g5.xlarge'"
        )
    count = resources.get("InstanceCount", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise PayloadError(
            f"serviceRequestPayload.ResourceConfig.InstanceCount: must be an integer >= 1, "
            f"got {count!r}"
        )
    return instance_type, count


def parse_training_request(
    request: Mapping[str, Any], *, default_checkpoint_interval_seconds: float
) -> TrainingRequest:
    """Read a ``SubmitServiceJob`` request (its payload and hints) for scheduling.

    Args:
        request: the ``SubmitServiceJob`` request members.
        default_checkpoint_interval_seconds: interval used when the payload has a
            ``CheckpointConfig`` and no ``quotagov:simCheckpointIntervalSeconds`` hint.

    Raises:
        PayloadError: naming the field, when the payload is not a JSON object, is
            over 10 KiB, lacks ``ResourceConfig.InstanceType``, uses instance groups or
            preferences, has a bad ``InstanceCount``, or a hint is not a valid number.
    """
    payload = _payload(request)
    instance_type, count = _instances(payload)
    checkpointing = isinstance(payload.get("CheckpointConfig"), dict)
    hints = _hints(request, payload)
    interval = _seconds(hints, CHECKPOINT_INTERVAL_HINT, positive=True)
    if checkpointing and interval is None:
        interval = default_checkpoint_interval_seconds
    name = payload.get("TrainingJobName")
    return TrainingRequest(
        training_job_name=name if isinstance(name, str) else "",
        instance_type=instance_type,
        instance_count=count,
        checkpointing=checkpointing,
        run_seconds=_seconds(hints, RUN_SECONDS_HINT, positive=True),
        checkpoint_interval_seconds=interval if checkpointing else None,
        restart_overhead_seconds=_seconds(hints, RESTART_OVERHEAD_HINT, positive=False) or 0.0,
    )
