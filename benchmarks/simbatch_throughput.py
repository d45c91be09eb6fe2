"""How fast the simulated Batch handles API calls and moves jobs (prints figures).

Submits N real-shaped jobs (with the botocore-model checks on and off) to a queue of
4 quota shares over 64 instances, advancing a ManualClock 0.2 s per call (5 TPS, the
SubmitServiceJob ceiling), then runs the clock until every job has finished and
reports calls per second, events emitted, and peak memory.

Usage: ``python benchmarks/simbatch_throughput.py [N]`` (default 2000).
"""

from __future__ import annotations

import json
import sys
import time
import tracemalloc
from typing import Any

from quotagov.clock import ManualClock
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.simbatch import CHECKPOINT_INTERVAL_HINT, RUN_SECONDS_HINT

GPU = "ml.g5.xlarge"
SHARES = [
    ("research", 24, "LEND_AND_BORROW", "ENABLED"),
    ("prod", 24, "LEND", "DISABLED"),
    ("batch", 8, "LEND_AND_BORROW", "DISABLED"),
    ("reserved", 8, "RESERVE", "DISABLED"),
]


def _batch(check_model: bool) -> tuple[SimulatedBatch, ManualClock]:
    clock = ManualClock(1_780_000_000)
    shares = [
        {
            "quotaShareName": name,
            "capacityLimits": [{"capacityUnit": GPU, "maxCapacity": limit}],
            "resourceSharingConfiguration": {"strategy": strategy},
            "preemptionConfiguration": {"inSharePreemption": in_share},
        }
        for name, limit, strategy, in_share in SHARES
    ]
    batch = SimulatedBatch(
        capacity={GPU: 64}, shares=shares, clock=clock, seed=1, check_model=check_model
    )
    return batch, clock


def _request(i: int) -> dict[str, Any]:
    share = SHARES[i % len(SHARES)][0]
    payload = {
        "TrainingJobName": f"job-{i}",
        "ResourceConfig": {"InstanceType": GPU, "InstanceCount": 1 + i % 2},
        "CheckpointConfig": {"S3Uri": f"s3://bucket/ckpt/{i}/"},
    }
    return {
        "jobName": f"job-{i}",
        "jobQueue": "quotagov-queue",
        "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": json.dumps(payload),
        "quotaShareName": share,
        "schedulingPriority": (i * 37) % 100,
        "tags": {RUN_SECONDS_HINT: str(600 + (i * 131) % 3000), CHECKPOINT_INTERVAL_HINT: "300"},
    }


def run(n: int, check_model: bool) -> None:
    batch, clock = _batch(check_model)
    tracemalloc.start()
    started = time.perf_counter()
    for i in range(n):
        batch.submit_service_job(**_request(i))
        clock.advance(0.2)
    submitted = time.perf_counter()
    while (
        batch.list_service_jobs(jobStatus="RUNNABLE", maxResults=1)["jobSummaryList"]
        or (batch.list_service_jobs(maxResults=1)["jobSummaryList"])
    ):
        clock.advance(600)
    finished = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    mode = "model checks on " if check_model else "model checks off"
    print(
        f"{mode}: {n} submissions in {submitted - started:.2f} s "
        f"({n / (submitted - started):.0f} calls/s); drained in {finished - submitted:.2f} s; "
        f"{len(batch.events)} events; peak traced memory {peak / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    run(count, check_model=True)
    run(count, check_model=False)
