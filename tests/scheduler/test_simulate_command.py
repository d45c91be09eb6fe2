"""``quotagov simulate``: table, JSON, exit 2, determinism."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from quotagov.scheduler import dump_output, load_scenario, simulate
from quotagov_tools.cli import main
from quotagov_tools.commands.simulate import ProgressBar

from .builders import job, scenario, share

WALKTHROUGH = Path(__file__).resolve().parents[2] / "src/quotagov/examples/aws-walkthrough.json"


def test_json_output_is_the_spec_document(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(WALKTHROUGH), "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(doc) == ["jobs", "metrics", "scenario", "transitions"]
    assert doc["scenario"] == "aws-walkthrough"
    assert doc["jobs"]["bg-2"] == {
        "status": "SUCCEEDED",
        "quotaShareName": "background",
        "submittedAt": 0,
        "firstStartedAt": 0,
        "stoppedAt": 3900,
        "attempts": 2,
        "preemptions": [{"at": 600, "kind": "CROSS_SHARE", "forJob": "med-1", "lostSeconds": 0}],
        "lostSeconds": 0,
        "statusReason": None,
    }
    assert doc["transitions"][2] == {
        "at": 0,
        "jobName": "bg-1",
        "from": "RUNNABLE",
        "to": "SCHEDULED",
        "reason": "WITHIN_QUOTA",
    }
    assert sorted(doc["metrics"]["shares"]) == ["background", "medium", "reserved"]


def test_json_output_is_byte_identical_across_runs(capsys: pytest.CaptureFixture[str]) -> None:
    main(["simulate", str(WALKTHROUGH), "--output", "json"])
    first = capsys.readouterr().out
    main(["simulate", str(WALKTHROUGH), "--output", "json"])
    assert capsys.readouterr().out == first
    assert first == dump_output(simulate(load_scenario(WALKTHROUGH)))


def test_float_times_are_stable() -> None:
    doc = scenario(
        1, [share("a", 1, "RESERVE")], [job("a1", "a", 0.1, 0.2), job("a2", "a", 0.1, 1 / 3)]
    )
    out = simulate(load_scenario(json.dumps(doc)))
    assert out["jobs"]["a1"]["stoppedAt"] == 0.3
    assert out["jobs"]["a2"]["stoppedAt"] == 0.633333
    assert dump_output(out) == dump_output(simulate(load_scenario(json.dumps(doc))))


def test_table_output_has_timeline_jobs_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(WALKTHROUGH)]) == 0
    out = capsys.readouterr().out
    assert "Timeline" in out and "Jobs" in out
    # durations for a person: 4800 s is 1 h 20 m; failed jobs are counted
    assert "Per-share summary (1 h 20 m simulated; 0 failed job(s))" in out
    # the scenario's admin action (the escalation of bg-2 at 900 s)
    assert "Admin actions (scenario)" in out
    assert "900    UpdateServiceJob  jobName=bg-2, schedulingPriority=50" in out
    rows = {
        line.split()[0]: line.split()
        for line in out.splitlines()
        if line.startswith(("bg-", "res-", "med-"))
    }
    assert "PREEMPTED_IN_SHARE" in out and "for bg-2, lost 300 s" in out
    timeline = [line.split() for line in out.splitlines() if line.startswith("0 ")]
    assert ["0", "bg-2", "RUNNABLE", "->", "SCHEDULED", "->", "RUNNING", "BORROWED"] in timeline
    background = next(line for line in out.splitlines() if line.startswith("background"))
    assert background.split()[:4] == ["background", "7500", "2700", "0"]
    # bg-1 waited 900 s (15 m) in RUNNABLE after its in-share preemption
    total = next(line for line in out.splitlines() if line.startswith("TOTAL"))
    assert "15 m" in total
    assert rows  # timeline rows per job are present


def test_simulate_runs_the_packaged_walkthrough(capsys: pytest.CaptureFixture[str]) -> None:
    # ``quotagov demo`` is now the end-to-end controller demo (tests/local/test_local_demo.py)
    walkthrough = Path(__file__).resolve().parents[2] / "src/quotagov/examples/aws-walkthrough.json"
    assert main(["simulate", str(walkthrough)]) == 0
    out = capsys.readouterr().out
    assert "Scenario: aws-walkthrough" in out
    assert "IN_SHARE at 900 for bg-2" in out


def test_invalid_scenario_exits_2_with_messages_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "capacity: {ml.g5.xlarge: 1}\n"
        "shares:\n"
        "  - quotaShareName: a\n"
        "    capacityLimits: [{capacityUnit: ml.g5.xlarge, maxCapacity: 1}]\n"
        "    resourceSharingConfiguration: {strategy: LEND, borrowLimit: 10}\n"
        "jobs:\n"
        "  - {jobName: j, quotaShareName: gpu, instanceType: ml.g5.xlarge,\n"
        "     submittedAt: 0, runSeconds: 1}\n"
    )
    assert main(["simulate", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert (
        "shares[0].resourceSharingConfiguration.borrowLimit: only valid with LEND_AND_BORROW"
        in captured.err
    )
    assert "jobs[0].quotaShareName: unknown share 'gpu'" in captured.err


def test_progress_bar_draws_in_place() -> None:
    stream = io.StringIO()
    bar = ProgressBar(stream, width=10)
    bar(5, 10)
    bar(10, 10)
    bar.close()
    assert stream.getvalue() == (
        "\rsimulating [#####-----] 5/10 jobs settled\rsimulating [##########] 10/10 jobs settled\n"
    )


def test_progress_callback_reaches_the_total() -> None:
    doc = scenario(2, [share("a", 2, "RESERVE")], [job(f"j{i}", "a", i, 10) for i in range(20)])
    calls: list[tuple[int, int]] = []
    simulate(
        load_scenario(json.dumps(doc)), progress=lambda done, total: calls.append((done, total))
    )
    assert calls[-1] == (20, 20)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_progress_bar_on_a_terminal_for_large_scenarios(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import quotagov_tools.commands.simulate as command

    doc = scenario(2, [share("a", 2, "RESERVE")], [job(f"j{i}", "a", i, 10) for i in range(30)])
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setattr(command, "PROGRESS_THRESHOLD", 30)
    monkeypatch.setattr(command.sys.stderr, "isatty", lambda: True)
    assert main(["simulate", str(path), "--output", "json"]) == 0
    err = capsys.readouterr().err
    assert err.endswith("\rsimulating [" + "#" * 40 + "] 30/30 jobs settled\n")
    monkeypatch.setattr(command.sys.stderr, "isatty", lambda: False)
    assert main(["simulate", str(path), "--output", "json"]) == 0
    assert capsys.readouterr().err == ""


def test_json_no_transitions_leaves_out_only_the_transitions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["simulate", str(WALKTHROUGH), "--output", "json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert main(["simulate", str(WALKTHROUGH), "--output", "json-no-transitions"]) == 0
    text = capsys.readouterr().out
    del full["transitions"]
    assert text == dump_output(full)


def test_unschedulable_job_exits_2_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {
        "name": "too-big",
        "capacity": {"ml.g5.xlarge": 3},
        "shares": [
            {
                "quotaShareName": "team",
                "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 3}],
                "resourceSharingConfiguration": {"strategy": "LEND"},
            }
        ],
        "jobs": [
            {
                "jobName": "four",
                "quotaShareName": "team",
                "instanceType": "ml.g5.xlarge",
                "instanceCount": 4,
                "runSeconds": 60,
                "submittedAt": 0,
            },
            {
                "jobName": "one",
                "quotaShareName": "team",
                "instanceType": "ml.g5.xlarge",
                "runSeconds": 60,
                "submittedAt": 0,
            },
        ],
    }
    path = tmp_path / "too-big.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["simulate", str(path), "--output", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert (
        "jobs[0].instanceCount: job 'four' can never be admitted: needs 4 ml.g5.xlarge "
        "instances, the service environment has 3" in captured.err
    )
    assert main(["simulate", str(path), "--output", "json", "--allow-unschedulable"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["jobs"]["four"]["status"] == "UNSCHEDULABLE"
    assert out["jobs"]["one"]["status"] == "SUCCEEDED"
    assert out["jobs"]["one"]["firstStartedAt"] == 0


def test_simulate_with_a_policy_shows_admin_actions_and_refusals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The walkthrough's jobs placed into the example policy's teams; the policy routes
    # them (dave's scheduled class may only use medium) and runs its rules in the loop.
    walkthrough = Path(__file__).resolve().parents[2] / "src/quotagov/examples/aws-walkthrough.json"
    policy = Path(__file__).resolve().parents[2] / "src/quotagov/examples/policy.yaml"
    args = [
        "simulate", str(walkthrough), "--policy", str(policy),
        "--map", "background=research:exploratory", "--map", "medium=applied:scheduled",
        "--map", "reserved=release:release",
    ]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Admin actions (the controller's decisions)" in out
    assert "Refused at submission" in out
    assert "team research" in out and "share background" in out
    assert "1 h 20 m simulated" in out
    assert main([*args, "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["total"]["refusedJobs"] == 0
    assert doc["total"]["failedJobs"] == 0
    assert doc["total"]["dispositions"]["resubmit"] == 0
    assert set(doc["teams"]) == {"research", "applied", "release"}


def test_simulate_with_a_policy_and_an_unmapped_share_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    walkthrough = Path(__file__).resolve().parents[2] / "src/quotagov/examples/aws-walkthrough.json"
    policy = Path(__file__).resolve().parents[2] / "src/quotagov/examples/policy.yaml"
    assert main(["simulate", str(walkthrough), "--policy", str(policy)]) == 2
    err = capsys.readouterr().err
    assert "jobs[0].quotaShareName: share 'background' is not mapped" in err


def test_a_policy_given_as_the_scenario_says_how_to_use_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    policy = Path(__file__).resolve().parents[2] / "src/quotagov/examples/policy.yaml"
    assert main(["simulate", str(policy)]) == 2
    err = capsys.readouterr().err
    assert "this is a governance policy, not a scenario" in err
    assert f"quotagov simulate WORKLOAD --policy {policy}" in err


EXAMPLE_POLICY = Path(__file__).resolve().parents[2] / "src/quotagov/examples/policy.yaml"
README_MAPS = [
    "--map", "background=research:exploratory", "--map", "medium=applied:scheduled",
    "--map", "reserved=release:release",
]  # fmt: skip


def test_simulate_with_a_policy_replays_the_scenarios_admin_actions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the README's command: the walkthrough's UpdateServiceJob (bg-2 -> 50 at 900) is
    # replayed, so bg-2 preempts bg-1 IN_SHARE at 900 (900 s run, checkpoint every 600 s:
    # 300 s lost), as in the walkthrough; before, it was dropped without a word
    args = ["simulate", str(WALKTHROUGH), "--policy", str(EXAMPLE_POLICY), *README_MAPS]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert (
        "Scenario admin actions (replayed as an admin's Batch calls)\n"
        "t (s)  action            detail                               outcome\n"
        "-----  ----------------  -----------------------------------  -------\n"
        "900    UpdateServiceJob  jobName=bg-2, schedulingPriority=50  applied\n"
    ) in captured.out
    assert "Left out by the import: none\n" in captured.out
    assert main([*args, "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scenarioActions"] == [
        {"at": 900, "type": "UpdateServiceJob", "jobName": "bg-2", "schedulingPriority": 50,
         "outcome": "applied"}
    ]  # fmt: skip
    assert doc["notes"] == {}
    assert doc["shares"]["background"]["preemptions"] == {"CROSS_SHARE": 1, "IN_SHARE": 1}
    assert doc["shares"]["background"]["lostInstanceSeconds"] == 300


def test_skipped_scenario_actions_are_said_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "skips.json"
    gpu = "ml.g5.xlarge"
    path.write_text(
        json.dumps(
            scenario(
                3,
                [share("background", 1, "LEND_AND_BORROW"), share("gpu", 1, "LEND")],
                [job("a", "background", 0, 100, ckpt=60), job("b", "gpu", 0, 100)],
                [
                    {"at": 50, "type": "UpdateQuotaShare", "quotaShareName": "gpu",
                     "capacityLimits": [{"capacityUnit": gpu, "maxCapacity": 2}]},
                    {"at": 60, "type": "UpdateServiceJob", "jobName": "b",
                     "schedulingPriority": 5},
                    {"at": 200, "type": "TerminateServiceJob", "jobName": "a"},
                ],
            )
        )
    )  # fmt: skip
    # research may not use class release: b is refused at submission
    maps = ["--map", "background=research:exploratory", "--map", "gpu=research:release"]
    assert main(["simulate", str(path), "--policy", str(EXAMPLE_POLICY), *maps]) == 0
    assert capsys.readouterr().err == (
        "quotagov simulate: scenario action UpdateQuotaShare at 50 s skipped: "
        "the policy has no quota share 'gpu'\n"
        "quotagov simulate: scenario action UpdateServiceJob at 60 s skipped: "
        "job 'b' was refused at submission\n"
        "quotagov simulate: scenario action TerminateServiceJob at 200 s skipped: "
        "job 'a' had already ended (SUCCEEDED)\n"
    )


def test_simulate_with_a_policy_and_a_map_class_it_lacks_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    maps = ["--map", "background=research:exploratry", *README_MAPS[2:]]
    assert main(["simulate", str(WALKTHROUGH), "--policy", str(EXAMPLE_POLICY), *maps]) == 2
    assert capsys.readouterr().err == (
        "quotagov simulate: 1 problem(s):\n"
        "  --map background=research:exploratry: no workload class 'exploratry' in the "
        "policy (known: exploratory, release, scheduled)\n"
    )
