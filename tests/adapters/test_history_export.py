"""``quotagov history export`` against the simulated Batch: pages, throttling, the lines."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest
from simbatch_support import EPOCH, GPU, QUEUE, share, submit_request

from quotagov.batch_semantics import queue_region
from quotagov.clock import ManualClock
from quotagov.governance.history import export_history
from quotagov.governance.ports import BatchServerError, BatchThrottledError
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.cli import main
from quotagov_tools.commands import history
from quotagov_tools.whatif.importers import from_history
from support.aws import no_aws_credentials

QUICK_JOBS = 120


def _tagged(name: str, share_name: str, team: str, klass: str, **kwargs: Any) -> dict[str, Any]:
    request = submit_request(name, share_name, **kwargs)
    request["tags"].update(
        {
            "quotagov:submissionId": f"sub-{name}",
            "quotagov:team": team,
            "quotagov:workloadClass": klass,
            "quotagov:priorityLevel": "standard",
        }
    )
    if "checkpoint_interval" in kwargs:
        request["tags"]["quotagov:checkpointIntervalSeconds"] = str(kwargs["checkpoint_interval"])
    return request


@pytest.fixture
def batch(clock: ManualClock) -> SimulatedBatch:
    """A queue with 123 finished jobs: p1 (0-600), p2 preempted once, b1, 120 quick ones."""
    b = SimulatedBatch(
        capacity={GPU: 2},
        shares=[share("team_a", 1, "LEND_AND_BORROW"), share("team_b", 1, "LEND")],
        job_queue=QUEUE,
        clock=clock,
        seed=5,
    )
    b.submit_service_job(
        **_tagged(
            "p1", "team_a", "research", "exploratory", run_seconds=600, checkpoint_interval=300
        )
    )
    b.submit_service_job(
        **_tagged(
            "p2", "team_a", "research", "exploratory", run_seconds=600, checkpoint_interval=300
        )
    )
    b.advance(400)  # p2 borrowed team_b's instance and has run 400 s (300 s checkpointed)
    b.submit_service_job(**_tagged("b1", "team_b", "applied", "scheduled", run_seconds=100))
    b.advance(1)  # the pass at 400: b1 reclaims it, p2 is preempted CROSS_SHARE
    for i in range(QUICK_JOBS):
        b.submit_service_job(**submit_request(f"q{i}", "team_b", run_seconds=10))  # untagged
    b.advance(5000)
    return b


def test_export_reads_every_page_and_retries_throttled_calls(batch: SimulatedBatch) -> None:
    batch.fail_next("ListServiceJobs", code="TooManyRequestsException")
    batch.fail_next("DescribeServiceJob", code="TooManyRequestsException", times=2)
    slept: list[float] = []
    out = io.StringIO()
    summary = export_history(batch, QUEUE, out, sleep=slept.append)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert (summary.jobs, summary.pages, summary.throttled) == (123, 2, 3)
    assert slept == [0.5, 0.5, 1.0]  # the list call once; one describe call twice
    listed = [r for op, r in batch.requests if op == "ListServiceJobs"]
    assert len(listed) == 3  # page 1 throttled, page 1, page 2 with its nextToken
    assert "nextToken" in listed[-1] and listed[0]["maxResults"] == 100
    assert listed[0]["filters"] == [{"name": "AFTER_CREATED_AT", "values": ["0"]}]
    assert len({line["jobId"] for line in lines}) == 123
    p2 = next(line for line in lines if line["jobName"] == "p2")
    assert p2["team"] == "research" and p2["workloadClass"] == "exploratory"
    assert p2["priorityLevel"] == "standard" and p2["checkpointIntervalSeconds"] == 300
    assert (p2["instanceType"], p2["instanceCount"]) == (GPU, 1)
    assert p2["status"] == "SUCCEEDED" and p2["preemptions"] == 1
    assert p2["submittedAt"] == EPOCH
    assert len(p2["attempts"]) == 2
    assert p2["attempts"][0] == {"startedAt": EPOCH, "stoppedAt": EPOCH + 400}
    untagged = next(line for line in lines if line["jobName"] == "q0")
    assert untagged["team"] is None and untagged["quotaShareName"] == "team_b"


def test_a_call_still_throttled_after_the_retries_raises(batch: SimulatedBatch) -> None:
    batch.fail_next("ListServiceJobs", code="TooManyRequestsException", times=3)
    out = io.StringIO()
    with pytest.raises(BatchThrottledError):
        export_history(batch, QUEUE, out, sleep=lambda s: None, max_retries=2)
    assert out.getvalue() == ""


def test_since_filters_by_creation_time(batch: SimulatedBatch) -> None:
    out = io.StringIO()
    summary = export_history(batch, QUEUE, out, since=EPOCH + 100, sleep=lambda s: None)
    names = {json.loads(line)["jobName"] for line in out.getvalue().splitlines()}
    assert "p1" not in names and "b1" in names
    assert summary.jobs == 1 + QUICK_JOBS


def test_the_command_writes_a_history_whatif_imports(
    batch: SimulatedBatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "history.jsonl"
    args = argparse.Namespace(job_queue=QUEUE, since=None, out=path, region=None)
    assert history.run(args, batch=batch) == 0
    assert "123 jobs from 2 page(s)" in capsys.readouterr().out
    # the untagged jobs need a --map of their share
    from quotagov_tools.whatif.mapping import parse_maps

    workload = from_history(path, maps=parse_maps(["team_b=applied:scheduled"]))
    assert len(workload.jobs) == 123
    p2 = next(j for j in workload.jobs if j.name == "p2")
    # its last attempt ran the 300 s left after the checkpoint, + the 300 s saved before
    assert p2.runSeconds == 600
    assert (p2.team, p2.workloadClass, p2.priorityLevel) == ("research", "exploratory", "standard")
    assert p2.submittedAt == 0


def test_an_untagged_unmapped_job_is_named(batch: SimulatedBatch, tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    with path.open("w") as handle:
        export_history(batch, QUEUE, handle, sleep=lambda s: None)
    from quotagov_tools.whatif import WorkloadError

    with pytest.raises(WorkloadError) as caught:
        from_history(path, maps={})
    assert "field team: job " in caught.value.faults[0]
    assert "share 'team_b' is not mapped" in caught.value.faults[0]


def test_a_bad_since_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(job_queue=QUEUE, since="yesterday", out=tmp_path / "h", region=None)
    assert history.run(args, batch=object()) == 2
    assert "--since: 'yesterday' is neither ISO 8601 nor epoch seconds" in capsys.readouterr().err
    assert history.parse_since("2026-05-01T00:00:00Z") == 1777593600.0


def test_tags_of_a_job_submitted_around_quotagov_are_not_trusted(
    clock: ManualClock, tmp_path: Path
) -> None:
    # The attacker submits straight to Batch with quotagov's team tags but no
    # submission: the export keeps no team or class, and whatif places the job by share.
    b = SimulatedBatch(
        capacity={GPU: 2}, shares=[share("team_a", 2)], job_queue=QUEUE, clock=clock, seed=1
    )
    forged = submit_request("sneaky", "team_a", run_seconds=50)
    forged["tags"].update({"quotagov:team": "release", "quotagov:workloadClass": "release"})
    b.submit_service_job(**forged)
    b.advance(100)
    path = tmp_path / "h.jsonl"
    with path.open("w") as handle:
        export_history(b, QUEUE, handle, sleep=lambda s: None)
    line = json.loads(path.read_text())
    assert (line["submissionId"], line["team"], line["workloadClass"]) == (None, None, None)
    from quotagov_tools.whatif.mapping import parse_maps

    workload = from_history(path, maps=parse_maps(["team_a=research:exploratory"]))
    assert [(j.name, j.team, j.workloadClass) for j in workload.jobs] == [
        ("sneaky", "research", "exploratory")
    ]


README_QUEUE = "arn:aws:batch:eu-west-1:111122223333:job-queue/ml-gov-queue"


def test_the_readme_command_without_region_or_credentials_exits_2_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a new user: no --region, no AWS_REGION, no credentials
    no_aws_credentials(monkeypatch)
    monkeypatch.chdir(tmp_path)
    args = ["history", "export", "--job-queue", README_QUEUE]
    code = main([*args, "--since", "2026-05-01T00:00:00Z", "--out", "history.jsonl"])
    assert code == 2
    # the Region came from the ARN (else NoRegionError first): the call got as far as signing
    assert capsys.readouterr().err == (
        "quotagov history export: ListServiceJobs: NoCredentialsError: "
        "Unable to locate credentials\n"
    )
    assert list(tmp_path.iterdir()) == []  # no empty history.jsonl, no temporary file


def test_a_queue_name_without_any_region_exits_2_saying_what_to_give(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    no_aws_credentials(monkeypatch)
    out = tmp_path / "history.jsonl"
    assert main(["history", "export", "--job-queue", "ml-gov-queue", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        "quotagov history export: no AWS Region: give --region, or --job-queue as an ARN\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_queue_region_reads_the_arn() -> None:
    assert queue_region(README_QUEUE) == "eu-west-1"
    assert queue_region("arn:aws-cn:batch:cn-north-1:111122223333:job-queue/q") == "cn-north-1"
    assert queue_region("ml-gov-queue") == ""
    assert queue_region("arn:aws:iam::111122223333:role/job-queue/x") == ""


class _FailsOnDescribe:
    """The simulated Batch, whose ``DescribeServiceJob`` fails after ``good`` calls."""

    def __init__(self, batch: SimulatedBatch, good: int) -> None:
        self._batch = batch
        self._good = good

    def __getattr__(self, name: str) -> Any:
        return getattr(self._batch, name)

    def describe_service_job(self, **kwargs: Any) -> dict[str, Any]:
        if self._good == 0:
            raise BatchServerError("DescribeServiceJob", "ServerException", "try again")
        self._good -= 1
        return self._batch.describe_service_job(**kwargs)


def test_an_export_failing_halfway_keeps_the_earlier_file_as_it_was(
    batch: SimulatedBatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "history.jsonl"
    args = argparse.Namespace(job_queue=QUEUE, since=None, out=out, region=None)
    assert history.run(args, batch=batch) == 0
    before = out.read_bytes()
    assert before.count(b"\n") == 3 + QUICK_JOBS
    capsys.readouterr()
    # 50 jobs described and written to the temporary file, then Batch fails
    assert history.run(args, batch=_FailsOnDescribe(batch, good=50)) == 2
    assert capsys.readouterr().err == (
        "quotagov history export: DescribeServiceJob: ServerException: try again\n"
    )
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["history.jsonl"]
