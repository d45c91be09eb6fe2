"""Scale benchmark of the local scheduler: jobs simulated per second at 10,000 and 100,000 jobs.

Builds synthetic traces (20 quota shares, 5 instance types, mixed strategies and borrow
limits, in-share preemption on some shares, mixed priorities, instance counts,
checkpoint intervals, restart overheads and retry limits, a few priority updates and
capacity-limit changes) with a fixed seed, runs ``simulate`` on each (validation,
simulation and metrics; trace generation excluded) and prints:

- jobs simulated per second for each size,
- the per-job cost ratio (seconds per job at 100k) / (seconds per job at 10k).

Targets (one core): 100,000 jobs in under 20 s; ratio at most 1.3.

Usage: ``python benchmarks/simulate_scale.py [--sizes 10000 100000] [--queueing BEST_EFFORT_FIFO]
[--repeat 2]`` (each size runs ``--repeat`` times and the fastest CPU time counts).
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from quotagov.scheduler import simulate, validate_scenario

TYPES = ["ml.g5.xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge", "ml.trn1.32xlarge", "ml.c5.4xlarge"]
CAPACITY = {TYPES[0]: 96, TYPES[1]: 48, TYPES[2]: 24, TYPES[3]: 32, TYPES[4]: 128}
STRATEGIES = ["LEND_AND_BORROW", "LEND", "RESERVE", "LEND_AND_BORROW"]
BORROW_LIMITS = [-1, 50, 100, 200]
#: Offered load: mean instance demand over total capacity.
LOAD = 0.85


def build_trace(n_jobs: int, seed: int = 7, queueing: str = "STRICT_FIFO") -> dict[str, Any]:
    """A synthetic scenario document with ``n_jobs`` jobs at ``LOAD`` offered load.

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
    interarrival = mean_instance_seconds / (LOAD * total_capacity)
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


def measure(n_jobs: int, queueing: str) -> tuple[float, float, dict[str, Any]]:
    """CPU and wall seconds to validate and simulate an ``n_jobs`` trace, and the output.

    CPU time (``time.process_time``) is the figure compared with the targets: it is what
    one core spends, whatever else the machine runs.
    """
    doc = build_trace(n_jobs, queueing=queueing)
    wall, cpu = time.perf_counter(), time.process_time()
    output = simulate(validate_scenario(doc))
    return time.process_time() - cpu, time.perf_counter() - wall, output


def main() -> None:
    """Run the sizes and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--queueing", choices=("STRICT_FIFO", "BEST_EFFORT_FIFO"), default="STRICT_FIFO"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="runs per size; the fastest counts (the machine may be shared)",
    )
    args = parser.parse_args()
    per_job: dict[int, float] = {}
    measure(1_000, args.queueing)  # warm-up: imports and first-run caches out of the figures
    for n in args.sizes:
        runs = [measure(n, args.queueing) for _ in range(max(1, args.repeat))]
        seconds, wall, output = min(runs, key=lambda r: r[0])
        per_job[n] = seconds / n
        total = output["metrics"]["total"]
        print(
            f"{n:>7} jobs ({args.queueing}): {seconds:7.2f} s CPU ({wall:.2f} s wall), "
            f"{n / seconds:9.0f} jobs/s, "
            f"{len(output['transitions'])} transitions, "
            f"preemptions {total['preemptions']}, goodput {total['goodput']}, "
            f"wait p95 {total['waitSeconds']['p95']} s"
        )
    if 10_000 in per_job and 100_000 in per_job:
        ratio = per_job[100_000] / per_job[10_000]
        print(f"per-job cost ratio 100k/10k: {ratio:.2f} (target <= 1.3)")


if __name__ == "__main__":
    main()
