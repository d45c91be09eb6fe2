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
