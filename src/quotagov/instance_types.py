"""SageMaker training instance types: how many GPUs one instance has, written once.

Used to turn lost instance-seconds into GPU-hours (the ``LostGpuHours`` metric).
Source: Amazon SageMaker AI instance types (accelerated computing: ``ml.g4dn``,
``ml.g5``, ``ml.g6``, ``ml.g6e``, ``ml.p3``, ``ml.p3dn``, ``ml.p4d``, ``ml.p4de``,
``ml.p5``), as listed on the SageMaker pricing page; CPU-only and Trainium/Inferentia
types have no GPU and are absent (:func:`gpus_per_instance` answers None).
"""

from __future__ import annotations

#: GPUs per instance, by SageMaker training instance type.
GPUS_PER_INSTANCE: dict[str, int] = {
    **{f"ml.g4dn.{size}": 1 for size in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")},
    "ml.g4dn.12xlarge": 4,
    **{f"ml.g5.{size}": 1 for size in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")},
    "ml.g5.12xlarge": 4,
    "ml.g5.24xlarge": 4,
    "ml.g5.48xlarge": 8,
    **{f"ml.g6.{size}": 1 for size in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")},
    "ml.g6.12xlarge": 4,
    "ml.g6.24xlarge": 4,
    "ml.g6.48xlarge": 8,
    **{f"ml.g6e.{size}": 1 for size in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")},
    "ml.g6e.12xlarge": 4,
    "ml.g6e.24xlarge": 4,
    "ml.g6e.48xlarge": 8,
    "ml.p3.2xlarge": 1,
    "ml.p3.8xlarge": 4,
    "ml.p3.16xlarge": 8,
    "ml.p3dn.24xlarge": 8,
    "ml.p4d.24xlarge": 8,
    "ml.p4de.24xlarge": 8,
    "ml.p5.48xlarge": 8,
}


def gpus_per_instance(instance_type: str | None) -> int | None:
    """GPUs of one ``instance_type`` instance; None for an unknown or GPU-less type."""
    return GPUS_PER_INSTANCE.get(instance_type or "")


def gpu_hours(instance_type: str | None, instance_seconds: float) -> float | None:
    """``instance_seconds`` (seconds x instances) as GPU-hours; None when the GPU count
    of ``instance_type`` is unknown."""
    gpus = gpus_per_instance(instance_type)
    return None if gpus is None else instance_seconds * gpus / 3600.0
