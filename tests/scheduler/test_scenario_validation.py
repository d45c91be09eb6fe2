"""Scenario validation: one message per fault, naming the field path; YAML and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from quotagov.scheduler import ScenarioError, load_scenario, validate_scenario

from .builders import G, P, job, scenario, share


def _faults(doc: Any) -> list[str]:
    with pytest.raises(ScenarioError) as exc:
        validate_scenario(doc)
    return exc.value.faults


def test_unknown_share() -> None:
    doc = scenario(
        1, [share("a", 1)], [job("j0", "a"), job("j1", "a"), job("j2", "a"), job("j3", "gpu")]
    )
    assert _faults(doc) == ["jobs[3].quotaShareName: unknown share 'gpu'"]


def test_instance_type_not_in_the_share_limits() -> None:
    doc = scenario({G: 1, P: 1}, [share("a", 1)], [job("j0", "a", unit=P)])
    assert _faults(doc) == [
        "jobs[0].instanceType: 'ml.p4d.24xlarge' is not in share 'a''s capacity limits"
    ]


def test_instance_type_checked_against_limits_in_effect_at_submission() -> None:
    update = {
        "at": 50,
        "type": "UpdateQuotaShare",
        "quotaShareName": "a",
        "capacityLimits": [{"capacityUnit": P, "maxCapacity": 1}],
    }
    ok = scenario({G: 1, P: 1}, [share("a", 1)], [job("j0", "a", 60, unit=P)], [update])
    assert validate_scenario(ok).jobs[0].instanceType == P
    late = scenario({G: 1, P: 1}, [share("a", 1)], [job("j0", "a", 60)], [update])
    assert _faults(late) == [
        "jobs[0].instanceType: 'ml.g5.xlarge' is not in share 'a''s capacity limits"
    ]


def test_more_than_20_shares() -> None:
    doc = scenario(1, [share(f"s{i}", 1) for i in range(21)], [])
    assert _faults(doc) == ["shares: 21 shares, a job queue holds at most 20"]


def test_more_than_5_capacity_limits() -> None:
    limits = {f"ml.t{i}.large": 1 for i in range(6)}
    doc = scenario(1, [share("a", limits)], [])
    assert _faults(doc) == ["shares[0].capacityLimits: 6 capacity limits, a share has at most 5"]


def test_borrow_limit_on_a_share_that_does_not_borrow() -> None:
    doc = scenario(1, [share("a", 1, "LEND", borrow=50), share("b", 1, "RESERVE", borrow=-1)], [])
    assert _faults(doc) == [
        "shares[0].resourceSharingConfiguration.borrowLimit: only valid with LEND_AND_BORROW, "
        "the strategy is LEND"
    ]


def test_borrow_limit_below_minus_one() -> None:
    doc = scenario(1, [share("a", 1, borrow=-2)], [])
    assert _faults(doc) == ["shares[0].resourceSharingConfiguration.borrowLimit: -2 is below -1"]


def test_negative_times() -> None:
    doc = scenario(
        1,
        [share("a", 1)],
        [job("j0", "a", -5, -1, ckpt=-3, overhead=-2)],
        [{"at": -1, "type": "TerminateServiceJob", "jobName": "j0"}],
        startupSeconds=-1,
        horizonSeconds=-10,
    )
    assert _faults(doc) == [
        "options.startupSeconds: -1 is negative",
        "options.horizonSeconds: -10 is negative",
        "jobs[0].runSeconds: -1 is negative",
        "jobs[0].checkpointIntervalSeconds: -3 is negative",
        "jobs[0].restartOverheadSeconds: -2 is negative",
        "jobs[0].submittedAt: -5 is negative",
        "actions[0].at: -1 is negative",
    ]


def test_negative_counts() -> None:
    doc = scenario(-1, [share("a", -2)], [job("j0", "a", count=-1, retries=-1)])
    assert _faults(doc) == [
        "capacity.ml.g5.xlarge: -1 is negative",
        "shares[0].capacityLimits[0].maxCapacity: -2 is below 1",
        "jobs[0].instanceCount: -1 is below 1",
        "jobs[0].preemptionRetriesBeforeTermination: -1 is negative",
    ]


def test_duplicate_names() -> None:
    doc = scenario(1, [share("a", 1), share("a", 1)], [job("j", "a"), job("j", "a")])
    assert _faults(doc) == [
        "shares[1].quotaShareName: duplicate share 'a'",
        "jobs[1].jobName: duplicate job 'j'",
    ]


def test_priority_range_unknown_fields_and_actions() -> None:
    doc = scenario(
        1,
        [share("a", 1)],
        [{**job("j0", "a", prio=10000), "colour": "red"}, job("j1", "a")],
        [
            {"at": 5, "type": "UpdateServiceJob", "jobName": "nope", "schedulingPriority": 1},
            {"at": 5, "type": "UpdateQuotaShare", "quotaShareName": "zzz", "state": "ENABLED"},
            {"at": 5, "type": "Reboot"},
            {"at": 0, "type": "TerminateServiceJob", "jobName": "j1"},
        ],
    )
    assert _faults(doc) == [
        "jobs[0].colour: unknown field",
        "jobs[0].schedulingPriority: 10000 is above 9999",
        "actions[0].jobName: unknown job 'nope'",
        "actions[1].quotaShareName: unknown share 'zzz'",
        "actions[2].type: 'Reboot' is not one of UpdateServiceJob, UpdateQuotaShare, "
        "TerminateServiceJob",
        "actions[3].at: 0 is not after job 'j1' is submitted (0); actions run before "
        "submissions at the same time",
    ]


def test_share_update_that_makes_an_invalid_configuration() -> None:
    doc = scenario(
        1,
        [share("a", 1, borrow=50)],
        [],
        [
            {
                "at": 5,
                "type": "UpdateQuotaShare",
                "quotaShareName": "a",
                "resourceSharingConfiguration": {"strategy": "LEND", "borrowLimit": 50},
            }
        ],
    )
    assert _faults(doc) == [
        "actions[0].resourceSharingConfiguration.borrowLimit: only valid with LEND_AND_BORROW, "
        "the strategy is LEND"
    ]


def test_missing_required_fields_and_wrong_types() -> None:
    assert _faults({"shares": "x"}) == [
        "capacity: required",
        "shares: expected a list, got string 'x'",
    ]
    assert _faults([1]) == ["(document): expected a mapping, got a list"]


def test_all_faults_reported_together() -> None:
    doc = scenario(
        1, [share("a", 1, "RESERVE", borrow=5)], [job("j0", "gpu"), job("j1", "a", count=0)]
    )
    assert len(_faults(doc)) == 3


def test_yaml_and_json_files_load_the_same(tmp_path: Path) -> None:
    import yaml

    doc = scenario(1, [share("a", 1)], [job("j0", "a")])
    (tmp_path / "s.json").write_text(json.dumps(doc))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    assert load_scenario(tmp_path / "s.json") == load_scenario(str(tmp_path / "s.yaml"))
    assert load_scenario(json.dumps(doc)) == load_scenario(tmp_path / "s.json")


def test_unreadable_and_unparsable_sources() -> None:
    with pytest.raises(ScenarioError) as exc:
        load_scenario("/nonexistent/scenario.yaml")
    assert exc.value.faults[0].startswith("(document): cannot read '/nonexistent/scenario.yaml'")
    with pytest.raises(ScenarioError) as exc:
        load_scenario("{not: [valid\n")
    assert exc.value.faults[0].startswith("(document): not valid JSON or YAML")
