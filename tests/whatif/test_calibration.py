"""``quotagov whatif calibrate``: a history replayed under the policy in force, job by job.

Hand-made histories (fast) under the two-share test policy, and the history the local
runtime exports after the demo (slow): replayed exactly, then with one job's start moved.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from quotagov.policy import Policy
from quotagov_tools.cli import main
from quotagov_tools.whatif import WorkloadError
from quotagov_tools.whatif.calibration import UNEXPLAINED, calibrate, read_history
from support.whatif import GPU, small_policy

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "src/quotagov/examples/policy.yaml"
T0 = 1_777_885_200.0


def _line(name: str, share: str, team: str, klass: str, **kw: Any) -> dict[str, Any]:
    attempts = kw.pop("attempts")
    line = {
        "jobName": name,
        "jobId": f"id-{name}",
        "submissionId": f"sub-{name}",
        "status": kw.pop("status", "SUCCEEDED"),
        "statusReason": kw.pop("statusReason", None),
        "team": team,
        "workloadClass": klass,
        "priorityLevel": "standard",
        "quotaShareName": share,
        "schedulingPriority": kw.pop("priority", 10),
        "instanceType": GPU,
        "instanceCount": 1,
        "submittedAt": T0 + kw.pop("submitted", 0),
        "attempts": [
            {"startedAt": T0 + a, "stoppedAt": None if b is None else T0 + b} for a, b in attempts
        ],
        "preemptions": kw.pop("preemptions", 0),
        "checkpointIntervalSeconds": kw.pop("checkpoint", 300.0),
    }
    line["startedAt"] = line["attempts"][0]["startedAt"] if attempts else None
    line["stoppedAt"] = line["attempts"][-1]["stoppedAt"] if attempts else None
    return line


def _contention(move_a1: float = 0) -> list[dict[str, Any]]:
    """The contention of the what-if tests as Batch ran it on 2 instances: r1 in bg
    (0-1000 s), r2 borrows med at 0, is preempted CROSS_SHARE at 100 by a1 (med,
    100-600 s), runs again 600-1600 s (nothing checkpointed: 1000 s of work left);
    r3, submitted at 900 s, starts at 1000 s in bg and is running at the export (1700 s);
    an ``apiCall`` line for a job outside the file changes nothing."""
    return [
        _line("r1", "bg", "r", "exp", attempts=[(0, 1000)]),
        _line("r2", "bg", "r", "exp", attempts=[(0, 100), (600, 1600)], preemptions=1),
        _line(
            "a1", "med", "a", "own", submitted=100, attempts=[(100 + move_a1, 600)],
            checkpoint=None,
        ),
        _line("r3", "bg", "r", "exp", submitted=900, attempts=[(1000, None)], status="RUNNING"),
        {"record": "apiCall", "eventName": "UpdateServiceJob", "eventTime": T0 + 1700,
         "requestParameters": {"jobId": "id-nobody", "schedulingPriority": 5}},
    ]  # fmt: skip


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _policy() -> Policy:
    return small_policy(retries=None)


def test_a_history_batch_made_replays_exactly(tmp_path: Path) -> None:
    history = read_history(_write(tmp_path / "h.jsonl", _contention()), maps={})
    assert history.end == 1700
    doc = calibrate(history, _policy(), {GPU: 2})
    assert doc["exact"] is True and doc["worst"] == []
    assert (doc["jobs"], doc["compared"]) == (4, 4)
    assert doc["startErrorSeconds"] == {"p50": 0, "p95": 0, "max": 0}
    assert doc["endErrorSeconds"] == {"p50": 0, "p95": 0, "max": 0}
    assert (doc["samePreemptions"], doc["sameFinalState"]) == (1, 1)
    rows = {r["jobName"]: r for r in doc["rows"]}
    assert rows["r2"]["preemptions"] == [1, 1]
    assert rows["r2"]["endReplay"] == 1600
    # still running at the export: compared as RUNNING, with no end
    assert rows["r3"]["finalState"] == ["RUNNING", "RUNNING"]
    assert rows["r3"]["endErrorSeconds"] is None and rows["r3"]["startErrorSeconds"] == 0


def test_a_moved_start_names_the_job_and_its_error(tmp_path: Path) -> None:
    # a1 edited to start 60 s later than Batch could have started it
    history = read_history(_write(tmp_path / "h.jsonl", _contention(move_a1=60)), maps={})
    doc = calibrate(history, _policy(), {GPU: 2})
    assert doc["exact"] is False
    first = doc["worst"][0]
    assert first["jobName"] == "a1"
    assert first["startErrorSeconds"] == -60
    assert first["reason"] == UNEXPLAINED
    assert first["divergesAt"] == 100
    # a1 ran 440 s in the history: 500 - 60 s of work replayed, so its end moves too
    assert first["endErrorSeconds"] == -60
    assert doc["startErrorSeconds"]["max"] == 60


def test_a_priority_raised_by_a_call_the_history_lacks_is_named(tmp_path: Path) -> None:
    lines = _contention(move_a1=60)
    lines[2]["schedulingPriority"] = 50  # ended at 50, and no UpdateServiceJob line
    doc = calibrate(read_history(_write(tmp_path / "h.jsonl", lines), maps={}), _policy(), {GPU: 2})
    assert doc["worst"][0]["reason"] == (
        "its schedulingPriority ended at 50, the replay's is 10: an UpdateServiceJob "
        "the history does not carry"
    )


def test_every_fault_of_a_history_is_listed(tmp_path: Path) -> None:
    untagged = _line("q", "med", "", "", attempts=[(0, 5)])
    untagged["team"] = untagged["workloadClass"] = None
    path = tmp_path / "h.jsonl"
    path.write_text(
        "not json\n"
        + json.dumps({"jobName": "x", "attempts": []}) + "\n"
        + json.dumps(untagged) + "\n"
    )  # fmt: skip
    with pytest.raises(WorkloadError) as caught:
        read_history(path, maps={})
    assert caught.value.faults == [
        "line 1: not a JSON object",
        "line 2, field instanceType: missing",
        "line 2, field instanceCount: missing",
        "line 2, field submittedAt: missing",
    ]
    lines = [untagged]
    with pytest.raises(WorkloadError) as caught:
        read_history(_write(path, lines), maps={})
    assert caught.value.faults == [
        "line 1, field team: job 'q' has no quotagov tags and its share 'med' is not "
        "mapped (give --map SHARE=TEAM:CLASS)"
    ]


@pytest.fixture(scope="module")
def demo_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The local runtime's history after the demo (``quotagov demo --history-out``)."""
    from quotagov_tools.commands.demo import write_history
    from quotagov_tools.local.demo_story import Demo
    from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

    path = tmp_path_factory.mktemp("demo") / "history.jsonl"
    with contextlib.redirect_stdout(io.StringIO()):
        runtime = LocalRuntime(RuntimeOptions(extra_env={"POWERTOOLS_LOG_LEVEL": "WARNING"}))
        runtime.start()
        try:
            assert Demo(runtime, echo=None).run().ok
            write_history(runtime, path)
        finally:
            runtime.stop()
    return path


@pytest.mark.slow
def test_the_demo_history_replays_with_error_zero(
    demo_history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [json.loads(line) for line in demo_history.read_text().splitlines()]
    calls = [(c["eventName"], c["requestParameters"]) for c in lines if c.get("record")]
    # the escalation's priority raise and the admin's two capacity changes
    assert [name for name, _ in calls] == [
        "UpdateServiceJob",
        "UpdateQuotaShare",
        "UpdateQuotaShare",
    ]
    assert calls[0][1]["schedulingPriority"] == 50
    out = tmp_path / "cal"
    code = main(
        ["whatif", "calibrate", str(demo_history), "--policy", str(POLICY), "--out", str(out)]
    )
    assert code == 0
    doc = json.loads((out / "calibration.json").read_text())
    assert (out / "calibration.png").read_bytes()[:4] == b"\x89PNG"
    assert doc["exact"] is True and doc["jobs"] == 8
    assert doc["startErrorSeconds"]["max"] == 0 and doc["endErrorSeconds"]["max"] == 0
    assert (doc["samePreemptions"], doc["sameFinalState"]) == (1, 1)
    rows = {r["jobName"]: r for r in doc["rows"]}
    assert rows["bg-1"]["finalState"] == ["FAILED", "FAILED"]  # preempted twice, retries 1
    assert rows["bg-1"]["preemptions"] == [2, 2]
    assert rows["bg-1-r1"]["finalState"] == ["RUNNING", "RUNNING"]  # the reclassified successor
    assert "exact, every job as it happened" in capsys.readouterr().out


@pytest.mark.slow
def test_the_demo_history_with_a_moved_start_and_the_fidelity_section(
    demo_history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [json.loads(line) for line in demo_history.read_text().splitlines()]
    for line in lines:
        if line.get("jobName") == "res-1":
            line["startedAt"] += 120
            line["attempts"][0]["startedAt"] += 120
    moved = _write(tmp_path / "moved.jsonl", lines)
    code = main(
        ["whatif", "calibrate", str(moved), "--policy", str(POLICY), "--out", str(tmp_path / "c")]
    )
    assert code == 0
    doc = json.loads((tmp_path / "c" / "calibration.json").read_text())
    assert doc["worst"][0]["jobName"] == "res-1"
    assert doc["worst"][0]["startErrorSeconds"] == -120
    printed = capsys.readouterr().out
    assert "res-1: start -120 s, end -120 s: no known cause" in printed
    # a what-if report made from the history carries the same figures
    code = main(["whatif", str(demo_history), "--policy", f"today={POLICY}",
                 "--out", str(tmp_path / "w"), "--workers", "1"])  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "w" / "report.json").read_text())
    assert report["fidelity"]["exact"] is True and report["fidelity"]["policy"] == "today"
    assert report["workload"]["notes"]["apiCallsNotReplayed"] == 3
    assert "Fidelity (the history replayed under the first policy" in capsys.readouterr().out
    assert (
        "Fidelity (the replay against what happened)"
        in (tmp_path / "w" / "report.html").read_text()
    )
