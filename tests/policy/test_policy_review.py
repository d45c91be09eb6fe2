"""``quotagov policy review``: the change in governance terms, the audit's findings, the
what-if of OLD against NEW, and ``--fail-on high``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from quotagov.governance.audit.findings import policy_change_findings
from quotagov.governance.audit.policy_diff import policy_difference
from quotagov.policy import load_policy
from quotagov_tools.cli import main
from quotagov_tools.whatif.policy_review import regressions

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "src/quotagov/examples/policy.yaml"
TODAY = ROOT / "src/quotagov/examples/whatif-today.yaml"
WALKTHROUGH = ROOT / "src/quotagov/examples/aws-walkthrough.json"
MAPS = [
    "--map", "background=research:exploratory",
    "--map", "medium=applied:scheduled",
    "--map", "reserved=release:release",
]  # fmt: skip
GRACE = "arn:aws:sts::111122223333:assumed-role/researcher/grace"


def _copy(source: Path, tmp_path: Path, name: str, edit: Any) -> Path:
    data = yaml.safe_load(source.read_text())
    edit(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _cut_reserved_and_add_grace(data: dict[str, Any]) -> None:
    data["quotaShares"][2]["capacityLimits"][0]["maxCapacity"] = 3  # reserved: 6 -> 3
    applied = data["teams"]["applied"]
    applied["members"].append({"principal": GRACE, "slackUserId": "U0GRACE"})
    applied["approvalLevels"] = ["high"]


def test_review_names_both_changes_and_marks_the_capacity_cut_high(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = _copy(TODAY, tmp_path, "new.yaml", _cut_reserved_and_add_grace)
    out = tmp_path / "review"
    assert main(["policy", "review", str(TODAY), str(new), "--out", str(out)]) == 0
    document = json.loads((out / "review.json").read_text())
    assert [c["text"] for c in document["changes"]] == [
        "quota share reserved: ml.g5.xlarge capacity limit 6 -> 3 instances",
        f"team applied: member {GRACE} (Slack U0GRACE) added",
        "team applied: approval level high (50) added",
    ]
    assert [(f["severity"], f["code"]) for f in document["findings"]] == [
        ("high", "CAPACITY_LIMIT_BELOW_USE"),
        ("medium", "MEMBER_ADDED"),
        ("medium", "APPROVAL_LEVEL_ADDED"),
    ]
    assert document["findings"][0]["message"] == (
        "quota share reserved: ml.g5.xlarge capacity limit lowered to 3 from 6 while 6 "
        "instances are in use (the share full at its former limit); the excess becomes "
        "preemptible even though the share is RESERVE"
    )
    assert document["highFindings"] == 1
    assert document["whatif"] == []
    text = (out / "review.md").read_text()
    assert text == capsys.readouterr().out.split("\nWrote ")[0]
    assert (
        "| HIGH | CAPACITY_LIMIT_BELOW_USE | quota share reserved: ml.g5.xlarge capacity "
        "limit lowered to 3 from 6" in text
    )
    assert (
        f"### Who gains a right\n\n- team applied: member {GRACE} (Slack U0GRACE) added\n" in text
    )
    assert "- quota share reserved: ml.g5.xlarge capacity limit 6 -> 3 instances" in text


def test_fail_on_high_exits_1_and_still_writes_the_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = _copy(TODAY, tmp_path, "new.yaml", _cut_reserved_and_add_grace)
    out = tmp_path / "review"
    args = ["policy", "review", str(TODAY), str(new), "--out", str(out), "--fail-on", "high"]
    assert main(args) == 1
    assert capsys.readouterr().err == "quotagov policy review: 1 high-risk finding(s)\n"
    assert (out / "review.md").exists()
    # without the capacity cut only medium findings remain: exit 0
    only_member = _copy(
        TODAY,
        tmp_path,
        "member.yaml",
        lambda d: d["teams"]["applied"]["members"].append(
            {"principal": GRACE, "slackUserId": "U0GRACE"}
        ),
    )
    assert main(["policy", "review", str(TODAY), str(only_member), "--out", str(out),
                 "--fail-on", "high"]) == 0  # fmt: skip


def test_review_with_a_workload_has_the_whatif_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = _copy(TODAY, tmp_path, "new.yaml", _cut_reserved_and_add_grace)
    out = tmp_path / "review"
    args = ["policy", "review", str(TODAY), str(new), "--workload", str(WALKTHROUGH), *MAPS,
            "--out", str(out), "--seeds", "2"]  # fmt: skip
    assert main(args) == 0
    document = json.loads((out / "review.json").read_text())
    (section,) = document["whatif"]
    assert section["workload"] == str(WALKTHROUGH)
    assert (section["jobs"], section["seeds"]) == (4, 2)
    assert section["table"][0] == ["figure", "old", "new"]
    assert [row[0] for row in section["table"][1:4]] == ["wait p50", "wait p95", "wait max"]
    assert section["verdict"].startswith("new vs old: ")
    text = (out / "review.md").read_text()
    assert f"### What-if on `{WALKTHROUGH}` (4 jobs, 2 seed(s))" in text
    assert "| figure | old | new |" in text
    assert "Regressions, biggest first (per team and per share):" in text


def _block(wait_p95: float, failed: int, goodput: float) -> dict[str, Any]:
    return {"waitSeconds": {"p95": wait_p95}, "failedJobs": failed, "goodput": goodput}


def test_regressions_come_biggest_first_with_noise_marks() -> None:
    """Only what gets worse, largest relative change first; from nothing counts first;
    a change whose seed ranges overlap is within noise and goes last."""
    old = {
        "teams": {"research": _block(600, 0, 1.0), "applied": _block(100, 1, 0.9)},
        "shares": {"background": _block(600, 0, 1.0)},
        "spread": {
            "teams": {"applied": {"waitSeconds": {"p95": [90, 200]}}},
            "shares": {"background": {"waitSeconds": {"p95": [500, 700]}}},
        },
    }
    new = {
        "teams": {"research": _block(900, 2, 0.8), "applied": _block(120, 1, 0.95)},
        "shares": {"background": _block(540, 0, 1.0)},
        "spread": {
            "teams": {"applied": {"waitSeconds": {"p95": [100, 150]}}},
            "shares": {"background": {"waitSeconds": {"p95": [500, 560]}}},
        },
    }
    rows = regressions({"policies": {"old": old, "new": new}}, "old", "new")
    assert [(r["scope"], r["name"], r["figure"], r["percent"], r["withinNoise"]) for r in rows] == [
        ("team", "research", "failed jobs", None, False),
        ("team", "research", "wait p95", 50.0, False),
        ("team", "research", "goodput", pytest.approx(-20.0), False),
        ("team", "applied", "wait p95", 20.0, True),
    ]
    assert (rows[1]["oldText"], rows[1]["newText"]) == ("10 m", "15 m")


def test_bad_input_exits_2_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _copy(EXAMPLE, tmp_path, "bad.yaml", lambda d: d["teams"]["research"].update(
        directLevels=["asap"]))  # fmt: skip
    assert main(["policy", "review", str(EXAMPLE), str(bad), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "quotagov policy review: 1 problem(s):",
        f"  {bad}: teams.research.directLevels[0]: unknown priority level 'asap'",
    ]
    assert not (tmp_path / "review.md").exists()


def test_the_example_policy_reviewed_against_a_member_with_an_approval_level() -> None:
    """The shipped example: its reserved share holds 1 instance, Batch's smallest
    ``maxCapacity``, so its cut is shown on whatif-today.yaml above; here a strategy
    change of the reserved share is the high finding."""
    old = load_policy(EXAMPLE.read_text())
    data = yaml.safe_load(EXAMPLE.read_text())
    data["quotaShares"][2]["resourceSharingConfiguration"] = {"strategy": "LEND"}
    data["teams"]["release"]["members"].append({"principal": GRACE, "slackUserId": "U0GRACE"})
    new = load_policy(yaml.safe_dump(data))
    assert [c["text"] for c in policy_difference(old, new)] == [
        "quota share reserved: strategy RESERVE -> LEND",
        f"team release: member {GRACE} (Slack U0GRACE) added",
    ]
    assert [(f["code"], f["severity"]) for f in policy_change_findings(old, new)] == [
        ("STRATEGY_AWAY_FROM_RESERVE", "high"),
        ("MEMBER_ADDED", "medium"),
    ]
