"""The runtime's log of the AWS calls each function's code made, by IAM action."""

from __future__ import annotations

from typing import Any

import pytest

from quotagov_tools.local.actions import (
    BATCH_ACTIONS,
    ActionCall,
    ActionLog,
    ActionRecordingBatch,
    resource_of,
)
from quotagov_tools.local.runtime import LocalRuntime


class FakeBatch:
    """Answers two port calls and has one attribute that is not an API call."""

    clock = "the clock"

    def describe_service_job(self, *, jobId: str) -> dict[str, Any]:
        return {"jobId": jobId, "schedulingPriority": 10}

    def get_job_queue_snapshot(self, *, jobQueue: str) -> dict[str, Any]:
        return {"frontOfQueue": {"jobs": []}, "queue": jobQueue}


def test_every_port_method_is_a_batch_action() -> None:
    assert BATCH_ACTIONS["get_job_queue_snapshot"] == "batch:GetJobQueueSnapshot"
    assert BATCH_ACTIONS["update_service_job"] == "batch:UpdateServiceJob"
    assert BATCH_ACTIONS["list_quota_shares"] == "batch:ListQuotaShares"
    assert len(BATCH_ACTIONS) == 13


def test_calls_are_kept_for_the_running_function_only() -> None:
    running: list[str] = []
    log = ActionLog(lambda: running[-1] if running else None)
    batch = ActionRecordingBatch(FakeBatch(), log)

    assert batch.describe_service_job(jobId="j-1")["schedulingPriority"] == 10  # no function
    running.append("ApplyDecisionsFunction")
    queue = "arn:aws:batch:eu-west-1:111122223333:job-queue/q"
    assert batch.get_job_queue_snapshot(jobQueue=queue)["queue"] == queue
    assert batch.describe_service_job(jobId="j-2")["jobId"] == "j-2"
    log.record("kms:VerifyMac", {"KeyId": "key-1", "Message": b"m"})
    assert batch.clock == "the clock"  # not an API call: passed through, not recorded

    assert log.calls == [
        ActionCall("ApplyDecisionsFunction", "batch:GetJobQueueSnapshot", queue),
        ActionCall("ApplyDecisionsFunction", "batch:DescribeServiceJob", "j-2"),
        ActionCall("ApplyDecisionsFunction", "kms:VerifyMac", "key-1"),
    ]
    assert log.actions() == {
        "ApplyDecisionsFunction": {
            "batch:GetJobQueueSnapshot",
            "batch:DescribeServiceJob",
            "kms:VerifyMac",
        }
    }


def test_the_resource_is_the_first_member_naming_one() -> None:
    assert resource_of({"TableName": "jobs", "Key": {}}) == "jobs"
    assert resource_of({"QueueUrl": "http://q", "MessageBody": "{}"}) == "http://q"
    assert resource_of({"Message": b"m"}) == ""


def test_a_cold_start_needs_a_started_runtime() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        LocalRuntime().cold_start()
