"""``quotagov policy validate FILE`` exits 0 or 1 and lists every fault with its path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from quotagov.cli import main
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


def test_missing_file_exits_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "validate", str(tmp_path / "absent.yaml")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_validate_needs_a_file() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["policy", "validate"])
    assert exc.value.code == 2


def test_eight_faults_of_both_stages_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Model faults and cross-field faults together: one run, not three (issue 17)."""
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
