"""Cost of scenario validation alone (``validate_scenario``), up to 1,000,000 jobs.

The document is the synthetic trace of ``benchmarks/simulate_scale.py`` (``build_trace``,
STRICT_FIFO, 85 % load), built before the measurement starts. Each run is a fresh
process that prints the CPU seconds (user + sys) of ``validate_scenario(doc,
allow_unschedulable=True)`` and the growth of its peak resident memory during the call
(``ru_maxrss`` after minus before: the transient memory of validation plus the
:class:`~quotagov.scheduler.Scenario` it returns).

Usage: ``python benchmarks/validate_scale.py [--base OLD_CHECKOUT/src] [--sizes 100000
1000000] [--repeat 1]``. With ``--base`` each size runs on that code ("before"), then
on this checkout ("after"), in the same invocation.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from simulate_scale import build_trace


def _child(n_jobs: int) -> None:
    """Build the trace, then validate it; print ``cpu_seconds peak_rss_growth_bytes jobs``."""
    import quotagov.scheduler as sched

    doc = build_trace(n_jobs)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu = time.process_time()
    scenario = sched.validate_scenario(doc, allow_unschedulable=True)
    cpu = time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{cpu:.3f} {(after - before) * 1024} {len(scenario.jobs)}")  # KiB on Linux


def measure(src: str, n_jobs: int) -> tuple[float, int]:
    """CPU seconds and peak-memory growth (bytes) of one validation in a fresh process
    whose ``quotagov`` comes from ``src``."""
    env = {**os.environ, "PYTHONPATH": src}
    cmd = [sys.executable, __file__, "--child", str(n_jobs)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    cpu, growth, _ = out.stdout.split()
    return float(cpu), int(growth)


def main() -> None:
    """Measure each size on each code base and print the figures."""
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(int(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="the src directory of the code to compare with")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=1, help="runs per size and code base")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1] / "src")
    bases = [("before", args.base)] if args.base else []
    bases.append(("after", here))
    for n in args.sizes:
        for _ in range(args.repeat):
            for label, src in bases:
                cpu, growth = measure(src, n)
                print(
                    f"{label:>6} {n:>9,} jobs: validate_scenario {cpu:6.2f} s CPU "
                    f"({n / cpu:9,.0f} jobs/s), peak memory +{growth / 2**20:7.1f} MiB "
                    f"({growth / n:6.1f} B/job)",
                    flush=True,
                )


if __name__ == "__main__":
    main()
