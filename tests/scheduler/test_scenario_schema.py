"""``docs/scenario-format.schema.json``: generated from the models, true to the validator.

- it is what :func:`quotagov.scheduler.scenario_schema.schema_text` generates now (it
  drifts when a model changes: regenerate with
  ``python -m quotagov.scheduler.scenario_schema --write``);
- it is a valid JSON Schema (draft 2020-12) and the shipped scenarios pass it
  (``jsonschema``);
- it agrees with ``validate_scenario``: a document the validator accepts passes the
  schema, and a document with a fault the schema can express fails both.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings

from quotagov.scheduler import ScenarioError, load_scenario, validate_scenario
from quotagov.scheduler.models import JobSpec, Options
from quotagov.scheduler.scenario_models import ScenarioOptions, ServiceJob
from quotagov.scheduler.scenario_schema import main, schema_text

from .builders import G, job, scenario, share
from .test_properties import scenarios

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "docs/scenario-format.schema.json"
#: The scenarios the repository ships (the walkthrough's expected outcome is
#: ``tests/data/scenarios/aws-walkthrough.expected.md``).
SHIPPED = [ROOT / "src/quotagov/examples/aws-walkthrough.json"]


@pytest.fixture(scope="module")
def schema() -> jsonschema.Draft202012Validator:
    document = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(document)
    return jsonschema.Draft202012Validator(document)


def _schema_faults(schema: jsonschema.Draft202012Validator, doc: Any) -> list[str]:
    return [e.message for e in schema.iter_errors(doc)]


def test_the_committed_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "docs/scenario-format.schema.json drifted from the models: "
        "python -m quotagov.scheduler.scenario_schema --write"
    )


def test_the_module_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert printed["title"] == "Scenario"
    assert printed["required"] == ["capacity", "shares"]
    assert printed["$defs"]["ServiceJob"]["required"] == [
        "jobName",
        "quotaShareName",
        "instanceType",
        "runSeconds",
        "submittedAt",
    ]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_the_shipped_scenarios_pass_the_schema_and_the_validator(
    path: Path, schema: jsonschema.Draft202012Validator
) -> None:
    assert _schema_faults(schema, json.loads(path.read_text(encoding="utf-8"))) == []
    assert load_scenario(path).name == "aws-walkthrough"


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_what_the_validator_accepts_passes_the_schema(doc: dict[str, Any]) -> None:
    schema = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
    validate_scenario(doc, allow_unschedulable=True)
    assert _schema_faults(schema, doc) == []


def _valid() -> dict[str, Any]:
    return scenario(
        2,
        [share("a", 1, borrow=50), share("b", 1, "LEND")],
        [job("j0", "a", 0, 100, ckpt=30)],
        [
            {"at": 10, "type": "UpdateServiceJob", "jobName": "j0", "schedulingPriority": 5},
            {"at": 20, "type": "UpdateQuotaShare", "quotaShareName": "b", "state": "DISABLED"},
        ],
        startupSeconds=5,
        queueing="BEST_EFFORT_FIFO",
    )


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = _valid()
    node: Any = doc
    for part in path[:-1]:
        node = node[part]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


class _Delete:
    """Leave the field out."""

    def __repr__(self) -> str:
        return "DELETE"


_DELETE = _Delete()

#: Faults the schema can express, each with the validator's message for it.
EXPRESSIBLE = [
    (
        ("capacity",),
        _DELETE,
        "capacity: required",
    ),
    (
        ("capacity", G),
        -1,
        "capacity.ml.g5.xlarge: -1 is negative",
    ),
    (
        ("colour",),
        "red",
        "colour: unknown field",
    ),
    (
        ("options", "startupSeconds"),
        True,
        "options.startupSeconds: expected a number, got a boolean",
    ),
    (
        ("options", "queueing"),
        "FIFO",
        "options.queueing: 'FIFO' is not one of STRICT_FIFO, BEST_EFFORT_FIFO",
    ),
    (
        ("shares", 0, "capacityLimits"),
        [],
        "shares[0].capacityLimits: a share needs at least 1 capacity limit",
    ),
    (
        ("shares", 0, "capacityLimits"),
        [{"capacityUnit": f"ml.t{i}.large", "maxCapacity": 1} for i in range(6)],
        "shares[0].capacityLimits: 6 capacity limits, a share has at most 5",
    ),
    (
        ("shares", 0, "capacityLimits", 0, "maxCapacity"),
        0,
        "shares[0].capacityLimits[0].maxCapacity: 0 is below 1",
    ),
    (
        ("shares", 0, "resourceSharingConfiguration", "borrowLimit"),
        -2,
        "shares[0].resourceSharingConfiguration.borrowLimit: -2 is below -1",
    ),
    (
        ("shares", 0, "resourceSharingConfiguration", "strategy"),
        "SHARE",
        (
            "shares[0].resourceSharingConfiguration.strategy: 'SHARE' is not one of "
            "RESERVE, LEND, LEND_AND_BORROW"
        ),
    ),
    (
        ("shares", 0, "state"),
        None,
        "shares[0].state: None is not one of ENABLED, DISABLED",
    ),
    (
        ("shares", 0, "quotaShareName"),
        "",
        "shares[0].quotaShareName: expected a non-empty string, got string ''",
    ),
    (
        ("jobs", 0, "runSeconds"),
        _DELETE,
        "jobs[0].runSeconds: required",
    ),
    (
        ("jobs", 0, "submittedAt"),
        "0",
        "jobs[0].submittedAt: expected a number, got string '0'",
    ),
    (
        ("jobs", 0, "schedulingPriority"),
        10000,
        "jobs[0].schedulingPriority: 10000 is above 9999",
    ),
    (
        ("jobs", 0, "checkpointIntervalSeconds"),
        0,
        "jobs[0].checkpointIntervalSeconds: must be positive (use null for none)",
    ),
    (
        ("jobs", 0, "restartOverheadSeconds"),
        None,
        "jobs[0].restartOverheadSeconds: must not be null",
    ),
    (
        ("jobs", 0, "preemptionRetriesBeforeTermination"),
        -1,
        "jobs[0].preemptionRetriesBeforeTermination: -1 is negative",
    ),
    (
        ("actions", 0, "type"),
        "Reboot",
        (
            "actions[0].type: 'Reboot' is not one of UpdateServiceJob, "
            "UpdateQuotaShare, TerminateServiceJob"
        ),
    ),
    (
        ("actions", 0, "type"),
        _DELETE,
        "actions[0].type: required",
    ),
    (
        ("actions", 0, "schedulingPriority"),
        _DELETE,
        "actions[0].schedulingPriority: required",
    ),
    (
        ("actions", 1, "state"),
        _DELETE,
        (
            "actions[1]: UpdateQuotaShare changes nothing: give at least one of "
            "capacityLimits, resourceSharingConfiguration, preemptionConfiguration, "
            "state"
        ),
    ),
    (
        ("actions", 1, "capacityLimits"),
        None,
        "actions[1].capacityLimits: expected a list, got null",
    ),
    (
        ("actions", 1, "at"),
        -1,
        "actions[1].at: -1 is negative",
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "fault"), EXPRESSIBLE, ids=[f for _, _, f in EXPRESSIBLE]
)
def test_a_fault_the_schema_can_express_fails_both(
    path: tuple[Any, ...], value: Any, fault: str, schema: jsonschema.Draft202012Validator
) -> None:
    assert _schema_faults(schema, _valid()) == []
    doc = _with(path, value)
    with pytest.raises(ScenarioError) as exc:
        validate_scenario(doc)
    assert exc.value.faults[0] == fault  # others follow from it (a job of the share...)
    assert _schema_faults(schema, doc) != []


def test_more_than_20_shares_fail_both(schema: jsonschema.Draft202012Validator) -> None:
    doc = _valid()
    doc["shares"] = [share(f"s{i}", 1) for i in range(21)]
    doc["jobs"], doc["actions"] = [], []
    with pytest.raises(ScenarioError) as exc:
        validate_scenario(doc)
    assert exc.value.faults == ["shares: 21 shares, a job queue holds at most 20"]
    assert [e.validator for e in schema.iter_errors(doc)] == ["maxItems"]


def test_what_the_schema_cannot_express_only_the_validator_refuses(
    schema: jsonschema.Draft202012Validator,
) -> None:
    """A repeated name, a job of a share that is not there, and 1.0 as an integer
    (JSON Schema counts 1.0 as an integer; a scenario's integers are written 1)."""
    doc = _valid()
    doc["jobs"] += [copy.deepcopy(doc["jobs"][0]), job("j2", "gpu")]
    doc["jobs"][0]["instanceCount"] = 1.0
    with pytest.raises(ScenarioError) as exc:
        validate_scenario(doc)
    assert exc.value.faults == [
        "jobs[0].instanceCount: expected an integer, got float 1.0",
        "jobs[1].jobName: duplicate job 'j0'",
        "jobs[2].quotaShareName: unknown share 'gpu'",
    ]
    assert _schema_faults(schema, doc) == []


def test_the_job_and_options_models_are_the_engine_specs_field_for_field() -> None:
    """``ServiceJob.to_spec`` and ``ScenarioOptions.to_options`` pass the fields by name."""
    for model, spec in ((ServiceJob, JobSpec), (ScenarioOptions, Options)):
        fields = {f.name: f.default for f in dataclasses.fields(spec)}
        assert list(model.model_fields) == list(fields)
        for name, info in model.model_fields.items():
            if not info.is_required():
                assert info.default == fields[name], name
