"""Figures for the embedded local runtime: start-up, one API request, and the demo.

Run: ``.venv/bin/python benchmarks/local_runtime.py [--requests 50]``.
Prints figures; asserts nothing. The demo target is < 30 s wall clock.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import time

from quotagov_tools.local.demo_story import ALICE, Demo
from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=50, help="GET /jobs/{id} requests")
    args = parser.parse_args()
    options = RuntimeOptions(extra_env={"POWERTOOLS_LOG_LEVEL": "WARNING"})
    with contextlib.redirect_stdout(io.StringIO()):
        started = time.perf_counter()
        first = LocalRuntime(options).start()
        cold = time.perf_counter() - started
        first.stop()
        started = time.perf_counter()
        runtime = LocalRuntime(options).start()
        warm = time.perf_counter() - started
        demo = Demo(runtime)
        demo.refused_submission()
        demo.background_jobs_borrow()
        submission = demo.submissions["bg-1"]["submissionId"]
        latencies = []
        for _ in range(args.requests):
            t = time.perf_counter()
            runtime.api("GET", f"/jobs/{submission}", principal=ALICE, pump=False)
            latencies.append(time.perf_counter() - t)
        runtime.stop()
        started = time.perf_counter()
        with LocalRuntime(options) as rt:
            result = Demo(rt).run()
        whole = time.perf_counter() - started
    print(f"runtime start, first in process: {cold:.2f} s")
    print(f"runtime start, warm:             {warm:.2f} s")
    median_ms = statistics.median(latencies) * 1000
    print(
        f"GET /jobs/{{id}} through the runtime: median {median_ms:.1f} ms,"
        f" max {max(latencies) * 1000:.1f} ms over {len(latencies)} requests"
    )
    print(f"demo (whole timeline, {len(result.failures)} failed checks): {whole:.1f} s")


if __name__ == "__main__":
    main()
