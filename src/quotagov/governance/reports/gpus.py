"""GPUs per SageMaker training instance type, to turn lost instance-seconds into
GPU-hours.

Counts are the accelerators of each instance type as AWS lists them on the SageMaker
pricing and EC2 accelerated-computing pages (e.g. ``ml.g5.xlarge`` 1 NVIDIA A10G,
``ml.p4d.24xlarge`` 8 A100). An instance type not listed here has no GPU count: the
report then shows its lost instance-hours and says the GPU-hours are unknown, never a
guess.
"""

from __future__ import annotations

_G5_G6 = {
    "xlarge": 1,
    "2xlarge": 1,
    "4xlarge": 1,
    "8xlarge": 1,
    "16xlarge": 1,
    "12xlarge": 4,
    "24xlarge": 4,
    "48xlarge": 8,
}

GPUS_PER_INSTANCE: dict[str, int] = {
    **{f"ml.g5.{size}": n for size, n in _G5_G6.items()},
    **{f"ml.g6.{size}": n for size, n in _G5_G6.items()},
    **{f"ml.g4dn.{size}": 1 for size in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")},
    "ml.g4dn.12xlarge": 4,
    "ml.p3.2xlarge": 1,
    "ml.p3.8xlarge": 4,
    "ml.p3.16xlarge": 8,
    "ml.p3dn.24xlarge": 8,
    "ml.p4d.24xlarge": 8,
    "ml.p4de.24xlarge": 8,
    "ml.p5.48xlarge": 8,
}


def gpus_per_instance(instance_type: str) -> int | None:
    """GPUs of one instance of ``instance_type``, or None when not known."""
    return GPUS_PER_INSTANCE.get(instance_type)
