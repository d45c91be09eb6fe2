"""``POST /jobs`` refuses a job larger than the service environment, with the numbers.

The environment's capacity comes from ``DescribeJobQueues`` + ``DescribeServiceEnvironments``
through the Batch port (here the simulated Batch: 3 x ml.g5.xlarge), cached for five
minutes; when Batch cannot tell, the check is skipped (logged), never a refusal.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotagov import composition
from quotagov.adapters.dynamodb_notifications import NOTIFY_PREFIX
from quotagov.governance.model.job import SubmissionState
from quotagov.governance.ports import BatchClientError
from quotagov.governance.submission.capacity import EnvironmentCapacity
from support.principals import ALICE

from .api import post_jobs
from .conftest import Stack, policy_text, submission, training_payload
from .sqs_driver import queue_depth


def _wide(count: int) -> dict[str, Any]:
    payload = training_payload()
    payload["ResourceConfig"]["InstanceCount"] = count
    return submission(serviceRequestPayload=payload)


@pytest.fixture
def wide_policy(stack: Stack, batch: Any) -> Any:
    """The example policy with classes allowing up to 8 instances."""
    stack.put_policy(policy_text().replace("maxInstanceCount: 1", "maxInstanceCount: 8"))
    return batch


def test_a_job_larger_than_the_environment_is_refused_with_the_numbers(
    stack: Stack, wide_policy: Any
) -> None:
    """4 instances on a 3-instance environment: background (borrow -1) and medium
    (LEND, limit 1) both refuse; 422 with each reason; nothing queued, no service job."""
    status, reply = post_jobs(_wide(4), principal=ALICE)
    assert status == 422
    assert reply["reasons"] == [
        "serviceRequestPayload.ResourceConfig.InstanceCount: 4 instances of ml.g5.xlarge "
        "exceed what the job queue's service environment has (3, "
        "DescribeServiceEnvironments): Batch would hold the job RUNNABLE forever",
        "serviceRequestPayload.ResourceConfig.InstanceCount: 4 instances of ml.g5.xlarge "
        "exceed what share 'medium' can ever hold (1: maxCapacity 1, strategy LEND)",
    ]
    items = stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]
    records = [i for i in items if not i["pk"]["S"].startswith(NOTIFY_PREFIX)]  # the DM's log
    assert [i["state"]["S"] for i in records] == [SubmissionState.REFUSED.value]
    assert queue_depth(stack) == (0, 0)
    assert wide_policy.list_service_jobs(jobQueue=stack.settings.job_queue)["jobSummaryList"] == []


def test_a_job_the_environment_can_hold_is_accepted(stack: Stack, wide_policy: Any) -> None:
    status, reply = post_jobs(_wide(3), principal=ALICE)
    assert status == 202 and reply["quotaShareName"] == "background"


def test_the_capacity_is_read_once_per_five_minutes(stack: Stack, wide_policy: Any) -> None:
    calls: list[str] = []
    real = wide_policy.describe_service_environments

    def counted(**request: Any) -> dict[str, Any]:
        calls.append(json.dumps(request))
        return real(**request)

    wide_policy.describe_service_environments = counted
    post_jobs(_wide(4), principal=ALICE)
    post_jobs(_wide(4), principal=ALICE)
    assert len(calls) == 1
    stack.clock.advance(301)
    post_jobs(_wide(4), principal=ALICE)
    assert len(calls) == 2


def test_when_batch_cannot_tell_the_check_is_skipped(
    stack: Stack, wide_policy: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def denied(**request: Any) -> dict[str, Any]:
        raise BatchClientError("DescribeJobQueues", "AccessDeniedException", "not allowed")

    wide_policy.describe_job_queues = denied
    status, _ = post_jobs(_wide(4), principal=ALICE)
    assert status == 202  # background can borrow without cap; Batch holds the rest
    assert "cannot read the service environment" in caplog.text


def test_capacity_sums_the_queue_environments_and_skips_unknown_queues(
    stack: Stack, wide_policy: Any
) -> None:
    capacity = EnvironmentCapacity(lambda: wide_policy, stack.clock)
    assert capacity.of(stack.settings.job_queue) == {"ml.g5.xlarge": 3}
    assert capacity.of("no-such-queue") is None
    assert composition.current(composition.JobsApi).environment_capacity.of(
        stack.settings.job_queue
    ) == {"ml.g5.xlarge": 3}
