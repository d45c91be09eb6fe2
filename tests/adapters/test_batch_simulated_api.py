"""The simulated Batch's API: errors like Batch's, shapes, listing, snapshot, throttling."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pytest
from simbatch_support import (
    EPOCH,
    GPU,
    QUEUE,
    share,
    submit_request,
    training_payload,
)

from quotagov.clock import ManualClock
from quotagov.governance.ports import (
    BatchClientError,
    BatchNotFoundError,
    BatchServerError,
    BatchThrottledError,
)
from quotagov.policy.validation import load_policy
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.simbatch.models import SERVICE_ENVIRONMENT_MAX_RESOURCE
from support.aws import QUEUE_ARN

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def make(clock: ManualClock, capacity: int = 2, **kwargs: Any) -> SimulatedBatch:
    shares = kwargs.pop(
        "shares",
        [
            share("team_a", 1, "LEND_AND_BORROW", in_share="ENABLED"),
            share("team_b", 1, "LEND"),
        ],
    )
    return SimulatedBatch(
        capacity={GPU: capacity}, shares=shares, job_queue=QUEUE, clock=clock, seed=3, **kwargs
    )


def test_submit_returns_real_formats_and_describe_is_complete(clock: ManualClock) -> None:
    batch = make(clock)
    request = submit_request(
        "resnet-017", "team_a", run_seconds=600, priority=40, retries=5,
        retryStrategy={"attempts": 3}, timeoutConfig={"attemptDurationSeconds": 14400},
    )  # fmt: skip
    reply = batch.submit_service_job(**request)
    assert set(reply) == {"jobArn", "jobName", "jobId"}
    assert UUID4.match(reply["jobId"])
    assert reply["jobArn"] == f"arn:aws:batch:eu-west-1:111122223333:service-job/{reply['jobId']}"
    described = batch.describe_service_job(jobId=reply["jobId"])
    assert described["status"] == "RUNNABLE"  # the pass at this instant runs when time moves
    assert described["createdAt"] == EPOCH * 1000
    assert "startedAt" not in described and "attempts" not in described
    clock.advance(1)
    described = batch.describe_service_job(jobId=reply["jobArn"])  # ARNs are accepted too
    assert described["status"] == "RUNNING"
    assert described["jobQueue"] == QUEUE_ARN
    assert described["quotaShareName"] == "team_a"
    assert described["schedulingPriority"] == 40
    assert described["capacityUsage"] == [{"capacityUnit": GPU, "quantity": 1.0}]
    assert described["retryStrategy"] == {"attempts": 3}
    assert described["timeoutConfig"] == {"attemptDurationSeconds": 14400}
    assert described["preemptionConfiguration"] == {"preemptionRetriesBeforeTermination": 5}
    assert described["serviceRequestPayload"] == request["serviceRequestPayload"]
    assert described["tags"] == request["tags"]
    arn = described["latestAttempt"]["serviceResourceId"]["value"]
    assert re.match(
        r"^arn:aws:sagemaker:eu-west-1:111122223333:training-job/AWSBatchresnet-017[0-9a-f]{32}$",
        arn,
    )
    assert described["attempts"] == [
        {
            "serviceResourceId": {"name": "TrainingJobArn", "value": arn},
            "startedAt": EPOCH * 1000,
        }
    ]
    assert described["scheduledAt"] == described["startedAt"] == EPOCH * 1000
    clock.advance(600)
    done = batch.describe_service_job(jobId=reply["jobId"])
    assert (done["status"], done["stoppedAt"]) == ("SUCCEEDED", (EPOCH + 600) * 1000)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"jobQueue": "nope"}, BatchNotFoundError, "Job queue nope does not exist."),
        (
            {"quotaShareName": "ghost"},
            BatchNotFoundError,
            f"Quota share ghost does not exist in job queue {QUEUE}.",
        ),
        (
            {"quotaShareName": None},
            BatchClientError,
            f"quotaShareName: required for job queue {QUEUE}",
        ),
        ({"shareIdentifier": "team_a"}, BatchClientError, "shareIdentifier: job queue"),
        ({"schedulingPriority": 10000}, BatchClientError, "10000 is outside 0-9999"),
        ({"schedulingPriority": -1}, BatchClientError, "-1 is outside 0-9999"),
        ({"retryStrategy": {"attempts": 11}}, BatchClientError, "retryStrategy.attempts"),
        ({"jobName": "has space"}, BatchClientError, "jobName: 'has space'"),
        ({"serviceRequestPayload": "{not json"}, BatchClientError, "not valid JSON"),
        (
            {"serviceRequestPayload": json.dumps({"ResourceConfig": {"InstanceCount": 1}})},
            BatchClientError,
            "serviceRequestPayload.ResourceConfig.InstanceType: required",
        ),
    ],
)
def test_invalid_submissions_raise_client_exception_and_change_nothing(
    clock: ManualClock, change: dict[str, Any], error: type[Exception], message: str
) -> None:
    batch = make(clock)
    request = {
        k: v for k, v in {**submit_request("j", "team_a"), **change}.items() if v is not None
    }
    with pytest.raises(error) as caught:
        batch.submit_service_job(**request)
    assert type(caught.value) is error
    assert isinstance(caught.value, BatchClientError)
    assert caught.value.code == "ClientException"
    assert message in caught.value.message
    assert batch.list_service_jobs(jobQueue=QUEUE, jobStatus="RUNNABLE")["jobSummaryList"] == []


def test_disabled_share_refuses_new_jobs_but_keeps_its_own(clock: ManualClock) -> None:
    batch = make(clock)
    kept = batch.submit_service_job(**submit_request("kept", "team_b"))["jobId"]
    arn = f"{QUEUE_ARN}/quota-share/team_b"
    batch.update_quota_share(quotaShareArn=arn, state="DISABLED")
    with pytest.raises(BatchClientError, match="team_b is DISABLED") as caught:
        batch.submit_service_job(**submit_request("late", "team_b"))
    assert caught.value.code == "ClientException"
    clock.advance(1)
    assert batch.describe_service_job(jobId=kept)["status"] == "RUNNING"


def test_missing_required_member_and_wrong_type_fail_model_validation(clock: ManualClock) -> None:
    batch = make(clock)
    request = submit_request("j", "team_a")
    del request["serviceRequestPayload"]
    with pytest.raises(BatchClientError) as caught:
        batch.submit_service_job(**request)
    assert caught.value.code == "ParamValidationError"
    assert "serviceRequestPayload: required member is missing" in caught.value.message
    with pytest.raises(BatchClientError, match="schedulingPriority: expected integer, got str"):
        batch.submit_service_job(**{**submit_request("j", "team_a"), "schedulingPriority": "5"})


def test_update_and_terminate_refuse_unknown_and_finished_jobs(clock: ManualClock) -> None:
    batch = make(clock)
    job = batch.submit_service_job(**submit_request("short", "team_a", run_seconds=60))
    with pytest.raises(BatchNotFoundError, match="Job missing does not exist"):
        batch.update_service_job(jobId="missing", schedulingPriority=5)
    with pytest.raises(BatchNotFoundError):
        batch.describe_service_job(jobId="missing")
    with pytest.raises(BatchClientError, match="outside 0-9999"):
        batch.update_service_job(jobId=job["jobId"], schedulingPriority=10_000)
    assert batch.update_service_job(jobId=job["jobId"], schedulingPriority=9999) == job
    clock.advance(120)
    assert batch.describe_service_job(jobId=job["jobId"])["status"] == "SUCCEEDED"
    with pytest.raises(BatchClientError, match="is SUCCEEDED; a finished job cannot be updated"):
        batch.update_service_job(jobId=job["jobId"], schedulingPriority=1)
    with pytest.raises(BatchClientError, match="already SUCCEEDED"):
        batch.terminate_service_job(jobId=job["jobId"], reason="late")


def test_terminate_fails_the_job_with_the_reason_and_frees_capacity(clock: ManualClock) -> None:
    batch = make(clock, capacity=1)
    events: list[dict[str, Any]] = []
    batch.subscribe(events.append)
    first = batch.submit_service_job(**submit_request("first", "team_a"))["jobId"]
    second = batch.submit_service_job(**submit_request("second", "team_a"))["jobId"]
    clock.advance(10)
    assert batch.terminate_service_job(jobId=first, reason="owner asked") == {}
    described = batch.describe_service_job(jobId=first)
    assert described["status"] == "FAILED"
    assert described["statusReason"] == "owner asked"
    assert described["isTerminated"] is True
    assert described["attempts"][0]["stoppedAt"] == (EPOCH + 10) * 1000
    clock.advance(1)
    assert batch.describe_service_job(jobId=second)["status"] == "RUNNING"
    failed = [e for e in events if e["detail"]["status"] == "FAILED"]
    assert [e["detail"]["statusReason"] for e in failed] == ["owner asked"]
    assert failed[0]["detail"]["isTerminated"] is True


def test_client_token_replays_identical_requests_and_refuses_changed_ones(
    clock: ManualClock,
) -> None:
    batch = make(clock)
    request = submit_request("j", "team_a", clientToken="gov-req-1")
    first = batch.submit_service_job(**request)
    assert batch.submit_service_job(**request) == first
    jobs = batch.list_service_jobs(jobQueue=QUEUE, filters=[{"name": "JOB_NAME", "values": ["j"]}])
    assert len(jobs["jobSummaryList"]) == 1
    with pytest.raises(BatchClientError, match="already used with a different request"):
        batch.submit_service_job(**{**request, "schedulingPriority": 7})


def test_preemption_retries_exhausted_ends_failed_with_reason_and_event(
    clock: ManualClock,
) -> None:
    batch = make(clock)
    events: list[dict[str, Any]] = []
    batch.subscribe(events.append)
    own = batch.submit_service_job(**submit_request("own", "team_a"))["jobId"]
    borrower = batch.submit_service_job(**submit_request("borrower", "team_a", retries=1))
    clock.advance(100)
    batch.submit_service_job(**submit_request("b1", "team_b", run_seconds=50))
    clock.advance(100)  # b1 reclaims at 100 (preempts borrower once), ends at 150
    clock.advance(100)  # borrower borrowed again at 150
    assert batch.describe_service_job(jobId=borrower["jobId"])["status"] == "RUNNING"
    batch.submit_service_job(**submit_request("b2", "team_b"))
    clock.advance(1)  # second preemption: retries (1) exhausted
    described = batch.describe_service_job(jobId=borrower["jobId"])
    assert described["status"] == "FAILED"
    assert described["statusReason"] == (
        "PREEMPTION_RETRIES_EXHAUSTED - preempted 2 times, preemptionRetriesBeforeTermination is 1"
    )
    assert described["preemptionSummary"]["preemptedAttemptCount"] == 2
    recent = described["preemptionSummary"]["recentPreemptedAttempts"]
    assert [a["stoppedAt"] for a in recent] == [(EPOCH + 300) * 1000, (EPOCH + 100) * 1000]
    assert len(described["attempts"]) == 2
    mine = [e["detail"] for e in events if e["detail"]["jobId"] == borrower["jobId"]]
    assert [d["status"] for d in mine] == [
        "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING",
        "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "FAILED",
    ]  # fmt: skip
    assert mine[4]["preemptionSummary"]["preemptedAttemptCount"] == 1
    assert mine[-1]["statusReason"] == described["statusReason"]
    assert mine[-1]["preemptionSummary"]["preemptedAttemptCount"] == 2
    assert batch.describe_service_job(jobId=own)["status"] == "RUNNING"


def test_misconfigured_jobs_are_held_runnable_with_the_documented_reason(
    clock: ManualClock,
) -> None:
    batch = make(clock, capacity=2)
    no_share_limit = batch.submit_service_job(
        **submit_request("cpu", "team_b", instance_type="ml.m5.xlarge")
    )["jobId"]
    too_big = batch.submit_service_job(**submit_request("big", "team_a", count=3))["jobId"]
    lend_over = batch.submit_service_job(**submit_request("lend", "team_b", count=2))["jobId"]
    clock.advance(60)
    assert batch.describe_service_job(jobId=no_share_limit)["statusReason"] == (
        "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - Service environment(s) associated "
        "with the job queue cannot meet the capacity requirement of the job."
    )
    assert batch.describe_service_job(jobId=too_big)["statusReason"] == (
        SERVICE_ENVIRONMENT_MAX_RESOURCE
    )
    held = batch.describe_service_job(jobId=lend_over)
    assert held["status"] == "RUNNABLE"
    assert held["statusReason"] == (
        "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Quota share team_b cannot meet "
        "the capacity requirement of the job."
    )


def test_share_without_a_limit_for_the_type_holds_the_job_until_one_is_added(
    clock: ManualClock,
) -> None:
    batch = SimulatedBatch(
        capacity={GPU: 2, "ml.p4d.24xlarge": 1},
        shares=[share("team_a", 1)],
        job_queue=QUEUE,
        clock=clock,
    )
    job = batch.submit_service_job(
        **submit_request("p4", "team_a", instance_type="ml.p4d.24xlarge")
    )["jobId"]
    clock.advance(60)
    described = batch.describe_service_job(jobId=job)
    assert described["status"] == "RUNNABLE"
    assert described["statusReason"].startswith(
        "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - Quota share team_a"
    )
    batch.update_quota_share(
        quotaShareArn=f"{QUEUE_ARN}/quota-share/team_a",
        capacityLimits=[
            {"capacityUnit": GPU, "maxCapacity": 1},
            {"capacityUnit": "ml.p4d.24xlarge", "maxCapacity": 1},
        ],
    )
    clock.advance(1)
    described = batch.describe_service_job(jobId=job)
    assert described["status"] == "RUNNING"
    assert "statusReason" not in described


def test_list_service_jobs_semantics_and_pagination(clock: ManualClock) -> None:
    batch = make(clock, capacity=3, shares=[share("team_a", 2, "RESERVE"), share("team_b", 1)])
    ids = []
    for i in range(5):
        ids.append(batch.submit_service_job(**submit_request(f"sweep-{i}", "team_a"))["jobId"])
        clock.advance(1)
    batch.submit_service_job(**submit_request("other", "team_b"))
    clock.advance(1)
    running = batch.list_service_jobs(jobQueue=QUEUE)["jobSummaryList"]  # default: RUNNING
    assert {j["status"] for j in running} == {"RUNNING"}
    assert [j["jobName"] for j in running] == ["other", "sweep-1", "sweep-0"]
    runnable = batch.list_service_jobs(jobQueue=QUEUE, jobStatus="RUNNABLE")["jobSummaryList"]
    assert [j["jobName"] for j in runnable] == ["sweep-4", "sweep-3", "sweep-2"]
    # a name filter ignores jobStatus; trailing * is a case-insensitive prefix
    named = batch.list_service_jobs(
        jobQueue=QUEUE, jobStatus="RUNNING", filters=[{"name": "JOB_NAME", "values": ["SWEEP-*"]}]
    )["jobSummaryList"]
    assert [j["jobName"] for j in named] == [f"sweep-{i}" for i in (4, 3, 2, 1, 0)]
    # QUOTA_SHARE_NAME combines with jobStatus
    share_runnable = batch.list_service_jobs(
        jobQueue=QUEUE,
        jobStatus="RUNNABLE",
        filters=[{"name": "QUOTA_SHARE_NAME", "values": ["team_a"]}],
    )["jobSummaryList"]
    assert [j["jobName"] for j in share_runnable] == ["sweep-4", "sweep-3", "sweep-2"]
    after = batch.list_service_jobs(
        jobQueue=QUEUE,
        filters=[{"name": "AFTER_CREATED_AT", "values": [str(int(EPOCH * 1000) + 2500)]}],
    )["jobSummaryList"]
    assert [j["jobName"] for j in after] == ["other", "sweep-4", "sweep-3"]
    pages: list[list[str]] = []
    request: dict[str, Any] = {
        "jobQueue": QUEUE, "maxResults": 2, "filters": [{"name": "JOB_NAME", "values": ["*"]}],
    }  # fmt: skip
    while True:
        page = batch.list_service_jobs(**request)
        pages.append([j["jobName"] for j in page["jobSummaryList"]])
        if "nextToken" not in page:
            break
        request["nextToken"] = page["nextToken"]
    assert pages == [["other", "sweep-4"], ["sweep-3", "sweep-2"], ["sweep-1", "sweep-0"]]
    summary = running[0]
    assert set(summary) == {
        "jobArn", "jobId", "jobName", "serviceJobType", "status", "createdAt", "scheduledAt",
        "startedAt", "latestAttempt", "capacityUsage", "quotaShareName",
    }  # fmt: skip
    with pytest.raises(BatchClientError, match="only one filter"):
        batch.list_service_jobs(
            jobQueue=QUEUE,
            filters=[{"name": "JOB_NAME", "values": ["a"]}, {"name": "JOB_NAME", "values": ["b"]}],
        )
    with pytest.raises(BatchClientError, match="maxResults: 101"):
        batch.list_service_jobs(jobQueue=QUEUE, maxResults=101)
    with pytest.raises(BatchClientError, match="nextToken"):
        batch.list_service_jobs(jobQueue=QUEUE, nextToken="garbage!")


def test_snapshot_reports_fronts_and_utilization(clock: ManualClock) -> None:
    batch = make(clock, capacity=2, shares=[share("team_a", 1), share("team_b", 1, "LEND")])
    a1 = batch.submit_service_job(**submit_request("a1", "team_a"))
    batch.submit_service_job(**submit_request("a2", "team_a"))
    clock.advance(10)
    a3 = batch.submit_service_job(**submit_request("a3", "team_a", priority=5))
    a4 = batch.submit_service_job(**submit_request("a4", "team_a", priority=50))
    clock.advance(10)
    snapshot = batch.get_job_queue_snapshot(jobQueue=QUEUE_ARN)
    now = (EPOCH + 20) * 1000
    assert snapshot["frontOfQuotaShares"] == {
        "quotaShares": {
            "team_a": [{"jobArn": a4["jobArn"], "earliestTimeAtPosition": (EPOCH + 10) * 1000}],
            "team_b": [],
        },
        "lastUpdatedAt": now,
    }
    assert [j["jobArn"] for j in snapshot["frontOfQueue"]["jobs"]] == [a4["jobArn"], a3["jobArn"]]
    assert snapshot["queueUtilization"] == {
        "totalCapacityUsage": [{"capacityUnit": GPU, "quantity": 2.0}],
        "quotaShareUtilization": {
            "topCapacityUtilization": [
                {
                    "quotaShareName": "team_a",
                    "capacityUsage": [{"capacityUnit": GPU, "quantity": 2.0}],
                }
            ]
        },
        "lastUpdatedAt": now,
    }
    assert batch.describe_service_job(jobId=a1["jobId"])["status"] == "RUNNING"


def test_quota_share_lifecycle(clock: ManualClock) -> None:
    batch = make(clock, shares=[])
    created = batch.create_quota_share(jobQueue=QUEUE_ARN, **share("s1", 2, tags={"cost": "x"}))
    arn = f"{QUEUE_ARN}/quota-share/s1"
    assert created == {"quotaShareName": "s1", "quotaShareArn": arn}
    for i in range(2, 5):
        batch.create_quota_share(jobQueue=QUEUE, **share(f"s{i}", 1, "RESERVE"))
    with pytest.raises(BatchClientError, match="Object already exists"):
        batch.create_quota_share(jobQueue=QUEUE, **share("s1"))
    with pytest.raises(BatchClientError, match="borrowLimit: only valid with LEND_AND_BORROW"):
        batch.create_quota_share(
            jobQueue=QUEUE,
            **{**share("bad", 1, "RESERVE"),
               "resourceSharingConfiguration": {"strategy": "RESERVE", "borrowLimit": 50}},
        )  # fmt: skip
    assert batch.describe_quota_share(quotaShareArn=arn) == {
        "quotaShareName": "s1",
        "quotaShareArn": arn,
        "jobQueueArn": QUEUE_ARN,
        "capacityLimits": [{"capacityUnit": GPU, "maxCapacity": 2}],
        "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW"},
        "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
        "state": "ENABLED",
        "status": "VALID",
        "tags": {"cost": "x"},
    }
    first = batch.list_quota_shares(jobQueue=QUEUE, maxResults=3)
    assert [s["quotaShareName"] for s in first["quotaShares"]] == ["s1", "s2", "s3"]
    assert "tags" not in first["quotaShares"][0]
    rest = batch.list_quota_shares(jobQueue=QUEUE, maxResults=3, nextToken=first["nextToken"])
    assert [s["quotaShareName"] for s in rest["quotaShares"]] == ["s4"]
    assert "nextToken" not in rest
    job = batch.submit_service_job(**submit_request("j", "s1"))["jobId"]
    clock.advance(1)
    with pytest.raises(BatchClientError, match="must be DISABLED before it can be deleted"):
        batch.delete_quota_share(quotaShareArn=arn)
    batch.update_quota_share(quotaShareArn=arn, state="DISABLED")
    assert batch.delete_quota_share(quotaShareArn=arn) == {}
    gone = batch.describe_service_job(jobId=job)
    assert (gone["status"], gone["statusReason"]) == ("FAILED", "Quota share deleted")
    with pytest.raises(BatchNotFoundError, match="does not exist"):
        batch.describe_quota_share(quotaShareArn=arn)
    with pytest.raises(BatchNotFoundError):
        batch.list_quota_shares(jobQueue="nope")


def test_throttle_is_on_the_virtual_clock(clock: ManualClock) -> None:
    batch = make(clock, capacity=1)
    batch.throttle_above(5, operations=["SubmitServiceJob"])
    for i in range(300):  # 5 TPS: one submission every 0.2 virtual seconds
        batch.submit_service_job(**submit_request(f"j{i}", "team_a"))
        clock.advance(0.2)
    for i in range(5):  # a burst of 5 is allowed at one instant ...
        batch.submit_service_job(**submit_request(f"burst{i}", "team_a"))
    with pytest.raises(BatchThrottledError) as caught:  # ... the sixth is not
        batch.submit_service_job(**submit_request("burst5", "team_a"))
    assert (caught.value.code, caught.value.operation) == (
        "TooManyRequestsException",
        "SubmitServiceJob",
    )
    batch.describe_service_job(jobId=batch.events[0]["detail"]["jobId"])  # not throttled
    clock.advance(0.2)
    batch.submit_service_job(**submit_request("burst5", "team_a"))
    names = batch.list_service_jobs(
        jobQueue=QUEUE, filters=[{"name": "JOB_NAME", "values": ["burst*"]}]
    )["jobSummaryList"]
    assert len(names) == 6  # the throttled call created nothing
    batch.throttle_above(None)
    for i in range(20):
        batch.submit_service_job(**submit_request(f"free{i}", "team_a"))


def test_injected_failures_map_like_the_boto3_adapter(clock: ManualClock) -> None:
    batch = make(clock)
    batch.fail_next("SubmitServiceJob")
    batch.fail_next("DescribeServiceJob", code="TooManyRequestsException")
    batch.fail_next("UpdateServiceJob", code="ClientException", message="Job x does not exist")
    with pytest.raises(BatchServerError) as server:
        batch.submit_service_job(**submit_request("j", "team_a"))
    assert server.value.code == "ServerException"
    job = batch.submit_service_job(**submit_request("j", "team_a"))["jobId"]
    with pytest.raises(BatchThrottledError):
        batch.describe_service_job(jobId=job)
    with pytest.raises(BatchNotFoundError):
        batch.update_service_job(jobId=job, schedulingPriority=1)
    assert batch.describe_service_job(jobId=job)["jobName"] == "j"
    assert len(batch.list_service_jobs(jobQueue=QUEUE, jobStatus="RUNNABLE")["jobSummaryList"]) == 1


def test_a_failing_subscriber_does_not_fail_batch_calls(clock: ManualClock) -> None:
    batch = make(clock)
    seen: list[str] = []

    def broken(_event: dict[str, Any]) -> None:
        raise RuntimeError("handler down")

    batch.subscribe(broken)
    unsubscribe = batch.subscribe(lambda e: seen.append(e["detail"]["status"]))
    batch.submit_service_job(**submit_request("j", "team_a"))
    clock.advance(1)
    batch.sync()
    assert seen == ["RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"]
    assert len(batch.delivery_failures) == 4
    unsubscribe()
    batch.terminate_service_job(jobId=batch.events[0]["detail"]["jobId"], reason="stop")
    assert seen == ["RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"]


def test_checkpoint_interval_comes_from_the_hint_only_with_checkpoint_config(
    clock: ManualClock,
) -> None:
    batch = make(
        clock,
        capacity=4,
        shares=[share("team_a", 1), share("team_b", 3, "LEND")],
        default_checkpoint_interval_seconds=7,
    )
    batch.submit_service_job(**submit_request("filler", "team_a"))
    hint_only = submit_request("hint-only", "team_a")
    hint_only["tags"]["quotagov:simCheckpointIntervalSeconds"] = "10"  # no CheckpointConfig
    borrowers = {
        "hint-only": hint_only,
        "config-and-hint": submit_request("config-and-hint", "team_a", checkpoint_interval=10),
        "config-only": {
            **submit_request("config-only", "team_a"),
            "serviceRequestPayload": training_payload("config-only", checkpoint=True),
        },
    }
    ids = {name: batch.submit_service_job(**r)["jobId"] for name, r in borrowers.items()}
    clock.advance(25)
    for i in range(3):  # team_b reclaims its 3 lent instances at t=25
        batch.submit_service_job(**submit_request(f"b{i}", "team_b"))
    clock.advance(1)
    engine = batch.engine(QUEUE)
    assert engine is not None
    lost = {name: engine.job(job_id).lostSeconds for name, job_id in ids.items()}
    # 25 s of RUNNING each: no checkpoint loses all; every 10 s keeps 20; every 7 s keeps 21
    assert lost == {"hint-only": 25, "config-and-hint": 5, "config-only": 4}


def test_built_from_the_example_policy_uses_its_queue_arn_and_shares(clock: ManualClock) -> None:
    text = resources.files("quotagov.examples").joinpath("policy.yaml").read_text()
    policy = load_policy(text)
    batch = SimulatedBatch.from_policy(policy, capacity={GPU: 3}, clock=clock)
    assert batch.job_queue_arn == policy.jobQueue == QUEUE_ARN
    shares = batch.list_quota_shares(jobQueue=policy.jobQueue)["quotaShares"]
    assert [
        (s["quotaShareName"], s["resourceSharingConfiguration"]["strategy"]) for s in shares
    ] == [
        ("background", "LEND_AND_BORROW"),
        ("medium", "LEND"),
        ("reserved", "RESERVE"),
    ]
    job = batch.submit_service_job(**{**submit_request("j", "medium"), "jobQueue": QUEUE_ARN})
    assert job["jobArn"].startswith("arn:aws:batch:eu-west-1:111122223333:service-job/")
    with pytest.raises(ValueError, match="does not match"):
        SimulatedBatch(capacity={GPU: 1}, job_queue=QUEUE_ARN, region="us-east-1")


def test_built_from_a_scenario_has_its_capacity_and_options(clock: ManualClock) -> None:
    path = resources.files("quotagov.examples").joinpath("aws-walkthrough.json")
    batch = SimulatedBatch.from_scenario(path.read_text(), clock=clock, job_queue=QUEUE)
    names = [s["quotaShareName"] for s in batch.list_quota_shares(jobQueue=QUEUE)["quotaShares"]]
    assert names == ["background", "medium", "reserved"]
    for i in range(4):
        batch.submit_service_job(**submit_request(f"j{i}", "background"))
    clock.advance(1)
    running = batch.list_service_jobs(jobQueue=QUEUE)["jobSummaryList"]
    # capacity 3: one own instance, one borrowed from medium; reserved's idle one is not lent
    assert len(running) == 2
