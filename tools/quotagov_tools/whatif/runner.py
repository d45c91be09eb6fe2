"""Run a what-if comparison: every (policy, seed) run, in a process pool, then the report.

Runs are independent, so they go to a :class:`concurrent.futures.ProcessPoolExecutor`
of ``workers`` processes (default: the machine's cores, at most the number of runs).
On Linux the workers are forked, so the workload and policies reach them without
being pickled; each run's result comes back as plain data. ``workers=1`` runs
everything in this process (the benchmark's baseline).

Seeds: ``seeds=1`` replays the workload as imported; ``seeds=K > 1`` replays K
perturbed copies (:func:`.perturb.perturbed`, seeds 1..K) under every policy.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from quotagov.policy.models import Policy
from quotagov_tools.whatif.errors import OptionError
from quotagov_tools.whatif.governed import LoopOptions, default_capacity, run_policy
from quotagov_tools.whatif.perturb import perturbed
from quotagov_tools.whatif.report import (
    aggregate,
    limit_warnings,
    regressions,
    verdicts,
    with_deltas,
)
from quotagov_tools.whatif.workload import Workload

#: Called with (runs done, runs in all).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class WhatIf:
    """A comparison to run.

    Attributes:
        policies: name -> policy, in the order given (the first is the baseline).
        workload: the jobs.
        capacity: the environment (None: the workload's, else each policy's own).
        options: the governance loop's behaviour.
        seeds: K (>= 1).
        jitter_seconds, run_noise: the perturbation of each seed's copy.
        workers: processes (None: ``os.cpu_count()``); 1 = no pool.
    """

    policies: dict[str, Policy]
    workload: Workload
    capacity: dict[str, int] | None = None
    options: LoopOptions = field(default_factory=LoopOptions)
    seeds: int = 1
    jitter_seconds: float = 300.0
    run_noise: float = 0.1
    workers: int | None = None


_CURRENT: WhatIf | None = None


def _run_one(policy_name: str, seed: int) -> dict[str, Any]:
    """One run in a worker (or here): ``policy_name`` on the seed's copy of the workload."""
    config = _CURRENT
    assert config is not None, "the comparison is set before the runs start"
    workload = config.workload
    if seed:
        workload = perturbed(
            workload, seed, jitter_seconds=config.jitter_seconds, run_noise=config.run_noise
        )
    return run_policy(config.policies[policy_name], workload, config.capacity, config.options)


def _set_current(config: WhatIf) -> None:
    """Worker initializer where workers are not forked (they get the comparison pickled)."""
    global _CURRENT
    _CURRENT = config


def _executor(workers: int, config: WhatIf) -> Executor:
    if "fork" in multiprocessing.get_all_start_methods():
        return ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("fork")
        )
    return ProcessPoolExecutor(max_workers=workers, initializer=_set_current, initargs=(config,))


def run_whatif(
    config: WhatIf, progress: Progress | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every run of ``config``; returns ``(report, series)``.

    ``report`` is the ``report.json`` document (:mod:`.report`); ``series`` holds, per
    policy, the plot data of its first run.

    Raises:
        OptionError: bad perturbation options (before anything runs).
    """
    global _CURRENT
    if config.seeds < 1:
        raise OptionError([f"--seeds: {config.seeds} must be >= 1"])
    seeds = [0] if config.seeds == 1 else list(range(1, config.seeds + 1))
    if config.seeds > 1:  # check the perturbation options here, not in a worker
        perturbed(
            Workload("check", ()),
            0,
            jitter_seconds=config.jitter_seconds,
            run_noise=config.run_noise,
        )
    tasks = [(name, seed) for name in config.policies for seed in seeds]
    workers = min(len(tasks), config.workers or os.cpu_count() or 1)
    results: dict[tuple[str, int], dict[str, Any]] = {}
    _CURRENT = config
    try:
        if workers <= 1:
            for i, (name, seed) in enumerate(tasks):
                results[(name, seed)] = _run_one(name, seed)
                if progress:
                    progress(i + 1, len(tasks))
        else:
            with _executor(workers, config) as pool:
                futures = {pool.submit(_run_one, n, s): (n, s) for n, s in tasks}
                for done, future in enumerate(as_completed(futures), start=1):
                    results[futures[future]] = future.result()
                    if progress:
                        progress(done, len(tasks))
    finally:
        _CURRENT = None
    policies: dict[str, dict[str, Any]] = {}
    series: dict[str, Any] = {}
    capacities: dict[str, Any] = {}
    for name in config.policies:
        runs = [results[(name, s)] for s in seeds]
        policies[name] = aggregate(runs)
        policies[name]["adminActions"] = len(runs[0]["actions"])
        policies[name]["scenarioActions"] = runs[0]["scenarioActions"]
        policies[name]["usedCapacity"] = runs[0]["series"]["usedCapacity"]
        series[name] = runs[0]["series"]
        capacities[name] = runs[0]["capacity"]
    with_deltas(policies)
    warnings = limit_warnings(
        {n: default_capacity(p) for n, p in config.policies.items()}, capacities
    )
    workload = {
        **config.workload.summary(),
        "seeds": config.seeds,
        "capacity": config.capacity or config.workload.capacity or _one_or_each(capacities),
        "options": {
            **asdict(config.options),
            "jitterSeconds": config.jitter_seconds if config.seeds > 1 else 0,
            "runNoise": config.run_noise if config.seeds > 1 else 0,
        },
    }
    report = {
        "workload": workload,
        "warnings": warnings,
        "regressions": regressions(policies, config.seeds),
        "policies": policies,
        "verdicts": verdicts(policies),
    }
    return report, series


def _one_or_each(capacities: dict[str, Any]) -> Any:
    """The policies' environment: one mapping when they agree, else one per policy."""
    values = list(capacities.values())
    return values[0] if all(v == values[0] for v in values) else capacities


def environment_size(report: Mapping[str, Any]) -> int:
    """Instances in the environment (the largest when each policy has its own)."""
    capacity = report["workload"]["capacity"]
    values = list(capacity.values())
    if values and isinstance(values[0], dict):
        return int(max(sum(v.values()) for v in values))
    return int(sum(values))


def write_report(report: Mapping[str, Any], series: Mapping[str, Any], out: Path) -> list[Path]:
    """Write ``report.json``, the PNG plots (and ``overview.png``, all four with the
    verdicts) and ``report.html`` into ``out``; returns their paths."""
    from quotagov_tools.whatif.html import render
    from quotagov_tools.whatif.plots import all_plots, overview

    out.mkdir(parents=True, exist_ok=True)
    written = []
    path = out / "report.json"
    path.write_text(json.dumps(report, indent=2, sort_keys=False, allow_nan=False) + "\n")
    written.append(path)
    plots = all_plots(series, environment_size(report))
    for name, data in plots.items():
        (out / name).write_bytes(data)
        written.append(out / name)
    (out / "overview.png").write_bytes(overview(plots, list(report["verdicts"].values())))
    written.append(out / "overview.png")
    page = out / "report.html"
    page.write_text(render(report, plots), encoding="utf-8")
    written.append(page)
    return written
