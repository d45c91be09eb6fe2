"""``quotagov whatif`` on a scenario: progress on a terminal, bad policies, the table."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from quotagov.cli import main

ROOT = Path(__file__).resolve().parents[2]
WALKTHROUGH = ROOT / "src/quotagov/examples/aws-walkthrough.json"
POLICY = ROOT / "src/quotagov/examples/policy.yaml"
MAPS = [
    "--map", "background=research:exploratory",
    "--map", "medium=applied:scheduled",
    "--map", "reserved=release:release",
]  # fmt: skip


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.slow
def test_progress_bar_on_a_terminal_and_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wider = tmp_path / "wider.yaml"
    wider.write_text(
        POLICY.read_text().replace(
            "maxCapacity: 1}]\n    resourceSharingConfiguration: {strategy: LEND}",
            "maxCapacity: 2}]\n    resourceSharingConfiguration: {strategy: LEND}",
        )
    )
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code = main(
        ["whatif", str(WALKTHROUGH), *MAPS, "--policy", f"today={POLICY}",
         "--policy", f"wider={wider}", "--out", str(tmp_path / "o"), "--workers", "1"]
    )  # fmt: skip
    assert code == 0
    assert "whatif [" in terminal.getvalue() and "2/2 runs done" in terminal.getvalue()
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["workload"]["jobs"] == 4
    # the scenario's environment (3 x ml.g5.xlarge) is used for both policies
    assert report["workload"]["capacity"] == {"ml.g5.xlarge": 3}
    assert report["workload"]["notes"] == {"scenarioActionsIgnored": 1}
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Workload aws-walkthrough: 4 jobs, 2 policies, 1 seed(s)"


def test_an_invalid_policy_lists_every_fault_with_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        POLICY.read_text().replace("schedulingPriority: 90", "schedulingPriority: 99999")
    )
    code = main(["whatif", str(WALKTHROUGH), *MAPS, "--policy", f"bad={bad}",
                 "--out", str(tmp_path / "o")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert f"{bad}: priorityLevels[3].schedulingPriority" in err
    assert not (tmp_path / "o").exists()


def test_an_unmapped_share_names_the_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["whatif", str(WALKTHROUGH), "--map", "background=research:exploratory",
                 "--policy", f"p={POLICY}", "--out", str(tmp_path / "o")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "share 'reserved' is not mapped to a team and class" in err
