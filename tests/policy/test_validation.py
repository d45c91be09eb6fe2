"""Policy validation: every fault is reported, each with its path."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from quotagov.policy import PolicyError, load_policy, parse_policy
from support.policies import example_policy_text


def _example() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(example_policy_text())
    return data


def _faults(data: dict[str, Any]) -> list[str]:
    with pytest.raises(PolicyError) as caught:
        parse_policy(data)
    return caught.value.faults


def _share(name: str, **changes: Any) -> dict[str, Any]:
    share: dict[str, Any] = {
        "quotaShareName": name,
        "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
        "resourceSharingConfiguration": {"strategy": "LEND"},
        "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
    }
    share.update(changes)
    return share


def test_the_example_policy_is_valid() -> None:
    policy = parse_policy(_example())
    assert [s.quotaShareName for s in policy.quotaShares] == ["background", "medium", "reserved"]
    assert policy.level("urgent").schedulingPriority == 90
    assert policy.team_of("arn:aws:sts::111122223333:assumed-role/researcher/bob") == ["research"]


def test_share_named_twice() -> None:
    data = _example()
    data["quotaShares"].append(_share("medium"))
    assert _faults(data) == ["quotaShares[3].quotaShareName: share 'medium' is named twice"]


def test_class_pointing_at_unknown_share() -> None:
    data = _example()
    data["workloadClasses"]["scheduled"]["shares"] = ["medium", "gpu-pool"]
    assert _faults(data) == ["workloadClasses.scheduled.shares[1]: unknown share 'gpu-pool'"]


def test_non_checkpointing_class_into_share_with_in_share_preemption() -> None:
    data = _example()
    data["workloadClasses"]["release"]["shares"] = ["background"]
    assert _faults(data) == [
        "workloadClasses.release.shares[0]: class 'release' does not require checkpointing "
        "but share 'background' has in-share preemption ENABLED"
    ]


@pytest.mark.parametrize("priority", [-1, 10000, 123456])
def test_level_outside_0_to_9999(priority: int) -> None:
    data = _example()
    data["priorityLevels"][3]["schedulingPriority"] = priority
    assert _faults(data) == [
        f"priorityLevels[3].schedulingPriority: {priority} is outside Batch's range 0-9999"
    ]


@pytest.mark.parametrize("priority", [0, 9999])
def test_levels_at_the_bounds_are_valid(priority: int) -> None:
    data = _example()
    data["priorityLevels"][3]["schedulingPriority"] = priority
    assert parse_policy(data).level("urgent").schedulingPriority == priority


def test_more_than_twenty_shares() -> None:
    data = _example()
    data["quotaShares"] += [_share(f"extra-{i}") for i in range(18)]
    assert len(data["quotaShares"]) == 21
    assert _faults(data) == ["quotaShares: 21 shares, a job queue holds at most 20"]


def test_exactly_twenty_shares_is_valid() -> None:
    data = _example()
    data["quotaShares"] += [_share(f"extra-{i}") for i in range(17)]
    assert len(parse_policy(data).quotaShares) == 20


def test_more_than_five_capacity_limits() -> None:
    data = _example()
    data["quotaShares"][1]["capacityLimits"] += [
        {"capacityUnit": unit, "maxCapacity": 2}
        for unit in (
            "ml.g5.2xlarge",
            "ml.g5.4xlarge",
            "ml.p4d.24xlarge",
            "ml.p5.48xlarge",
            "ml.trn1.32xlarge",
        )
    ]
    assert _faults(data) == ["quotaShares[1].capacityLimits: 6 limits, a share holds at most 5"]


def test_no_capacity_limit_at_all() -> None:
    data = _example()
    data["quotaShares"][2]["capacityLimits"] = []
    faults = _faults(data)
    assert len(faults) == 1
    assert faults[0].startswith("quotaShares[2].capacityLimits: List should have at least 1 item")


def test_capacity_unit_listed_twice() -> None:
    data = _example()
    data["quotaShares"][0]["capacityLimits"].append(
        {"capacityUnit": "ml.g5.xlarge", "maxCapacity": 3}
    )
    assert _faults(data) == [
        "quotaShares[0].capacityLimits[1].capacityUnit: 'ml.g5.xlarge' is listed twice"
    ]


@pytest.mark.parametrize("strategy", ["RESERVE", "LEND"])
def test_borrow_limit_only_with_lend_and_borrow(strategy: str) -> None:
    data = _example()
    data["quotaShares"][1]["resourceSharingConfiguration"] = {
        "strategy": strategy,
        "borrowLimit": 50,
    }
    assert _faults(data) == [
        "quotaShares[1].resourceSharingConfiguration.borrowLimit: only valid with strategy "
        f"LEND_AND_BORROW, not {strategy}"
    ]


def test_borrow_limit_below_minus_one() -> None:
    data = _example()
    data["quotaShares"][0]["resourceSharingConfiguration"]["borrowLimit"] = -2
    faults = _faults(data)
    assert len(faults) == 1
    assert faults[0].startswith(
        "quotaShares[0].resourceSharingConfiguration.borrowLimit: "
        "Input should be greater than or equal to -1"
    )


def test_zero_max_capacity_and_unknown_strategy_are_field_faults() -> None:
    data = _example()
    data["quotaShares"][0]["capacityLimits"][0]["maxCapacity"] = 0
    data["quotaShares"][2]["resourceSharingConfiguration"]["strategy"] = "HOARD"
    paths = [f.split(":")[0] for f in _faults(data)]
    assert paths == [
        "quotaShares[0].capacityLimits[0].maxCapacity",
        "quotaShares[2].resourceSharingConfiguration.strategy",
    ]


def test_invalid_share_name() -> None:
    data = _example()
    data["quotaShares"][0]["quotaShareName"] = "team vision!"
    faults = _faults(data)
    # the cross-field rules run too: the class still names the share's old name
    assert faults == [
        "quotaShares[0].quotaShareName: String should match pattern '^[A-Za-z0-9_-]{1,128}$'",
        "workloadClasses.exploratory.shares[0]: unknown share 'background'",
    ]


def test_team_with_unknown_class_and_levels() -> None:
    data = _example()
    data["teams"]["research"]["classes"] = ["exploratory", "overnight"]
    data["teams"]["applied"]["directLevels"] = ["low", "asap"]
    data["teams"]["release"]["approvalLevels"] = ["critical"]
    assert _faults(data) == [
        "teams.research.classes[1]: unknown workload class 'overnight'",
        "teams.applied.directLevels[1]: unknown priority level 'asap'",
        "teams.release.approvalLevels[0]: unknown priority level 'critical'",
    ]


def test_level_named_twice() -> None:
    data = _example()
    data["priorityLevels"].append({"name": "high", "schedulingPriority": 70})
    assert _faults(data) == ["priorityLevels[4].name: level 'high' is named twice"]


def test_member_listed_twice() -> None:
    data = _example()
    alice = copy.deepcopy(data["teams"]["research"]["members"][0])
    data["teams"]["research"]["members"].append(alice)
    assert _faults(data) == [
        "teams.research.members[2].principal: "
        "'arn:aws:sts::111122223333:assumed-role/researcher/alice' is listed twice"
    ]


def test_class_instance_type_without_capacity_limit_in_its_share() -> None:
    data = _example()
    data["workloadClasses"]["release"]["instanceTypes"] = ["ml.g5.xlarge", "ml.p4d.24xlarge"]
    assert _faults(data) == [
        "workloadClasses.release.shares[0]: share 'reserved' has no capacity limit for "
        "instance type 'ml.p4d.24xlarge' of class 'release'"
    ]


def test_reclassify_needs_a_next_share() -> None:
    data = _example()
    data["workloadClasses"]["scheduled"]["onRetriesExhausted"] = {"action": "reclassify"}
    assert _faults(data) == [
        "workloadClasses.scheduled.onRetriesExhausted.action: reclassify needs a next share, "
        "but the class lists only ['medium']"
    ]


def test_negative_preemption_retries_and_unknown_disposition() -> None:
    data = _example()
    data["workloadClasses"]["exploratory"]["preemptionRetriesBeforeTermination"] = -1
    data["workloadClasses"]["scheduled"]["onRetriesExhausted"] = {"action": "shrug"}
    paths = [f.split(":")[0] for f in _faults(data)]
    assert paths == [
        "workloadClasses.exploratory.preemptionRetriesBeforeTermination",
        "workloadClasses.scheduled.onRetriesExhausted.action",
    ]


def test_unknown_and_missing_fields_are_named() -> None:
    data = _example()
    data["quotaShares"][0]["maxCapacity"] = 4
    del data["jobQueue"]
    faults = _faults(data)
    assert sorted(f.split(":")[0] for f in faults) == ["jobQueue", "quotaShares[0].maxCapacity"]
    assert any("Field required" in f for f in faults)
    assert any("Extra inputs are not permitted" in f for f in faults)


def test_every_cross_reference_fault_is_listed_at_once() -> None:
    data = _example()
    data["quotaShares"].append(
        _share("medium", resourceSharingConfiguration={"strategy": "RESERVE", "borrowLimit": 10})
    )
    data["priorityLevels"][0]["schedulingPriority"] = 10000
    data["workloadClasses"]["scheduled"]["shares"] = ["nowhere"]
    data["workloadClasses"]["release"]["shares"] = ["background"]
    data["teams"]["applied"]["classes"] = ["ghost"]
    assert _faults(data) == [
        "quotaShares[3].quotaShareName: share 'medium' is named twice",
        "quotaShares[3].resourceSharingConfiguration.borrowLimit: only valid with strategy "
        "LEND_AND_BORROW, not RESERVE",
        "priorityLevels[0].schedulingPriority: 10000 is outside Batch's range 0-9999",
        "workloadClasses.scheduled.shares[0]: unknown share 'nowhere'",
        "workloadClasses.release.shares[0]: class 'release' does not require checkpointing "
        "but share 'background' has in-share preemption ENABLED",
        "teams.applied.classes[0]: unknown workload class 'ghost'",
    ]


def test_yaml_that_is_not_a_mapping_or_not_yaml() -> None:
    with pytest.raises(PolicyError) as caught:
        load_policy("- just\n- a list\n")
    assert caught.value.faults == ["(document): a policy must be a mapping"]
    with pytest.raises(PolicyError) as caught:
        load_policy("quotaShares: [unclosed\n")
    assert caught.value.faults[0].startswith("(document): not valid YAML")


@pytest.mark.parametrize(
    "queue",
    ["arn:aws:batch:eu-west-1:1111:job-queue/ml", "job queue with spaces", "arn:aws:s3:::bucket"],
)
def test_job_queue_that_is_neither_an_arn_nor_a_name(queue: str) -> None:
    data = _example()
    data["jobQueue"] = queue
    assert _faults(data) == [
        f"jobQueue: {queue!r} is neither a job queue ARN "
        "(arn:aws:batch:<region>:<account>:job-queue/<name>) nor a job queue name"
    ]


@pytest.mark.parametrize(
    "queue", ["ml-gov-queue", "arn:aws-cn:batch:cn-north-1:111122223333:job-queue/ml_gov"]
)
def test_job_queue_name_or_arn_is_valid(queue: str) -> None:
    data = _example()
    data["jobQueue"] = queue
    assert parse_policy(data).jobQueue == queue


@pytest.mark.parametrize(
    ("pattern", "fault"),
    [
        ("sm-exec-*", "is not an IAM role ARN or pattern"),
        ("arn:aws:iam::*:role/sm-exec", "is not an IAM role ARN or pattern"),
        ("arn:aws:iam::111122223333:user/alice", "is not an IAM role ARN or pattern"),
        ("arn:aws:iam::111122223333:role/sm-exec-?", "is not an IAM role ARN or pattern"),
        ("arn:aws:iam::111122223333:role/*", "matches every role of the account"),
        ("arn:aws:iam::111122223333:role/*/*", "matches every role of the account"),
    ],
)
def test_execution_role_patterns_are_checked(pattern: str, fault: str) -> None:
    data = _example()
    data["teams"]["research"]["executionRoles"] = [
        "arn:aws:iam::111122223333:role/sm-exec-research*",
        pattern,
    ]
    data["workloadClasses"]["release"]["executionRoles"] = [pattern]
    faults = _faults(data)
    assert len(faults) == 2, faults
    assert faults[0].startswith(f"teams.research.executionRoles[1]: {pattern!r} {fault}")
    assert faults[1].startswith(f"workloadClasses.release.executionRoles[0]: {pattern!r} {fault}")


def test_execution_role_patterns_match_only_what_they_name() -> None:
    from quotagov.policy.roles import role_matches

    pattern = "arn:aws:iam::111122223333:role/sm-exec-research*"
    assert role_matches("arn:aws:iam::111122223333:role/sm-exec-research", pattern)
    assert role_matches("arn:aws:iam::111122223333:role/sm-exec-research-nlp", pattern)
    assert not role_matches("arn:aws:iam::111122223333:role/sm-exec-release-prod", pattern)
    assert not role_matches("arn:aws:iam::444455556666:role/sm-exec-research", pattern)
    exact = "arn:aws:iam::111122223333:role/sm-exec"
    assert role_matches(exact, exact)
    assert not role_matches(exact + "-admin", exact)
    # a * never crosses /: a role under a path that starts like the bound name is not it
    assert not role_matches("arn:aws:iam::111122223333:role/sm-exec-research-x/admin", pattern)
    assert not role_matches("arn:aws:iam::111122223333:role/sm-exec-research/a/b", pattern)
    team_path = "arn:aws:iam::111122223333:role/team-a/*"
    assert role_matches("arn:aws:iam::111122223333:role/team-a/trainer", team_path)
    assert not role_matches("arn:aws:iam::111122223333:role/team-a/deeper/admin", team_path)
    # regex metacharacters in a name are literal
    assert not role_matches(
        "arn:aws:iam::111122223333:role/smXexec", "arn:aws:iam::111122223333:role/sm.exec"
    )
