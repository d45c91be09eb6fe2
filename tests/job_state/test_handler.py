"""JobStateFunction: one EventBridge event or an SQS batch; logs, EMF metrics, failures."""

from __future__ import annotations

from typing import Any

import pytest

from quotagov.handlers import job_state
from support.lambda_context import LambdaContext

from .conftest import START, World
from .envelopes import envelope, preempted_twice
from .lambda_support import emf_metrics, sqs_batch

CREATED_MS = int(START * 1000)


def test_single_events_update_the_record_and_emit_metrics(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.clock.set(START + 4000)
    world.record("sub-h1", batch_job_id="batch-h1")
    outcomes = [
        job_state.handler(e, LambdaContext())["outcome"]
        for e in preempted_twice("batch-h1", CREATED_MS)
    ]
    assert outcomes == ["tracked"] * 6
    metrics = emf_metrics(capsys.readouterr().out)
    share = {"quotaShareName": "background", "service": "job-state"}
    preemptions = [m for m in metrics if m[0] == "Preemptions"]
    assert preemptions == [("Preemptions", 1.0, {**share, "kind": "unattributed"})] * 2
    lost = [(v, d) for n, v, d in metrics if n == "LostInstanceSeconds"]
    assert lost == [(300.0, share), (300.0, share)]
    first = [(v, d) for n, v, d in metrics if n == "SubmissionToFirstStart"]
    assert first == [(60.0, share)]
    team = {**share, "team": "research"}
    by_team = [(v, d) for n, v, d in metrics if n == "PreemptionsByTeam"]
    assert by_team == [(1.0, {**team, "kind": "unattributed"})] * 2
    # 300 instance-seconds on ml.g5.xlarge (1 GPU each): 1/12 GPU-hour per preemption
    gpu_hours = [(v, d) for n, v, d in metrics if n == "LostGpuHours"]
    assert gpu_hours == [(pytest.approx(300 / 3600), team)] * 2
    dispositions = [d for n, _, d in metrics if n == "Dispositions"]
    assert dispositions == [
        {"dispositionType": "reclassify", "trigger": "retries-exhausted", "service": "job-state"}
    ]


def test_duplicates_emit_no_metrics_twice(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.clock.set(START + 4000)
    world.record("sub-h2", batch_job_id="batch-h2")
    events = preempted_twice("batch-h2", CREATED_MS)
    for e in events + events:
        job_state.handler(e, LambdaContext())
    names = [n for n, _, _ in emf_metrics(capsys.readouterr().out)]
    assert names.count("Preemptions") == 2
    assert names.count("Dispositions") == 1
    assert names.count("SubmissionToFirstStart") == 1


def test_a_malformed_event_alone_is_logged_with_its_reason_and_acknowledged(
    world: World, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    bad = envelope("x", "RUNNING", CREATED_MS, created_ms=CREATED_MS)
    del bad["detail"]["jobId"]
    result = job_state.handler(bad, LambdaContext())
    assert result == {"outcome": "malformed", "reason": "detail.jobId: Field required"}
    assert [r.reason for r in caplog.records if r.levelname == "ERROR"] == [  # type: ignore[attr-defined]
        "detail.jobId: Field required"
    ]
    out = capsys.readouterr().out
    assert ("MalformedEvents", 1.0) in [(n, v) for n, v, _ in emf_metrics(out)]


def test_a_malformed_record_does_not_fail_the_other_records_of_the_batch(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    world.clock.set(START + 4000)
    world.record("sub-h3", batch_job_id="batch-h3")
    events = preempted_twice("batch-h3", CREATED_MS)
    unknown_status = envelope("batch-h3", "PAUSED", CREATED_MS, created_ms=CREATED_MS)
    bodies: list[Any] = [*events[:3], unknown_status, "not json", *events[3:]]
    response = job_state.handler(sqs_batch(bodies), LambdaContext())
    assert response == {
        "batchItemFailures": [{"itemIdentifier": "msg-3"}, {"itemIdentifier": "msg-4"}]
    }
    item = world.store.get("sub-h3")
    assert item is not None
    assert item["jobState"]["status"] == "FAILED"
    assert item["jobState"]["preemptionCount"] == 2
    assert item["disposition"]["status"] == "applied"
    reasons = [r.reason for r in caplog.records if r.levelname == "ERROR"]  # type: ignore[attr-defined]
    assert reasons[0].startswith("detail.status: Input should be 'SUBMITTED'")
    assert reasons[1].startswith("body: not JSON")


def test_unknown_extra_fields_are_tolerated(world: World) -> None:
    world.clock.set(START + 4000)
    world.record("sub-h4", batch_job_id="batch-h4")
    event = envelope(
        "batch-h4",
        "RUNNABLE",
        CREATED_MS + 5000,
        created_ms=CREATED_MS,
        extra={"newMember": {"nested": [1, 2]}, "isTerminated": False},
    )
    event["brandNewEnvelopeKey"] = "x"
    assert job_state.handler(event, LambdaContext())["outcome"] == "tracked"


def test_foreign_job_events_are_counted(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.clock.set(START + 4000)
    result = job_state.handler(
        envelope("someone-elses", "RUNNING", CREATED_MS + 9000, created_ms=CREATED_MS),
        LambdaContext(),
    )
    assert result["outcome"] == "foreign"
    assert ("ForeignJobEvents", 1.0) in [(n, v) for n, v, _ in emf_metrics(capsys.readouterr().out)]


@pytest.mark.parametrize(
    ("extra", "preemption_count"),
    [
        ({"attempts": None}, 0),
        ({"capacityUsage": None}, 0),
        ({"preemptionSummary": {"preemptedAttemptCount": 1, "recentPreemptedAttempts": None}}, 1),
        ({"preemptionSummary": None}, 0),
        ({"schedulingPriority": None, "quotaShareName": None}, 0),
        ({"tags": None, "unknownNew": {"a": [1, 2]}}, 0),
    ],
    ids=["attempts", "capacityUsage", "recentPreemptedAttempts", "summary", "scalars", "extra"],
)
def test_null_optional_members_are_tracked_not_dropped(
    world: World, extra: dict[str, Any], preemption_count: int
) -> None:
    world.clock.set(START + 100)
    world.record("sub-h5", batch_job_id="batch-h5")
    event = envelope("batch-h5", "RUNNABLE", CREATED_MS + 5000, created_ms=CREATED_MS, extra=extra)
    assert job_state.handler(event, LambdaContext())["outcome"] == "tracked"
    item = world.store.get("sub-h5")
    assert item is not None
    assert item["jobState"]["status"] == "RUNNABLE"
    assert item["jobState"]["preemptionCount"] == preemption_count
