"""Every port operation: requests sent and simulated responses fit botocore's batch model."""

from __future__ import annotations

from typing import Any

import pytest
from botocore import xform_name
from simbatch_support import GPU, QUEUE, share, submit_request

from quotagov.adapters import batch_model
from quotagov.adapters.batch_model import BatchModelError, validate_request, validate_response
from quotagov.clock import ManualClock
from quotagov.governance.ports import BatchPort
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.simbatch import service_jobs as sim_models
from support.aws import QUEUE_ARN


def _port_operations() -> dict[str, str]:
    """Port method name -> Batch operation name, from botocore's own naming."""
    by_method = {xform_name(op): op for op in batch_model.batch_service_model().operation_names}
    methods = [m for m in vars(BatchPort) if not m.startswith("_")]
    assert methods, "BatchPort has no methods?"
    return {m: by_method[m] for m in methods}


class Recorder:
    """Calls a SimulatedBatch (with its own checks off) and keeps every request/response."""

    def __init__(self, batch: SimulatedBatch) -> None:
        self.batch = batch
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def __call__(self, method: str, **request: Any) -> dict[str, Any]:
        response: dict[str, Any] = getattr(self.batch, method)(**request)
        self.calls.append((method, request, response))
        return response


def test_every_port_operation_round_trips_through_the_model(clock: ManualClock) -> None:
    batch = SimulatedBatch(
        capacity={GPU: 2}, job_queue=QUEUE, clock=clock, seed=5, check_model=False
    )
    call = Recorder(batch)
    arn = call(
        "create_quota_share",
        jobQueue=QUEUE_ARN,
        **share("team_a", 1, in_share="ENABLED", tags={"owner": "vision"}),
    )["quotaShareArn"]
    call("create_quota_share", jobQueue=QUEUE, **share("team_b", 1, "LEND"))
    call("create_quota_share", jobQueue=QUEUE, **share("spare", 1, "RESERVE", state="DISABLED"))
    low = call(
        "submit_service_job",
        **submit_request(
            "low", "team_a", run_seconds=3600, retries=1, clientToken="tok-1",
            retryStrategy={"attempts": 2, "evaluateOnExit": [{"action": "EXIT",
                                                              "onStatusReason": "*"}]},
            timeoutConfig={"attemptDurationSeconds": 7200},
        ),
    )  # fmt: skip
    borrower = call("submit_service_job", **submit_request("borrower", "team_a", retries=0))
    clock.advance(60)
    call("describe_service_job", jobId=low["jobId"])  # RUNNING
    call("submit_service_job", **submit_request("b", "team_b", run_seconds=60))
    call("submit_service_job", **submit_request("high", "team_a", priority=90))
    clock.advance(30)
    call("describe_service_job", jobId=borrower["jobId"])  # FAILED, retries exhausted
    call("describe_service_job", jobId=low["jobId"])  # preempted in-share, RUNNABLE
    call("update_service_job", jobId=low["jobId"], schedulingPriority=95)
    call("get_job_queue_snapshot", jobQueue=QUEUE)
    [queue] = call("describe_job_queues", jobQueues=[QUEUE])["jobQueues"]
    environments = [e["serviceEnvironment"] for e in queue["serviceEnvironmentOrder"]]
    call("describe_service_environments", serviceEnvironments=environments)
    call("list_service_jobs", jobQueue=QUEUE)
    call("list_service_jobs", jobQueue=QUEUE, jobStatus="FAILED", maxResults=1)
    call(
        "list_service_jobs",
        jobQueue=QUEUE_ARN,
        filters=[{"name": "QUOTA_SHARE_NAME", "values": ["team_a"]}],
    )
    call("terminate_service_job", jobId=low["jobId"], reason="done")
    call("describe_service_job", jobId=low["jobId"])  # FAILED, terminated
    clock.advance(3600)
    call("describe_service_job", jobId=borrower["jobId"])
    call("update_quota_share", quotaShareArn=arn, capacityLimits=[{"capacityUnit": GPU,
                                                                   "maxCapacity": 2}])  # fmt: skip
    call("describe_quota_share", quotaShareArn=arn)
    call("list_quota_shares", jobQueue=QUEUE, maxResults=2)
    spare = f"{QUEUE_ARN}/quota-share/spare"
    call("delete_quota_share", quotaShareArn=spare)

    covered = {method for method, _, _ in call.calls}
    operations = _port_operations()
    assert covered == set(operations)
    for method, request, response in call.calls:
        validate_request(operations[method], request)
        validate_response(operations[method], response)
    statuses = {r["status"] for m, _, r in call.calls if m == "describe_service_job"}
    assert statuses == {"RUNNING", "RUNNABLE", "FAILED"}


def test_the_simulated_batch_fails_loudly_when_a_response_drifts_from_the_model(
    clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = SimulatedBatch(capacity={GPU: 1}, shares=[share("a")], job_queue=QUEUE, clock=clock)
    job = batch.submit_service_job(**submit_request("j", "a"))["jobId"]
    real = sim_models.describe_service_job

    def renamed(job: Any) -> dict[str, Any]:
        out = real(job)
        out["quotaShare"] = out.pop("quotaShareName")  # a renamed field
        return out

    monkeypatch.setattr(sim_models, "describe_service_job", renamed)
    with pytest.raises(BatchModelError) as caught:
        batch.describe_service_job(jobId=job)
    assert caught.value.faults == ["quotaShare: unknown member of DescribeServiceJobResponse"]
