"""The AWS walkthrough scenario, driven through the simulated Batch's API, matches simulate()."""

from __future__ import annotations

import datetime
import json
from importlib import resources
from typing import Any

from simbatch_support import EPOCH, QUEUE, submit_request

from quotagov.adapters.batch_model import response_faults
from quotagov.clock import ManualClock
from quotagov.scheduler import load_scenario, simulate
from quotagov_tools.batch_simulated import SimulatedBatch


def _walkthrough() -> dict[str, Any]:
    text = resources.files("quotagov.examples").joinpath("aws-walkthrough.json").read_text()
    doc: dict[str, Any] = json.loads(text)
    return doc


def _offset(event: dict[str, Any]) -> int:
    moment = datetime.datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%SZ")
    return int(moment.replace(tzinfo=datetime.UTC).timestamp() - EPOCH)


def _drive(clock: ManualClock) -> tuple[SimulatedBatch, list[dict[str, Any]], dict[str, str]]:
    """Submit the walkthrough's jobs at their times and apply its action at t=900."""
    doc = _walkthrough()
    batch = SimulatedBatch(
        capacity=doc["capacity"],
        shares=doc["shares"],
        job_queue=QUEUE,
        clock=clock,
        options=doc["options"],
        seed=11,
    )
    received: list[dict[str, Any]] = []
    batch.subscribe(received.append)
    ids: dict[str, str] = {}
    times = sorted({j["submittedAt"] for j in doc["jobs"]} | {a["at"] for a in doc["actions"]})
    for at in times:
        clock.set(EPOCH + at)
        for action in doc["actions"]:
            if action["at"] == at:
                assert action["type"] == "UpdateServiceJob"
                batch.update_service_job(
                    jobId=ids[action["jobName"]],
                    schedulingPriority=action["schedulingPriority"],
                )
        for job in doc["jobs"]:
            if job["submittedAt"] == at:
                request = submit_request(
                    job["jobName"],
                    job["quotaShareName"],
                    run_seconds=job["runSeconds"],
                    checkpoint_interval=job.get("checkpointIntervalSeconds"),
                    priority=job.get("schedulingPriority", 0),
                )
                ids[job["jobName"]] = batch.submit_service_job(**request)["jobId"]
    batch.advance(6 * 3600)
    return batch, received, ids


# The walkthrough, by the spec's rules (3 x ml.g5.xlarge; background LEND_AND_BORROW with
# in-share preemption, medium LEND, reserved RESERVE; one instance each):
#   0    bg-1 starts within quota, bg-2 borrows medium's idle instance
#   300  res-1 starts within its own quota
#   600  med-1 reclaims its instance: bg-2 (the borrower) is preempted, cross-share
#   900  bg-2 raised to 50 preempts bg-1 (priority 10) in-share and starts
#   1800 med-1 succeeds; bg-1 borrows the lent instance
#   2100 res-1 succeeds; 3900 bg-2 succeeds (600 s saved by its checkpoint)
#   4800 bg-1 succeeds (300 s lost at 900, checkpoint every 600 s)
EXPECTED_EVENTS = [
    (0, "bg-1", "RUNNABLE"),
    (0, "bg-2", "RUNNABLE"),
    (0, "bg-1", "SCHEDULED"),
    (0, "bg-1", "STARTING"),
    (0, "bg-1", "RUNNING"),
    (0, "bg-2", "SCHEDULED"),
    (0, "bg-2", "STARTING"),
    (0, "bg-2", "RUNNING"),
    (300, "res-1", "RUNNABLE"),
    (300, "res-1", "SCHEDULED"),
    (300, "res-1", "STARTING"),
    (300, "res-1", "RUNNING"),
    (600, "med-1", "RUNNABLE"),
    (600, "bg-2", "RUNNABLE"),
    (600, "med-1", "SCHEDULED"),
    (600, "med-1", "STARTING"),
    (600, "med-1", "RUNNING"),
    (900, "bg-1", "RUNNABLE"),
    (900, "bg-2", "SCHEDULED"),
    (900, "bg-2", "STARTING"),
    (900, "bg-2", "RUNNING"),
    (1800, "med-1", "SUCCEEDED"),
    (1800, "bg-1", "SCHEDULED"),
    (1800, "bg-1", "STARTING"),
    (1800, "bg-1", "RUNNING"),
    (2100, "res-1", "SUCCEEDED"),
    (3900, "bg-2", "SUCCEEDED"),
    (4800, "bg-1", "SUCCEEDED"),
]


def test_events_follow_the_walkthrough_and_match_simulate(clock: ManualClock) -> None:
    _, received, _ = _drive(clock)
    got = [(_offset(e), e["detail"]["jobName"], e["detail"]["status"]) for e in received]
    assert got == EXPECTED_EVENTS
    expected = simulate(load_scenario(_walkthrough()))
    # One event per scheduler transition (SUBMITTED -> RUNNABLE gives the RUNNABLE event;
    # Batch sends no SUBMITTED event), in the same order.
    assert got == [(t["at"], t["jobName"], t["to"]) for t in expected["transitions"]]


def test_final_descriptions_match_simulate(clock: ManualClock) -> None:
    batch, _, ids = _drive(clock)
    expected = simulate(load_scenario(_walkthrough()))["jobs"]
    for name, job_id in ids.items():
        described = batch.describe_service_job(jobId=job_id)
        want = expected[name]
        assert described["status"] == want["status"]
        assert len(described["attempts"]) == want["attempts"]
        assert described["startedAt"] == (EPOCH + want["firstStartedAt"]) * 1000
        assert described["stoppedAt"] == (EPOCH + want["stoppedAt"]) * 1000
        summary = described.get("preemptionSummary", {"preemptedAttemptCount": 0})
        assert summary["preemptedAttemptCount"] == len(want["preemptions"])


def test_preemption_events_carry_the_preemption_summary(clock: ManualClock) -> None:
    batch, received, ids = _drive(clock)
    preempted = [
        e
        for e in received
        if e["detail"]["status"] == "RUNNABLE" and "preemptionSummary" in e["detail"]
    ]
    assert [(_offset(e), e["detail"]["jobName"]) for e in preempted] == [
        (600, "bg-2"),
        (900, "bg-1"),
    ]
    bg2 = preempted[0]["detail"]
    med1_arn = batch.describe_service_job(jobId=ids["med-1"])["jobArn"]
    attempt = bg2["preemptionSummary"]["recentPreemptedAttempts"][0]
    assert bg2["preemptionSummary"]["preemptedAttemptCount"] == 1
    assert attempt["startedAt"] == EPOCH * 1000
    assert attempt["stoppedAt"] == (EPOCH + 600) * 1000
    assert (
        attempt["statusReason"] == f"PREEMPTED:CROSS_SHARE - capacity reclaimed for job {med1_arn}"
    )
    assert attempt["serviceResourceId"] == bg2["latestAttempt"]["serviceResourceId"]
    bg1 = preempted[1]["detail"]
    assert bg1["preemptionSummary"]["recentPreemptedAttempts"][0]["statusReason"].startswith(
        "PREEMPTED:IN_SHARE - preempted by higher-priority job "
    )
    assert bg1["schedulingPriority"] == 10
    # bg-2's resumed attempt at 900 runs with the priority set by UpdateServiceJob.
    resumed = [e for e in received if e["detail"]["jobName"] == "bg-2" and _offset(e) == 900]
    assert {e["detail"]["schedulingPriority"] for e in resumed} == {50}


def test_every_event_has_the_eventbridge_envelope(clock: ManualClock) -> None:
    batch, received, _ = _drive(clock)
    assert received == batch.events
    assert len({e["id"] for e in received}) == len(received)
    for event in received:
        assert set(event) == {
            "version", "id", "detail-type", "source", "account", "time", "region",
            "resources", "detail",
        }  # fmt: skip
        assert event["version"] == "0"
        assert event["detail-type"] == "Batch Service Job State Change"
        assert event["source"] == "aws.batch"
        assert (event["account"], event["region"]) == ("111122223333", "eu-west-1")
        detail = event["detail"]
        assert event["resources"] == [detail["jobArn"]]
        assert detail["jobArn"].endswith(f":service-job/{detail['jobId']}")
        assert "tags" not in detail and "serviceRequestPayload" not in detail
        assert detail["quotaShareName"] in {"background", "medium", "reserved"}
        assert detail["capacityUsage"] == [{"capacityUnit": "ml.g5.xlarge", "quantity": 1.0}]
        # the detail is a DescribeServiceJob response without two optional members
        assert response_faults("DescribeServiceJob", detail) == []
