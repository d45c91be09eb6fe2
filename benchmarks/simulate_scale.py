"""Scale benchmark of the local scheduler: time, throughput and peak memory up to 1M jobs.

Builds synthetic traces (20 quota shares, 5 instance types, mixed strategies and borrow
limits, in-share preemption on some shares, mixed priorities, instance counts,
checkpoint intervals, restart overheads and retry limits, a few priority updates and
capacity-limit changes) with a fixed seed. Each run is a fresh process that validates,
simulates and writes the JSON output to /dev/null (trace generation excluded) and
reports CPU seconds, wall seconds and peak resident memory. Series:

- STRICT_FIFO at 85 % offered load: 10,000, 100,000 and 1,000,000 jobs;
- BEST_EFFORT_FIFO at 150 % offered load (overload): 10,000 and 100,000 jobs;

with the per-job cost ratio between successive sizes.

Targets (one core): 1,000,000 jobs under 60 s and under 2 GiB, per-job cost at 1M at
most 1.3 times that at 100k; BEST_EFFORT_FIFO at 150 %: 100,000 jobs under 20 s, ratio
at most 1.3.

Usage: ``python benchmarks/simulate_scale.py [--base /tmp/base/src] [--max-jobs N]
[--only STRICT_FIFO|BEST_EFFORT_FIFO]``. With ``--base`` the same series run first on
that code ("before"), then on this checkout ("after"), in the same invocation.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TYPES = ["ml.g5.xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge", "ml.trn1.32xlarge", "ml.c5.4xlarge"]
CAPACITY = {TYPES[0]: 96, TYPES[1]: 48, TYPES[2]: 24, TYPES[3]: 32, TYPES[4]: 128}
STRATEGIES = ["LEND_AND_BORROW", "LEND", "RESERVE", "LEND_AND_BORROW"]
BORROW_LIMITS = [-1, 50, 100, 200]
#: Offered load: mean instance demand over total capacity.
LOAD = 0.85


def build_trace(
    n_jobs: int, seed: int = 7, queueing: str = "STRICT_FIFO", load: float = LOAD
) -> dict[str, Any]:
    """A synthetic scenario document with ``n_jobs`` jobs at ``load`` offered load.

    Instance types are drawn in proportion to capacity, then a share among those with
    a capacity limit for the type.
    """
    rng = random.Random(seed)
    shares = []
    share_types: list[list[str]] = []
    for i in range(20):
        types = sorted(rng.sample(TYPES, rng.randint(1, 3)))
        strategy = STRATEGIES[i % len(STRATEGIES)]
        rsc: dict[str, Any] = {"strategy": strategy}
        if strategy == "LEND_AND_BORROW":
            rsc["borrowLimit"] = BORROW_LIMITS[i % len(BORROW_LIMITS)]
        shares.append(
            {
                "quotaShareName": f"team-{i:02d}",
                "capacityLimits": [
                    {"capacityUnit": u, "maxCapacity": max(1, CAPACITY[u] // 8)} for u in types
                ],
                "resourceSharingConfiguration": rsc,
                "preemptionConfiguration": {
                    "inSharePreemption": "ENABLED" if i % 3 == 0 else "DISABLED"
                },
            }
        )
        share_types.append(types)
    sharing = {u: [i for i in range(20) if u in share_types[i]] for u in TYPES}
    for u, owners in sharing.items():
        if not owners:  # every type has at least one share
            owners.append(TYPES.index(u))
            share_types[TYPES.index(u)].append(u)
            shares[TYPES.index(u)]["capacityLimits"].append(
                {"capacityUnit": u, "maxCapacity": max(1, CAPACITY[u] // 8)}
            )
    total_capacity = sum(CAPACITY.values())
    weights = [CAPACITY[u] for u in TYPES]
    mean_instance_seconds = 1.6 * 2400.0
    interarrival = mean_instance_seconds / (load * total_capacity)
    jobs = []
    t = 0.0
    for j in range(n_jobs):
        t += rng.expovariate(1.0 / interarrival)
        u = rng.choices(TYPES, weights)[0]
        s = rng.choice(sharing[u])
        jobs.append(
            {
                "jobName": f"job-{j:06d}",
                "quotaShareName": f"team-{s:02d}",
                "submittedAt": round(t, 3),
                "instanceType": u,
                "instanceCount": rng.choice([1, 1, 1, 2, 4]),
                "runSeconds": rng.choice([300, 900, 1800, 2400, 3600, 5400]),
                "schedulingPriority": rng.choice([0, 10, 10, 50, 100]),
                "preemptionRetriesBeforeTermination": rng.choice([None, None, None, 3, 0]),
                "checkpointIntervalSeconds": rng.choice([None, 300, 600, 1800]),
                "restartOverheadSeconds": rng.choice([0, 0, 60]),
            }
        )
    actions: list[dict[str, Any]] = []
    for k in range(max(1, n_jobs // 1000)):
        target = jobs[rng.randrange(n_jobs)]
        actions.append(
            {
                "at": target["submittedAt"] + 60,
                "type": "UpdateServiceJob",
                "jobName": target["jobName"],
                "schedulingPriority": 500,
            }
        )
        if k % 10 == 0:
            s = rng.randrange(20)
            actions.append(
                {
                    "at": round(t * rng.random(), 3),
                    "type": "UpdateQuotaShare",
                    "quotaShareName": f"team-{s:02d}",
                    "capacityLimits": [
                        {"capacityUnit": u, "maxCapacity": rng.randint(1, CAPACITY[u] // 4)}
                        for u in share_types[s]
                    ],
                }
            )
    return {
        "name": f"scale-{n_jobs}",
        "capacity": CAPACITY,
        "options": {"startupSeconds": 30, "queueing": queueing, "horizonSeconds": None},
        "shares": shares,
        "jobs": jobs,
        "actions": actions,
    }


def _child(n_jobs: int, queueing: str, load: float) -> None:
    """One measured run in this process: build the trace, then validate, simulate and
    write the JSON output to ``/dev/null`` (the ``quotagov simulate --output json``
    path); print ``cpu_seconds wall_seconds peak_rss_bytes transitions`` on one line.

    Works on the code of this branch and on older code (without streamed output it
    builds the document and dumps it, as that code's command did). The trace has jobs
    needing 4 instances in shares that can hold 3: this branch reports them as
    UNSCHEDULABLE (``allow_unschedulable``), older code lets them wait (and, under
    STRICT_FIFO, block their share).
    """
    import resource

    import quotagov.scheduler as sched

    doc = build_trace(n_jobs, queueing=queueing, load=load)
    wall, cpu = time.perf_counter(), time.process_time()
    try:  # jobs larger than their share can ever hold are reported, not refused
        scenario = sched.validate_scenario(doc, allow_unschedulable=True)
    except TypeError:  # older code: no such option, such jobs just wait
        scenario = sched.validate_scenario(doc)
    del doc  # as `quotagov simulate`, which keeps no parsed document during the run
    with open(os.devnull, "w", encoding="utf-8") as sink:
        stream = getattr(sched, "stream_output", None)
        if stream is not None:
            count = stream(scenario, sink)
        else:
            document = sched.simulate(scenario)
            count = len(document["transitions"])
            sink.write(sched.dump_output(document))
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    print(f"{cpu:.3f} {wall:.3f} {peak} {count}")


def measure(src: str, n_jobs: int, queueing: str, load: float) -> tuple[float, float, int]:
    """CPU seconds, wall seconds and peak memory (bytes) of one run in a fresh process
    whose ``quotagov`` comes from ``src`` (a ``src`` directory)."""
    env = {**os.environ, "PYTHONPATH": src}
    cmd = [sys.executable, __file__, "--child", str(n_jobs), queueing, str(load)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    cpu, wall, peak, _ = out.stdout.split()
    return float(cpu), float(wall), int(peak)


#: (queueing, offered load, sizes) measured by default.
SERIES = [
    ("STRICT_FIFO", 0.85, [10_000, 100_000, 1_000_000]),
    ("BEST_EFFORT_FIFO", 1.5, [10_000, 100_000]),
]


def main() -> None:
    """Run every series on each code base and print the figures side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        _child(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]))
        return
    here = str(Path(__file__).resolve().parents[1] / "src")
    parser.add_argument(
        "--base", help="the src directory of the code to compare with (e.g. a worktree of main)"
    )
    parser.add_argument("--max-jobs", type=int, default=1_000_000, help="skip larger sizes")
    parser.add_argument(
        "--only", choices=("STRICT_FIFO", "BEST_EFFORT_FIFO"), help="run one series only"
    )
    args = parser.parse_args()
    bases = [("before", args.base)] if args.base else []
    bases.append(("after", here))
    for queueing, load, sizes in SERIES:
        if args.only and queueing != args.only:
            continue
        for label, src in bases:
            per_job: dict[int, float] = {}
            for n in sizes:
                if n > args.max_jobs:
                    continue
                cpu, wall, peak = measure(src, n, queueing, load)
                per_job[n] = cpu / n
                print(
                    f"{label:>6} {queueing:<16} load {load:.0%} {n:>9,} jobs: "
                    f"{cpu:7.2f} s CPU ({wall:6.2f} s wall) {n / cpu:9,.0f} jobs/s "
                    f"peak {peak / 2**30:5.2f} GiB ({peak / n / 1024:5.2f} KiB/job)",
                    flush=True,
                )
            sizes_run = sorted(per_job)
            for small, big in itertools.pairwise(sizes_run):
                print(
                    f"{label:>6} {queueing:<16} per-job cost {big:,}/{small:,}: "
                    f"{per_job[big] / per_job[small]:.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
