"""How the models' faults read and sort (``scheduler/scenario_faults.py``), and what the
cross-field rules still see of a document with faulty parts (``scenario_parts.py``)."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from quotagov.scheduler import ScenarioError, validate_scenario
from quotagov.scheduler.scenario_models import ServiceJob

from .builders import G, job, scenario, share


def _faults(doc: Any) -> list[str]:
    with pytest.raises(ScenarioError) as exc:
        validate_scenario(doc)
    return exc.value.faults


def test_null_sections() -> None:
    """A null ``shares`` or ``capacity`` is missing; null ``jobs``, ``actions`` and
    ``options`` are empty; a null ``name`` is not a string."""
    doc: dict[str, Any] = {"name": None, "capacity": None, "shares": None}
    assert _faults(doc) == [
        "name: expected a string, got null",
        "capacity: required",
        "shares: required",
    ]
    ok = {"capacity": {G: 1}, "shares": [share("a", 1)], "jobs": None, "actions": None}
    scenario_ = validate_scenario({**ok, "options": None})
    assert (scenario_.name, scenario_.jobs, scenario_.actions) == ("scenario", [], [])


def test_what_each_kind_of_value_is_called() -> None:
    doc = scenario(
        {G: True},
        ["s", share("a", 1)],
        [{**job("j0", "a"), "runSeconds": "60", "submittedAt": float("inf")}, [1]],
        [{"at": None, "type": "TerminateServiceJob", "jobName": {"x": 1}}],
    )
    assert _faults(doc) == [
        "capacity.ml.g5.xlarge: expected an integer, got a boolean",
        "shares[0]: expected a mapping, got string 's'",
        "jobs[0].runSeconds: expected a number, got string '60'",
        "jobs[0].submittedAt: inf is not a finite number",
        "jobs[1]: expected a mapping, got a list",
        "actions[0].at: must not be null",
        "actions[0].jobName: expected a non-empty string, got a mapping",
    ]


def test_an_action_of_no_known_type_still_has_its_time_checked() -> None:
    doc = scenario(1, [share("a", 1)], [], [{"at": -3, "type": 7}, {"jobName": "j"}])
    assert _faults(doc) == [
        "actions[0].at: -3 is negative",
        "actions[0].type: 7 is not one of UpdateServiceJob, UpdateQuotaShare, TerminateServiceJob",
        "actions[1].at: required",
        "actions[1].type: required",
    ]


def test_order_inside_an_object() -> None:
    """An object's unknown fields come first, an action's after its ``at`` and
    ``type``; a fault about a reference comes right after its field's own."""
    doc = scenario(
        1,
        [share("a", 1)],
        [{"zz": 1, **job("j0", "a", prio=-1), "aa": 2}],
        [
            {
                "colour": "red",
                "schedulingPriority": 10000,
                "jobName": "nope",
                "type": "UpdateServiceJob",
                "at": -1,
            }
        ],
    )
    assert _faults(doc) == [
        "jobs[0].zz: unknown field",
        "jobs[0].aa: unknown field",
        "jobs[0].schedulingPriority: -1 is negative",
        "actions[0].at: -1 is negative",
        "actions[0].colour: unknown field",
        "actions[0].jobName: unknown job 'nope'",
        "actions[0].schedulingPriority: 10000 is above 9999",
    ]


def test_a_faulty_part_is_still_checked_against_the_others() -> None:
    """A job whose only fault is an unknown field is checked like any other; a faulty
    job's valid name still counts (no "unknown job", repeated names found), and a share
    whose block is faulty is not reported again as unknown."""
    doc = scenario(
        {G: 1},
        [share("a", 1), {**share("b", 1), "capacityLimits": "x"}],
        [
            {**job("j0", "a", count=2), "colour": "red"},
            job("j1", "a", prio=-5),
            job("j1", "b"),
            job("j2", "zzz", run=-1),
        ],
        [{"at": 50, "type": "TerminateServiceJob", "jobName": "j1"}],
    )
    assert _faults(doc) == [
        "shares[1].capacityLimits: expected a list, got string 'x'",
        "jobs[0].colour: unknown field",
        "jobs[0].instanceCount: job 'j0' can never be admitted: needs 2 ml.g5.xlarge "
        "instances, the service environment has 1 (--allow-unschedulable reports it as "
        "UNSCHEDULABLE instead)",
        "jobs[1].schedulingPriority: -5 is negative",
        "jobs[2].jobName: duplicate job 'j1'",
        "jobs[3].runSeconds: -1 is negative",
        "jobs[3].quotaShareName: unknown share 'zzz'",
    ]


def test_a_capacity_key_must_be_a_string() -> None:
    """YAML may give a number as a key; an instance type is a string."""
    doc = scenario({G: 1}, [share("a", 1)], [])
    doc["capacity"][5] = 1
    assert _faults(doc) == ["capacity.5: expected a string, got int 5"]


def test_numbers_keep_their_type() -> None:
    doc = scenario(1, [share("a", 1)], [job("j0", "a", 5, 60.0, ckpt=30, overhead=1.5)])
    spec = validate_scenario(doc).jobs[0]
    assert (spec.submittedAt, spec.runSeconds, spec.restartOverheadSeconds) == (5, 60.0, 1.5)
    assert (type(spec.submittedAt), type(spec.runSeconds)) == (int, float)


def test_no_job_model_outlives_validation() -> None:
    """Jobs go straight to the engine's specs: no ``ServiceJob`` instance is kept."""
    doc = scenario(4, [share("a", 4)], [job(f"j{i}", "a", i) for i in range(500)])
    jobs = validate_scenario(doc).jobs
    gc.collect()
    assert len(jobs) == 500
    assert not any(isinstance(o, ServiceJob) for o in gc.get_objects())
