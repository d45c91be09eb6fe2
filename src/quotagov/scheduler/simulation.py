"""Run a scenario on the engine and build the spec's output document.

Output (``../shared/spec/scenario-format.md``, "Output"): ``{scenario, jobs,
transitions, metrics}``. The same scenario always gives byte-identical output from
:func:`dump_output`: the engine is deterministic (every tie is broken by input order or
start sequence), keys are sorted, and numbers are normalized by :func:`normalize`
(integral floats become integers, others are rounded to 6 decimals).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from quotagov.scheduler.engine import Engine, JobView
from quotagov.scheduler.metrics import compute_metrics
from quotagov.scheduler.scenario import Scenario, ScenarioAction
from quotagov.scheduler.state import TERMINAL_STATES, Transition

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


def _apply(action: ScenarioAction) -> Callable[[Engine], object]:
    fields = dict(action.fields)
    if action.type == "UpdateServiceJob":
        return lambda e: e.update_priority(fields["jobName"], fields["schedulingPriority"])
    if action.type == "TerminateServiceJob":
        return lambda e: e.terminate(fields["jobName"])
    name = fields.pop("quotaShareName")
    return lambda e: e.update_share(name, **fields)


def build_engine(scenario: Scenario) -> Engine:
    """An engine loaded with the scenario's shares, scheduled submissions and actions."""
    engine = Engine(scenario.capacity, scenario.shares, scenario.options, start=0)
    for spec in scenario.jobs:
        engine.schedule_submission(spec)
    for action in scenario.actions:
        engine.schedule_action(action.at, _apply(action))
    return engine


def _job_record(view: JobView) -> dict[str, Any]:
    return {
        "status": view.status,
        "quotaShareName": view.quotaShareName,
        "submittedAt": view.submittedAt,
        "firstStartedAt": view.firstStartedAt,
        "stoppedAt": view.stoppedAt,
        "attempts": view.attempts,
        "preemptions": [
            {"at": p.at, "kind": p.kind, "forJob": p.forJob, "lostSeconds": p.lostSeconds}
            for p in view.preemptions
        ],
        "lostSeconds": view.lostSeconds,
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
    horizon = scenario.options.horizonSeconds
    if horizon is None:
        engine.run_until_idle()
    else:
        engine.advance_to(horizon)
    if progress is not None:
        progress(settled, total)
    views = engine.jobs()
    document = {
        "scenario": scenario.name,
        "jobs": {v.jobName: _job_record(v) for v in views},
        "transitions": [t.to_dict() for t in transitions],
        "metrics": compute_metrics(
            views,
            engine.usage_integrals(),
            [s.quotaShareName for s in scenario.shares],
            duration=engine.now,
        ),
    }
    normalized: dict[str, Any] = normalize(document)
    return normalized


def dump_output(document: dict[str, Any]) -> str:
    """The output document as JSON text: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(document, sort_keys=True, indent=2, allow_nan=False) + "\n"
