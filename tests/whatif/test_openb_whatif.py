"""``quotagov whatif`` on the shipped OpenB sample (``examples/traces``), end to end."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import matplotlib.image
import pytest

from quotagov.policy import load_policy
from quotagov_tools.cli import main
from quotagov_tools.whatif import WorkloadError, run_policy
from quotagov_tools.whatif.importers import from_csv
from quotagov_tools.whatif.mapping import parse_gpu_types, parse_maps

TRACE = Path(__file__).resolve().parents[2] / "examples/traces/openb_pod_list_gpushare40.csv"
MAPS = [
    "LS=research:exploratory",
    "BE=applied:scheduled",
    "Burstable=release:release",
    "Guaranteed=release:release",
]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _example(name: str) -> Path:
    return Path(str(resources.files("quotagov.examples").joinpath(name)))


def test_a_small_slice_worked_by_hand() -> None:
    # The first 1,096 tasks (file lines 2-1097): 38 Pending and 1,052 CPU-only tasks are
    # dropped; 6 one-GPU tasks remain, run times (deletion - scheduled):
    #   pod-1088 BE 4379 s, pod-1090 LS 31 s, pod-1091 LS 49 s, pod-1092 BE 2026 s,
    #   pod-1093 BE 554 s, pod-1095 LS 892 s                        = 7931 s in all.
    workload = from_csv(TRACE, maps=parse_maps(MAPS), limit=1096)
    assert len(workload.jobs) == 6
    assert workload.notes == {"pendingDropped": 38, "cpuOnlyDropped": 1052}
    assert workload.summary()["instanceSeconds"] == 7931
    # the earliest submission (pod-1091, created at 10105081) is the new 0
    assert workload.jobs[0].name == "openb-pod-1091"
    assert workload.jobs[0].submittedAt == 0
    policy = load_policy(_example("whatif-today.yaml").read_text())
    result = run_policy(policy, workload)
    total = result["total"]
    # 24 instances (the policy's limits) and 6 one-instance jobs: nothing waits
    assert total["waitSeconds"] == {"p50": 0, "p95": 0, "max": 0}
    assert total["usedInstanceSeconds"] == 7931
    # completions sorted: 31, 49, 554, 892, 2026, 4379 -> p50 rank 3, p95 rank 6
    assert total["completionSeconds"] == {"p50": 554, "p95": 4379}
    # the run ends when pod-1095 does: created 11835172, runs 892 s -> 1730983 s after 0
    assert result["durationSeconds"] == 11835172 + 892 - 10105081
    assert total["utilization"] == round(7931 / (24 * 1730983), 6)
    assert result["teams"]["research"]["usedInstanceSeconds"] == 31 + 49 + 892
    assert result["teams"]["applied"]["usedInstanceSeconds"] == 4379 + 2026 + 554


@pytest.mark.slow
def test_whatif_compares_two_policies_on_the_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    code = main(
        [
            "whatif",
            str(TRACE),
            "--format",
            "openb",
            "--compress",
            "50",
            "--limit",
            "4000",
            *(a for m in MAPS for a in ("--map", m)),
            "--policy",
            f"today={_example('whatif-today.yaml')}",
            "--policy",
            f"candidate={_example('whatif-candidate.yaml')}",
            "--out",
            str(out),
            "--workers",
            "2",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report) == {"workload", "warnings", "regressions", "policies", "verdicts"}
    assert report["workload"]["jobs"] > 0
    assert list(report["policies"]) == ["today", "candidate"]
    for entry in report["policies"].values():
        assert {"total", "shares", "teams", "delta"} <= set(entry)
        assert set(entry["shares"]) == {"background", "medium", "reserved"}
        assert set(entry["teams"]) >= {"research", "applied"}
        for m in [entry["total"], *entry["shares"].values(), *entry["teams"].values()]:
            assert set(m["waitSeconds"]) == {"p50", "p95", "max"}
            assert set(m["completionSeconds"]) == {"p50", "p95"}
            assert set(m["preemptions"]) == {"CROSS_SHARE", "IN_SHARE"}
            for key in (
                "utilization",
                "utilizationOfLimit",
                "lostInstanceSeconds",
                "goodput",
                "failedJobs",
                "refusedJobs",
            ):
                assert key in m
            assert {"resubmit", "reclassify", "askOwner"} <= set(m["dispositions"])
    # the first policy's delta is zero; the other's is its difference
    today, candidate = report["policies"]["today"], report["policies"]["candidate"]
    assert today["delta"]["total"]["utilization"]["change"] == 0
    change = candidate["delta"]["total"]["utilization"]["change"]
    assert change == pytest.approx(
        candidate["total"]["utilization"] - today["total"]["utilization"]
    )
    for name in ("wait-cdf.png", "used-capacity.png", "lost-work.png", "completion-by-team.png"):
        data = (out / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE)
        image = matplotlib.image.imread(out / name)
        assert image.shape[0] > 100 and image.shape[1] > 100
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 4
    assert "http://" not in page and "https://" not in page  # self-contained
    # the terminal: the table with h/m/s durations and one verdict per policy
    assert "wait p95" in printed
    assert "today: the baseline" in printed
    assert "candidate vs today: p95 completion" in printed


def test_bad_input_names_the_row_and_field(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    header = TRACE.read_text().splitlines()[0]
    trace.write_text(
        header + "\n"
        "p0,1,1,1,0,,LS,Running,0,100,0\n"
        "p1,1,1,1,0,,Weird,Running,0,100,0\n"
        "p2,1,1,x,0,,LS,Running,0,100,0\n"
        "p3,1,1,3,0,,LS,Running,0,100,0\n"
    )
    with pytest.raises(WorkloadError) as caught:
        from_csv(trace, maps=parse_maps(MAPS), gpu_types=parse_gpu_types(["1=ml.g5.xlarge"]))
    assert caught.value.faults == [
        "row 3, field qos: 'Weird' is not mapped to a team and class (give --map Weird=TEAM:CLASS)",
        "row 4, field num_gpu: 'x' is not a whole number",
        "row 5, field num_gpu: 3 GPUs have no --gpu-type (mapped: 1)",
    ]


def test_an_unknown_column_is_named(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("name,num_gpu,creation_time\np0,1,0\n")
    with pytest.raises(WorkloadError) as caught:
        from_csv(trace, maps=parse_maps(MAPS))
    assert caught.value.faults[0].endswith(
        "unknown column 'qos' (the file has: name, num_gpu, creation_time)"
    )


def test_a_job_larger_than_the_environment_is_a_counted_refusal(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    header = TRACE.read_text().splitlines()[0]
    trace.write_text(header + "\np0,1,1,8,0,,LS,Running,0,100,0\np1,1,1,1,0,,LS,Running,0,50,0\n")
    workload = from_csv(
        trace,
        maps=parse_maps(MAPS),
        gpu_types=parse_gpu_types(["1=ml.g5.xlarge", "8=ml.g5.xlarge*8"]),
    )
    policy = load_policy(_example("whatif-today.yaml").read_text())
    result = run_policy(policy, workload, {"ml.g5.xlarge": 4})
    assert result["total"]["refusedJobs"] == 1
    assert result["refusals"] == {
        "instanceCount: 8 x ml.g5.xlarge is larger than the environment (4 of that type)": 1
    }
    assert result["total"]["jobs"] == {"SUCCEEDED": 1}


def test_command_line_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "whatif",
            str(TRACE),
            "--map",
            "LS=research",
            "--policy",
            "x",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "--policy 'x': expected NAME=FILE" in err
    assert not (tmp_path / "o").exists()


def test_any_csv_with_a_column_mapping(tmp_path: Path) -> None:
    from quotagov_tools.whatif.importers import Columns

    path = tmp_path / "tasks.csv"
    path.write_text(
        "id,queue,gpus,t_submit,t_start,t_end\nx,gpu-a,2,100,160,1060\ny,gpu-b,1,0,0,50\n"
    )
    columns = Columns.parse(
        ["name=id", "group=queue", "gpus=gpus", "submitted=t_submit", "started=t_start",
         "ended=t_end"]
    )  # fmt: skip
    workload = from_csv(
        path,
        columns=columns,
        maps=parse_maps(["gpu-a=research:exploratory", "gpu-b=applied:scheduled:low"]),
        compress=10,
    )
    # sorted by submission, times / 10: y at 0 for 5 s, x at 10 for 90 s on 2 instances
    assert [(j.name, j.submittedAt, j.runSeconds, j.instanceCount) for j in workload.jobs] == [
        ("y", 0, 5, 1),
        ("x", 10, 90, 2),
    ]
    assert workload.jobs[0].priorityLevel == "low"
    with pytest.raises(WorkloadError) as caught:
        Columns.parse(["name=id", "color=red"])
    assert caught.value.faults[-1] == (
        "--column: no column given for group, gpus, submitted, started, ended"
    )


def test_the_readme_command_with_a_team_typo_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the README's OpenB comparison with "reserch": before, 3102 jobs refused, exit 0
    maps = ["LS=reserch:exploratory", *MAPS[1:]]
    code = main(
        ["whatif", str(TRACE), "--format", "openb", "--compress", "50",
         *(a for m in maps for a in ("--map", m)),
         "--policy", f"today={_example('whatif-today.yaml')}",
         "--policy", f"candidate={_example('whatif-candidate.yaml')}",
         "--seeds", "3", "--out", str(tmp_path / "whatif-out")]
    )  # fmt: skip
    assert code == 2
    assert capsys.readouterr().err == (
        "quotagov whatif: 1 problem(s):\n"
        "  --map LS=reserch:exploratory: no team 'reserch' in any of the policies "
        "(known: applied, release, research)\n"
    )
    assert not (tmp_path / "whatif-out").exists()


@pytest.mark.slow
def test_a_generic_csv_read_as_openb_says_so_and_how_to_map_its_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("id,queue,gpus,t_submit,t_start,t_end\nx,gpu-a,1,100,160,1060\n")
    policy = f"today={_example('policy.yaml')}"
    assert main(["whatif", str(tasks), "--policy", policy, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "quotagov whatif: 8 problem(s):"
    assert err[2] == (
        f"  {tasks}: unknown column 'qos' (the file has: id, queue, gpus, t_submit, t_start, t_end)"
    )
    assert err[-1] == (
        f"  {tasks}: read as the OpenB pod list (assumed from the .csv suffix); for any other "
        "CSV give --format csv and --column FIELD=COLUMN for each of name, group, gpus, "
        "submitted, started, ended (optionally phase), e.g. --column name=id --column group=queue"
    )
    # what the hint says works
    columns = ["name=id", "group=queue", "gpus=gpus", "submitted=t_submit", "started=t_start",
               "ended=t_end"]  # fmt: skip
    code = main(
        ["whatif", str(tasks), "--format", "csv", *(a for c in columns for a in ("--column", c)),
         "--map", "gpu-a=research:exploratory", "--policy", policy,
         "--out", str(tmp_path / "o"), "--workers", "1"]
    )  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["policies"]["today"]["total"]["jobs"] == {"SUCCEEDED": 1}


@pytest.mark.slow
def test_a_run_where_every_job_is_refused_still_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: a traceback from the completion plot (no team completed a job)
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("id,queue,gpus,t_submit,t_start,t_end\nx,gpu-a,2,100,160,1060\n")
    columns = ["name=id", "group=queue", "gpus=gpus", "submitted=t_submit", "started=t_start",
               "ended=t_end"]  # fmt: skip
    code = main(
        ["whatif", str(tasks), "--format", "csv", *(a for c in columns for a in ("--column", c)),
         "--map", "gpu-a=research:exploratory", "--policy", f"today={_example('policy.yaml')}",
         "--out", str(tmp_path / "o"), "--workers", "1"]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Workload tasks.csv: 1 job, 1 policy, 1 seed(s)"
    assert (
        "  today: 1 x serviceRequestPayload.ResourceConfig.InstanceCount: 2 exceeds class "
        "'exploratory' maximum of 1\n"
    ) in out
    assert (tmp_path / "o" / "completion-by-team.png").read_bytes().startswith(PNG_SIGNATURE)
