"""``quotagov whatif`` on a scenario: progress on a terminal, bad policies, the table."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from quotagov_tools.cli import main

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
    assert report["workload"]["notes"] == {}
    assert report["workload"]["scenarioActions"] == 1
    replayed = {"at": 900, "type": "UpdateServiceJob", "jobName": "bg-2",
                "schedulingPriority": 50, "outcome": "applied"}  # fmt: skip
    assert report["policies"]["today"]["scenarioActions"] == [replayed]
    assert report["policies"]["wider"]["scenarioActions"] == [replayed]
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Workload aws-walkthrough: 4 jobs, 2 policies, 1 seed(s)"
    assert "  today: UpdateServiceJob at 900 s applied\n" in out


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


README_MAPS = [
    "--map", "background=research:exploratory", "--map", "medium=applied:scheduled",
    "--map", "reserved=release:release",
]  # fmt: skip


@pytest.mark.parametrize(
    ("typo", "fault"),
    [
        ("background=reserch:exploratory", "no team 'reserch' in any of the policies"),
        ("background=research:exploratry", "no workload class 'exploratry' in any of the policies"),
        ("background=research:exploratory:hihg", "no priority level 'hihg' in any of the policies"),
    ],
)
def test_a_map_target_no_policy_has_is_an_option_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], typo: str, fault: str
) -> None:
    maps = ["--map", typo, "--map", "medium=applied:scheduled", "--map", "reserved=release:release"]
    code = main(["whatif", str(WALKTHROUGH), *maps, "--policy", f"today={POLICY}",
                 "--policy", f"again={POLICY}", "--out", str(tmp_path / "o")])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "quotagov whatif: 1 problem(s):"
    assert err.splitlines()[1].startswith(f"  --map {typo}: {fault} (known: ")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_the_terminal_summary_counts_refusals_by_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "renamed" has no team 'release' (the first policy has): not an option fault, but
    # res-1 is refused under it, and the terminal says why
    renamed = tmp_path / "renamed.yaml"
    renamed.write_text(
        POLICY.read_text().replace("\n  release:\n    members:", "\n  ops:\n    members:")
    )
    code = main(["whatif", str(WALKTHROUGH), *README_MAPS, "--policy", f"today={POLICY}",
                 "--policy", f"renamed={renamed}", "--out", str(tmp_path / "o"),
                 "--workers", "1"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert (
        "Refused at submission (jobs by reason)\n"
        "  today: none\n"
        "  renamed: 1 x team: unknown team 'release'\n"
        "Left out by the import: none\n"
    ) in out


def test_warnings_and_regressions_come_before_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # background may not borrow: research's bg-2 waits an hour for bg-1; the environment
    # of 4 has one instance beyond the policies' 3 of limits
    no_borrow = tmp_path / "no-borrow.yaml"
    no_borrow.write_text(
        POLICY.read_text().replace(
            "strategy: LEND_AND_BORROW, borrowLimit: -1",
            "strategy: LEND_AND_BORROW, borrowLimit: 0",
        )
    )
    code = main(
        ["whatif", str(WALKTHROUGH), *MAPS, "--policy", f"today={POLICY}",
         "--policy", f"nob={no_borrow}", "--capacity", "ml.g5.xlarge=4",
         "--out", str(tmp_path / "o"), "--workers", "1"]
    )  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (
        "WARNING policy 'today': its quota shares' capacity limits total 3 x ml.g5.xlarge on "
        "an environment of 4: 1 instance(s) beyond every share's limit"
    )
    assert lines[3:6] == [
        "REGRESSIONS (9, worst first)",
        "  nob vs today: total p95 wait 0 s -> 1 h (from 0; not measured (1 seed))",
        "  nob vs today: team research p95 wait 0 s -> 1 h (from 0; not measured (1 seed))",
    ]
    assert "  nob vs today: team research p95 completion 1 h -> 2 h 5 m (+108 %; " in "\n".join(
        lines
    )
    table = next(i for i, line in enumerate(lines) if line.startswith("figure"))
    assert table > 12
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert len(report["warnings"]) == 2 and len(report["regressions"]) == 9
    assert "Regressions (9, worst first)" in (tmp_path / "o" / "report.html").read_text()
