"""``quotagov policy validate FILE`` exits 0, 1 (every fault with its path) or 2 (unreadable)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from quotagov_tools.cli import main
from support.policies import example_policy_text


def test_valid_policy_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(example_policy_text())
    assert main(["policy", "validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert out == (f"{path}: OK (3 quota shares, 4 priority levels, 3 workload classes, 3 teams)\n")


def test_invalid_policy_exits_one_listing_every_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = yaml.safe_load(example_policy_text())
    data["quotaShares"][1]["resourceSharingConfiguration"]["borrowLimit"] = 20
    data["workloadClasses"]["release"]["shares"] = ["background", "nowhere"]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["policy", "validate", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{path}: invalid policy, 3 fault(s):",
        "  quotaShares[1].resourceSharingConfiguration.borrowLimit: only valid with strategy "
        "LEND_AND_BORROW, not LEND",
        "  workloadClasses.release.shares[0]: class 'release' does not require checkpointing "
        "but share 'background' has in-share preemption ENABLED",
        "  workloadClasses.release.shares[1]: unknown share 'nowhere'",
    ]


def test_an_unreadable_file_exits_2_like_simulate_and_whatif(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a new user's finding: `policy validate nope.yaml` exited 1, simulate/whatif 2
    monkeypatch.chdir(tmp_path)
    assert main(["policy", "validate", "nope.yaml"]) == 2
    assert capsys.readouterr().err == "nope.yaml: cannot read: No such file or directory\n"
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00policy")
    assert main(["policy", "validate", "binary.yaml"]) == 2
    assert (
        capsys.readouterr().err == "binary.yaml: cannot read: not UTF-8 text (invalid start byte)\n"
    )
    for command in (
        ["simulate", "x.json", "--policy"],
        ["whatif", "x.json", "--out", "o", "--policy"],
    ):
        policy = "binary.yaml" if command[0] == "simulate" else "p=binary.yaml"
        assert main([*command, policy]) == 2
        assert "binary.yaml: cannot read: not UTF-8 text (invalid start byte)" in (
            capsys.readouterr().err
        )


def test_validate_needs_a_file() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["policy", "validate"])
    assert exc.value.code == 2


def test_eight_faults_of_both_stages_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Model faults and cross-field faults together: one run, not three."""
    data = yaml.safe_load(example_policy_text())
    data["jobQueue"] = "not a queue!"  # cross-field
    data["quotaShares"][0]["capacityLimits"][0]["maxCapacity"] = 0  # model
    data["quotaShares"][1]["resourceSharingConfiguration"]["borrowLimit"] = 2  # cross
    data["priorityLevels"][0]["schedulingPriority"] = 99999  # cross
    data["priorityLevels"][1]["schedulingPriority"] = "ten"  # model
    data["workloadClasses"]["exploratory"]["shares"].append("gpu")  # cross
    data["teams"]["research"]["classes"].append("nope")  # cross
    del data["teams"]["research"]["members"][1]["slackUserId"]  # cross: approval levels
    path = tmp_path / "eight.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["policy", "validate", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{path}: invalid policy, 8 fault(s):",
        "  quotaShares[0].capacityLimits[0].maxCapacity: Input should be greater than or "
        "equal to 1",
        "  priorityLevels[1].schedulingPriority: Input should be a valid integer, unable to "
        "parse string as an integer",
        "  jobQueue: 'not a queue!' is neither a job queue ARN "
        "(arn:aws:batch:<region>:<account>:job-queue/<name>) nor a job queue name",
        "  quotaShares[1].resourceSharingConfiguration.borrowLimit: only valid with strategy "
        "LEND_AND_BORROW, not LEND",
        "  priorityLevels[0].schedulingPriority: 99999 is outside Batch's range 0-9999",
        "  workloadClasses.exploratory.shares[2]: unknown share 'gpu'",
        "  teams.research.classes[1]: unknown workload class 'nope'",
        "  teams.research.members[1].slackUserId: required, team 'research' has "
        "approvalLevels (high, urgent) and approvals check the requester's Slack user id",
    ]


def test_member_without_slack_user_id_is_refused_only_with_approval_levels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = yaml.safe_load(example_policy_text())
    del data["teams"]["research"]["members"][0]["slackUserId"]
    path = tmp_path / "noslack.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["policy", "validate", str(path)]) == 1
    assert capsys.readouterr().err.splitlines()[1:] == [
        "  teams.research.members[0].slackUserId: required, team 'research' has "
        "approvalLevels (high, urgent) and approvals check the requester's Slack user id"
    ]
    data["teams"]["research"]["approvalLevels"] = []
    path.write_text(yaml.safe_dump(data))
    assert main(["policy", "validate", str(path)]) == 0


def test_seven_faults_inside_refused_items_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A share, a class and a team the models refuse still get their cross-field rules;
    a level the models refuse is still known to the team that names it."""
    data = yaml.safe_load(example_policy_text())
    medium = data["quotaShares"][1]
    medium["capacityLimits"][0]["maxCapacity"] = 0  # model
    medium["resourceSharingConfiguration"]["borrowLimit"] = 2  # cross, same share
    data["priorityLevels"][3]["schedulingPriority"] = "ninety"  # model
    scheduled = data["workloadClasses"]["scheduled"]
    scheduled["maxInstanceCount"] = 0  # model
    scheduled["shares"].append("gpu")  # cross, same class
    research = data["teams"]["research"]
    research["escalationBudget"]["count"] = -1  # model
    research["directLevels"].append("asap")  # cross, same team
    path = tmp_path / "seven.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["policy", "validate", str(path)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: invalid policy, 7 fault(s):",
        "  quotaShares[1].capacityLimits[0].maxCapacity: Input should be greater than or "
        "equal to 1",
        "  priorityLevels[3].schedulingPriority: Input should be a valid integer, unable to "
        "parse string as an integer",
        "  workloadClasses.scheduled.maxInstanceCount: Input should be greater than or equal to 1",
        "  teams.research.escalationBudget.count: Input should be greater than or equal to 0",
        "  quotaShares[1].resourceSharingConfiguration.borrowLimit: only valid with strategy "
        "LEND_AND_BORROW, not LEND",
        "  workloadClasses.scheduled.shares[1]: unknown share 'gpu'",
        "  teams.research.directLevels[1]: unknown priority level 'asap'",
    ]
