"""Run a scenario on the engine and build the spec's output document.

Output (``docs/simulator/spec.md``, "Output"): ``{scenario, jobs,
transitions, metrics}``. The same scenario always gives byte-identical output from
:func:`dump_output`: the engine is deterministic (every tie is broken by input order or
start sequence), keys are sorted, and numbers are normalized by :func:`normalize`
(integral floats become integers, others are rounded to 6 decimals).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from quotagov.scheduler.engine import Engine
from quotagov.scheduler.metrics import compute_metrics
from quotagov.scheduler.scenario import Scenario, ScenarioAction
from quotagov.scheduler.state import TERMINAL_STATES, Transition
from quotagov.scheduler.views import JobView

#: Called with (jobs settled, jobs in the scenario) as the run goes on.
Progress = Callable[[int, int], None]


def normalize(value: Any) -> Any:
    """Numbers made stable for output: integral floats to int, others rounded to 6 places."""
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        return round(value, 6)
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(v) for v in value]
    return value


def _num(value: float | None) -> float | None:
    """:func:`normalize` for one number (fast path for the large lists)."""
    if value is None or isinstance(value, int):
        return value
    if value.is_integer():
        return int(value)
    return round(value, 6)


def _apply(action: ScenarioAction) -> Callable[[Engine], object]:
    fields = dict(action.fields)
    if action.type == "UpdateServiceJob":
        return lambda e: e.update_priority(fields["jobName"], fields["schedulingPriority"])
    if action.type == "TerminateServiceJob":
        return lambda e: e.terminate(fields["jobName"])
    name = fields.pop("quotaShareName")
    return lambda e: e.update_share(name, **fields)


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a run, then restore it.

    A run allocates many long-lived objects (jobs, events, transitions) and few
    reference cycles, so the collector's repeated scans of them are pure cost: about a
    quarter of the run time at 100,000 jobs (``benchmarks/simulate_scale.py``).
    Reference counting still frees everything as usual. On the way out, the objects
    the run allocated are moved to the oldest generation before the collector is
    enabled again (``gc.freeze`` then ``gc.unfreeze``, when nothing else is frozen), so
    that enabling it does not start a scan of all of them at once; they stay under
    the collector, for its next full collection.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def build_engine(scenario: Scenario) -> Engine:
    """An engine loaded with the scenario's shares, scheduled submissions and actions."""
    engine = Engine(scenario.capacity, scenario.shares, scenario.options, start=0)
    for spec in scenario.jobs:
        engine.schedule_submission(spec)
    for name, reason in scenario.unschedulable.items():
        engine.mark_unschedulable(name, reason)
    for action in scenario.actions:
        engine.schedule_action(action.at, _apply(action))
    return engine


def job_record(view: JobView) -> dict[str, Any]:
    """One job's record in the output document (numbers normalized)."""
    return {
        "status": view.status,
        "quotaShareName": view.quotaShareName,
        "submittedAt": _num(view.submittedAt),
        "firstStartedAt": _num(view.firstStartedAt),
        "stoppedAt": _num(view.stoppedAt),
        "attempts": view.attempts,
        "preemptions": [
            {
                "at": _num(p.at),
                "kind": p.kind,
                "forJob": p.forJob,
                "lostSeconds": _num(p.lostSeconds),
            }
            for p in view.preemptions
        ],
        "lostSeconds": _num(view.lostSeconds),
        "statusReason": view.statusReason,
    }


def simulate(scenario: Scenario, progress: Progress | None = None) -> dict[str, Any]:
    """Run ``scenario`` to its horizon (or until no event is pending) and return the output.

    Args:
        scenario: a validated scenario (:func:`~quotagov.scheduler.load_scenario`).
        progress: optional callback ``(settled, total)``, called as jobs reach
            SUCCEEDED or FAILED and once at the end.

    Returns:
        The spec's output document with numbers normalized (see :func:`normalize`).
    """
    engine = build_engine(scenario)
    transitions: list[Transition] = []
    total = len(scenario.jobs)
    settled = 0
    step = max(1, total // 200)

    def record(t: Transition) -> None:
        nonlocal settled
        transitions.append(t)
        if progress is not None and t.to in TERMINAL_STATES:
            settled += 1
            if settled % step == 0:
                progress(settled, total)

    engine.add_listener(record)
    with cyclic_gc_paused():
        engine.run(scenario.options.horizonSeconds)
        return _document(scenario, engine, transitions, progress, settled, total)


def _document(
    scenario: Scenario,
    engine: Engine,
    transitions: list[Transition],
    progress: Progress | None,
    settled: int,
    total: int,
) -> dict[str, Any]:
    """The output document of a finished run (final progress report first)."""
    if progress is not None:
        progress(settled, total)
    views = engine.jobs()
    metrics = compute_metrics(
        views,
        engine.usage_integrals(),
        [s.quotaShareName for s in scenario.shares],
        duration=engine.now,
        capacity=engine.capacity,
    )
    return {
        "scenario": scenario.name,
        "jobs": {v.jobName: job_record(v) for v in views},
        "transitions": [
            {
                "at": _num(t.at),
                "jobName": t.jobName,
                "from": t.from_,
                "to": t.to,
                "reason": t.reason,
            }
            for t in transitions
        ],
        "metrics": normalize(metrics),
    }


def dump_output(document: dict[str, Any]) -> str:
    """The output document as JSON text: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(document, sort_keys=True, indent=2, allow_nan=False) + "\n"
