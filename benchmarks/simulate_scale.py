"""Scale benchmark of the local scheduler on several workload shapes, before and after.

Each *shape* is a family of synthetic scenarios generated from a seed (with
:class:`random.Random` only; nothing of the scheduler is used to build them), then
validated and simulated as ``quotagov simulate --output json`` does. The shapes:

- ``classic``: the original benchmark's trace (20 quota shares, 5 instance types,
  mixed strategies and borrow limits, in-share preemption on a third of the shares,
  1 to 4 instances, 5 priorities, a priority update per 1,000 jobs and a capacity
  limit change per 10,000);
- ``wide``: 20 shares over 5 types with unequal capacity, instance counts from 1 to 16
  (heavy tail), 9 priority levels, shares holding 1 to 4 types;
- ``cuts``: as ``wide``, with frequent capacity cuts (a share's limits halved, then
  restored 2 hours later, about one per 500 jobs) and priority updates;
- ``bursts``: jobs submitted in bursts of 1 to 200 at one instant (array-like
  submissions), long and short jobs mixed, in-share preemption on half the shares.

Every shape runs STRICT_FIFO at 90 % offered load (up to 1,000,000 jobs) and
BEST_EFFORT_FIFO at 150 % (up to 100,000 jobs). Each run is a fresh process; trace
generation is excluded; the figures are CPU seconds, wall seconds, jobs per CPU second
and peak resident memory.

Targets (one core): STRICT_FIFO 1,000,000 jobs under 60 s, BEST_EFFORT_FIFO 100,000
jobs under 20 s, on every shape. On a shared machine, quote the ratio to the previous
code measured in the same invocation (``--base``).

Usage::

    python benchmarks/simulate_scale.py [--base OLD/src] [--shape NAME ...]
        [--only STRICT_FIFO|BEST_EFFORT_FIFO] [--max-jobs N] [--sizes N,N]
    python benchmarks/simulate_scale.py --check --base OLD/src [--jobs 5000]

``--check`` runs every shape and queueing at a small size on both code bases and
compares the SHA-256 of the whole JSON output (byte-identical or exit 1).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

TYPES = ["ml.g5.xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge", "ml.trn1.32xlarge", "ml.c5.4xlarge"]
CAPACITY = {TYPES[0]: 96, TYPES[1]: 48, TYPES[2]: 24, TYPES[3]: 32, TYPES[4]: 128}
STRATEGIES = ["LEND_AND_BORROW", "LEND", "RESERVE", "LEND_AND_BORROW"]
BORROW_LIMITS = [-1, 50, 100, 200]
RUN_SECONDS = [300, 900, 1800, 2400, 3600, 5400]
SEED = 7


def classic_trace(n_jobs: int, seed: int, queueing: str, load: float) -> dict[str, Any]:
    """The original benchmark's scenario (see the module docstring), ``n_jobs`` jobs at
    ``load`` offered load (mean instance demand over total capacity).

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
                "runSeconds": rng.choice(RUN_SECONDS),
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
        "name": f"classic-{n_jobs}",
        "capacity": CAPACITY,
        "options": {"startupSeconds": 30, "queueing": queueing, "horizonSeconds": None},
        "shares": shares,
        "jobs": jobs,
        "actions": actions,
    }


class Mix(NamedTuple):
    """The parameters of a generated shape (see :func:`mixed_trace`).

    Attributes:
        capacity: instances per instance type.
        counts: instance counts to draw from (with repeats as weights).
        priorities: ``schedulingPriority`` values to draw from (0-9999).
        in_share_every: in-share preemption ENABLED on every n-th share.
        cuts_per_job: capacity cuts (halve a share's limits, restore them 2 hours
            later) per submitted job.
        updates_per_job: priority updates per submitted job.
        burst_max: jobs submitted at one instant: 1 to ``burst_max``.
        run_seconds: run times to draw from (seconds).
    """

    capacity: dict[str, int]
    counts: tuple[int, ...]
    priorities: tuple[int, ...]
    in_share_every: int
    cuts_per_job: float
    updates_per_job: float
    burst_max: int
    run_seconds: tuple[int, ...]


WIDE = Mix(
    capacity={TYPES[0]: 160, TYPES[1]: 64, TYPES[2]: 32, TYPES[3]: 48, TYPES[4]: 256},
    counts=(1, 1, 1, 1, 2, 2, 4, 4, 8, 16),
    priorities=(0, 1, 5, 10, 10, 20, 50, 100, 1000),
    in_share_every=3,
    cuts_per_job=1 / 10_000,
    updates_per_job=1 / 1_000,
    burst_max=1,
    run_seconds=(120, 600, 1800, 3600, 7200, 14400),
)
CUTS = WIDE._replace(cuts_per_job=1 / 500, updates_per_job=1 / 100)
BURSTS = WIDE._replace(in_share_every=2, burst_max=200, run_seconds=(60, 60, 300, 900, 3600, 28800))


def mixed_trace(
    mix: Mix, name: str, n_jobs: int, seed: int, queueing: str, load: float
) -> dict[str, Any]:
    """A generated scenario of ``n_jobs`` jobs at ``load`` offered load (mean instance
    demand over total capacity), from ``seed`` alone.

    20 shares; each has limits for 1 to 4 types (summing to about 1.5 times the
    capacity: some quota is always lent), a strategy and borrow limit in rotation.
    A job's type is drawn in proportion to capacity, its share among those with a limit
    for the type, its count among :attr:`Mix.counts` at most the share's limit (so every
    job can run somewhere).
    """
    rng = random.Random(seed)
    types = list(mix.capacity)
    shares: list[dict[str, Any]] = []
    limits: list[dict[str, int]] = []
    for i in range(20):
        chosen = sorted(rng.sample(types, rng.randint(1, 4)))
        strategy = STRATEGIES[i % len(STRATEGIES)]
        rsc: dict[str, Any] = {"strategy": strategy}
        if strategy == "LEND_AND_BORROW":
            rsc["borrowLimit"] = BORROW_LIMITS[(i // 4) % len(BORROW_LIMITS)]
        limits.append({u: max(2, mix.capacity[u] * rng.randint(1, 3) // 20) for u in chosen})
        shares.append(
            {
                "quotaShareName": f"share-{i:02d}",
                "capacityLimits": [
                    {"capacityUnit": u, "maxCapacity": m} for u, m in limits[i].items()
                ],
                "resourceSharingConfiguration": rsc,
                "preemptionConfiguration": {
                    "inSharePreemption": "ENABLED" if i % mix.in_share_every == 0 else "DISABLED"
                },
            }
        )
    for u in types:  # every type has at least one share
        if not any(u in lim for lim in limits):
            i = types.index(u)
            limits[i][u] = max(2, mix.capacity[u] // 10)
            shares[i]["capacityLimits"].append({"capacityUnit": u, "maxCapacity": limits[i][u]})
    sharing = {u: [i for i in range(20) if u in limits[i]] for u in types}
    weights = [mix.capacity[u] for u in types]
    mean_count = sum(mix.counts) / len(mix.counts)
    mean_run = sum(mix.run_seconds) / len(mix.run_seconds)
    interarrival = mean_count * mean_run / (load * sum(mix.capacity.values()))
    jobs: list[dict[str, Any]] = []
    t = 0.0
    burst_left = 0
    for j in range(n_jobs):
        if burst_left == 0:
            burst_left = rng.randint(1, mix.burst_max)
            t += rng.expovariate(1.0 / (interarrival * (mix.burst_max + 1) / 2))
        burst_left -= 1
        u = rng.choices(types, weights)[0]
        s = rng.choice(sharing[u])
        cap = limits[s][u]
        count = rng.choice(mix.counts)
        while count > cap:
            count //= 2
        jobs.append(
            {
                "jobName": f"job-{j:07d}",
                "quotaShareName": f"share-{s:02d}",
                "submittedAt": round(t, 3),
                "instanceType": u,
                "instanceCount": count,
                "runSeconds": rng.choice(mix.run_seconds),
                "schedulingPriority": rng.choice(mix.priorities),
                "preemptionRetriesBeforeTermination": rng.choice([None, None, None, 5, 1]),
                "checkpointIntervalSeconds": rng.choice([None, 300, 900]),
                "restartOverheadSeconds": rng.choice([0, 30, 120]),
            }
        )
    actions: list[dict[str, Any]] = []
    for _ in range(int(n_jobs * mix.updates_per_job)):
        target = jobs[rng.randrange(n_jobs)]
        actions.append(
            {
                "at": target["submittedAt"] + rng.choice([30, 600]),
                "type": "UpdateServiceJob",
                "jobName": target["jobName"],
                "schedulingPriority": rng.choice(mix.priorities) + 1,
            }
        )
    for _ in range(max(1, int(n_jobs * mix.cuts_per_job))):
        s = rng.randrange(20)
        at = round(t * rng.random(), 3)
        for when, factor in ((at, 2), (at + 7200, 1)):
            actions.append(
                {
                    "at": when,
                    "type": "UpdateQuotaShare",
                    "quotaShareName": f"share-{s:02d}",
                    "capacityLimits": [
                        {"capacityUnit": u, "maxCapacity": max(1, m // factor)}
                        for u, m in limits[s].items()
                    ],
                }
            )
    actions.sort(key=lambda a: a["at"])
    return {
        "name": f"{name}-{n_jobs}",
        "capacity": mix.capacity,
        "options": {"startupSeconds": 30, "queueing": queueing, "horizonSeconds": None},
        "shares": shares,
        "jobs": jobs,
        "actions": actions,
    }


def build_trace(
    n_jobs: int, seed: int = SEED, queueing: str = "STRICT_FIFO", shape: str = "classic"
) -> dict[str, Any]:
    """The scenario of ``shape`` with ``n_jobs`` jobs from ``seed``, at the offered load
    of ``queueing``'s series (:data:`SERIES`)."""
    load = next(load for q, load, _ in SERIES if q == queueing)
    return SHAPES[shape](n_jobs, seed, queueing, load)


Builder = Callable[[int, int, str, float], dict[str, Any]]

#: Shape name -> scenario builder ``(n_jobs, seed, queueing, load)``.
SHAPES: dict[str, Builder] = {
    "classic": classic_trace,
    "wide": lambda n, seed, q, load: mixed_trace(WIDE, "wide", n, seed, q, load),
    "cuts": lambda n, seed, q, load: mixed_trace(CUTS, "cuts", n, seed, q, load),
    "bursts": lambda n, seed, q, load: mixed_trace(BURSTS, "bursts", n, seed, q, load),
}

#: (queueing, offered load, sizes) measured by default.
SERIES = [
    ("STRICT_FIFO", 0.9, [100_000, 1_000_000]),
    ("BEST_EFFORT_FIFO", 1.5, [100_000]),
]


def _child(shape: str, n_jobs: int, queueing: str, load: float, digest: bool) -> None:
    """One run in this process: build the trace, then validate, simulate and write the
    JSON output (the ``quotagov simulate --output json`` path) to ``/dev/null`` or,
    with ``digest``, to a SHA-256; print ``cpu_seconds wall_seconds peak_rss_bytes
    transitions sha256`` on one line (``-`` without ``digest``).

    Jobs needing more instances than their share can ever hold (a capacity cut) are
    reported as UNSCHEDULABLE (``allow_unschedulable``).
    """
    import resource

    import quotagov.scheduler as sched

    doc = SHAPES[shape](n_jobs, SEED, queueing, load)
    wall, cpu = time.perf_counter(), time.process_time()
    scenario = sched.validate_scenario(doc, allow_unschedulable=True)
    del doc  # as `quotagov simulate`, which keeps no parsed document during the run
    sha = hashlib.sha256()

    class _Sink:
        def write(self, text: str) -> int:
            sha.update(text.encode())
            return len(text)

    if digest:
        count = sched.stream_output(scenario, _Sink())  # type: ignore[arg-type]
    else:
        with open(os.devnull, "w", encoding="utf-8") as sink:
            count = sched.stream_output(scenario, sink)
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    print(f"{cpu:.3f} {wall:.3f} {peak} {count} {sha.hexdigest() if digest else '-'}")


def measure(
    src: str, shape: str, n_jobs: int, queueing: str, load: float, digest: bool = False
) -> tuple[float, float, int, str]:
    """CPU seconds, wall seconds, peak memory (bytes) and output digest (or ``-``) of
    one run in a fresh process whose ``quotagov`` comes from ``src``."""
    env = {**os.environ, "PYTHONPATH": src}
    cmd = [sys.executable, __file__, "--child", shape, str(n_jobs), queueing, str(load)]
    if digest:
        cmd.append("--digest")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    cpu, wall, peak, _, sha = out.stdout.split()
    return float(cpu), float(wall), int(peak), sha


def check(base: str, here: str, shapes: list[str], n_jobs: int) -> int:
    """Compare the output digests of both code bases on every shape and queueing."""
    failures = 0
    for shape in shapes:
        for queueing, load, _ in SERIES:
            old = measure(base, shape, n_jobs, queueing, load, digest=True)[3]
            new = measure(here, shape, n_jobs, queueing, load, digest=True)[3]
            same = old == new
            failures += not same
            print(
                f"{shape:<8} {queueing:<16} {n_jobs:>8,} jobs: "
                f"{'identical' if same else 'DIFFERENT'} {new[:16]}",
                flush=True,
            )
    return 1 if failures else 0


def main() -> None:
    """Run every series on each code base and print the figures side by side."""
    if len(sys.argv) >= 6 and sys.argv[1] == "--child":
        _child(
            sys.argv[2],
            int(sys.argv[3]),
            sys.argv[4],
            float(sys.argv[5]),
            "--digest" in sys.argv[6:],
        )
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    here = str(Path(__file__).resolve().parents[1] / "src")
    parser.add_argument(
        "--base", help="the src directory of the code to compare with (e.g. a worktree of main)"
    )
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="repeatable")
    parser.add_argument("--only", choices=("STRICT_FIFO", "BEST_EFFORT_FIFO"))
    parser.add_argument("--max-jobs", type=int, default=1_000_000, help="skip larger sizes")
    parser.add_argument("--sizes", help="comma-separated job counts instead of the series' own")
    parser.add_argument("--check", action="store_true", help="compare output digests only")
    parser.add_argument("--jobs", type=int, default=5_000, help="the size --check runs")
    args = parser.parse_args()
    shapes = args.shape or list(SHAPES)
    if args.check:
        if not args.base:
            parser.error("--check needs --base")
        sys.exit(check(args.base, here, shapes, args.jobs))
    bases = [("before", args.base)] if args.base else []
    bases.append(("after", here))
    for queueing, load, sizes in SERIES:
        if args.only and queueing != args.only:
            continue
        if args.sizes:
            sizes = [int(n) for n in args.sizes.split(",")]
        for shape in shapes:
            for n in sizes:
                if n > args.max_jobs:
                    continue
                cpus: list[float] = []
                for label, src in bases:
                    cpu, wall, peak, _ = measure(src, shape, n, queueing, load)
                    cpus.append(cpu)
                    print(
                        f"{label:>6} {shape:<8} {queueing:<16} load {load:.0%} {n:>9,} jobs: "
                        f"{cpu:7.2f} s CPU ({wall:6.2f} s wall) {n / cpu:8,.0f} jobs/s "
                        f"peak {peak / 2**30:5.2f} GiB",
                        flush=True,
                    )
                if len(cpus) == 2:
                    print(
                        f" ratio {shape:<8} {queueing:<16} {n:>9,} jobs: "
                        f"after/before CPU {cpus[1] / cpus[0]:.2f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
