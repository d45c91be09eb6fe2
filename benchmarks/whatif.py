"""What-if benchmark: 4 policies x 100,000 jobs, in one process and in the process pool.

The workload is drawn from the shipped OpenB sample (``examples/traces``): each job
takes the team/class placement, GPU count (as ml.g5.xlarge instances) and run time of
a random imported task (times divided by ``--compress``); arrivals are Poisson at the
rate that offers ``--load`` of the 24-instance environment. The 4 policies are
``src/quotagov/examples/whatif-today.yaml``, ``whatif-candidate.yaml`` and two variants
of today's (in-share preemption on in background; background's borrow limit 100 %).

Prints, for one process and for the pool (``--workers``, default the cores): wall
time, CPU seconds (this process and its workers), peak memory (the parent's peak RSS,
and the largest worker's), the load average before the run (the machine may be
shared: then wall time is not what the code costs), and the pool's speed-up (wall
over wall). Targets on the 2-core machine: under 60 s and 4 GB.

Usage: ``python benchmarks/whatif.py [--jobs 100000] [--workers 2] [--skip-serial]``
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import time
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from quotagov.policy import Policy, load_policy
from quotagov.policy.validation import parse_policy
from quotagov_tools.whatif import WhatIf, Workload, run_whatif
from quotagov_tools.whatif.importers import from_csv
from quotagov_tools.whatif.mapping import parse_maps

TRACE = Path(__file__).resolve().parents[1] / "examples/traces/openb_pod_list_gpushare40.csv"
MAPS = [
    "LS=research:exploratory",
    "BE=applied:scheduled",
    "Burstable=release:release",
    "Guaranteed=release:release",
]
CAPACITY = {"ml.g5.xlarge": 24}


def _example(name: str) -> Policy:
    return load_policy(resources.files("quotagov.examples").joinpath(name).read_text())


def policies() -> dict[str, Policy]:
    """today, candidate, today with in-share preemption, today with borrowLimit 100."""
    today = _example("whatif-today.yaml")

    def variant(change: Any) -> Policy:
        data = today.model_dump(mode="json", exclude_none=True)
        change(data["quotaShares"][0])
        return parse_policy(data)

    def in_share(share: dict[str, Any]) -> None:
        share["preemptionConfiguration"] = {"inSharePreemption": "ENABLED"}

    def borrow_100(share: dict[str, Any]) -> None:
        share["resourceSharingConfiguration"]["borrowLimit"] = 100

    return {
        "today": today,
        "candidate": _example("whatif-candidate.yaml"),
        "in-share": variant(in_share),
        "borrow-100": variant(borrow_100),
    }


def workload(n_jobs: int, compress: float, load: float, seed: int = 11) -> Workload:
    """``n_jobs`` jobs resampled from the OpenB sample at ``load`` offered load."""
    sample = from_csv(TRACE, maps=parse_maps(MAPS), compress=compress)
    rng = random.Random(seed)
    pool = sample.jobs
    mean_demand = sum(j.runSeconds * j.instanceCount for j in pool) / len(pool)
    rate = load * sum(CAPACITY.values()) / mean_demand  # jobs per second
    t = 0.0
    jobs = []
    for i in range(n_jobs):
        t += rng.expovariate(rate)
        src = pool[rng.randrange(len(pool))]
        jobs.append(replace(src, name=f"j{i}", submittedAt=t))
    return Workload(f"openb-resampled-{n_jobs}", tuple(jobs), notes=dict(sample.notes))


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished workers."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _peak_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--compress", type=float, default=50.0)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--skip-serial", action="store_true")
    args = parser.parse_args()
    jobs = workload(args.jobs, args.compress, args.load)
    config = WhatIf(policies=policies(), workload=jobs, capacity=CAPACITY)
    print(
        f"{len(config.policies)} policies x {len(jobs.jobs):,} jobs, "
        f"{os.cpu_count()} cores, environment {CAPACITY}"
    )
    timings = {}
    for workers in ([] if args.skip_serial else [1]) + [args.workers]:
        load = os.getloadavg()[0]
        cpu0 = _cpu_seconds()
        start = time.perf_counter()
        report, _ = run_whatif(replace(config, workers=workers))
        timings[workers] = time.perf_counter() - start
        print(
            f"workers={workers}: wall {timings[workers]:.1f} s, CPU {_cpu_seconds() - cpu0:.1f} s, "
            f"peak RSS parent {_peak_mb(resource.RUSAGE_SELF):.0f} MB, largest worker "
            f"{_peak_mb(resource.RUSAGE_CHILDREN):.0f} MB (load average before: {load:.1f})"
        )
    if 1 in timings and args.workers in timings and args.workers != 1:
        print(f"pool speed-up over one process: {timings[1] / timings[args.workers]:.2f}x")
    for line in report["verdicts"].values():
        print(" ", line)


if __name__ == "__main__":
    main()
