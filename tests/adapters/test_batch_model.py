"""The botocore-model checker catches renamed fields, wrong types, bad enums and sizes."""

from __future__ import annotations

from typing import Any

import pytest

from quotagov.adapters.batch_model import (
    BatchModelError,
    request_faults,
    response_faults,
    validate_request,
    validate_response,
)

SUBMIT: dict[str, Any] = {
    "jobName": "bg-1",
    "jobQueue": "ml-gov-queue",
    "serviceJobType": "SAGEMAKER_TRAINING",
    "serviceRequestPayload": "{}",
    "quotaShareName": "background",
    "retryStrategy": {"attempts": 2, "evaluateOnExit": [{"action": "RETRY"}]},
}

DESCRIBE: dict[str, Any] = {
    "jobId": "j",
    "jobName": "bg-1",
    "jobQueue": "arn:aws:batch:eu-west-1:111122223333:job-queue/q",
    "serviceJobType": "SAGEMAKER_TRAINING",
    "status": "RUNNABLE",
    "createdAt": 1_777_885_000_000,
    "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 1.0}],
    "attempts": [{"serviceResourceId": {"name": "TrainingJobArn", "value": "arn"}, "startedAt": 1}],
}


def test_valid_request_and_response_pass() -> None:
    validate_request("SubmitServiceJob", SUBMIT)
    validate_response("DescribeServiceJob", DESCRIBE)
    # boto3 adds ResponseMetadata to every response; it is not a model member.
    validate_response("DescribeServiceJob", {**DESCRIBE, "ResponseMetadata": {}})
    validate_response("TerminateServiceJob", {})


def test_started_at_is_the_only_exempted_required_member() -> None:
    faults = response_faults("DescribeServiceJob", {"jobId": "j"})
    assert faults == [
        "jobName: required member is missing",
        "jobQueue: required member is missing",
        "serviceJobType: required member is missing",
        "status: required member is missing",
    ]


@pytest.mark.parametrize(
    ("change", "fault"),
    [
        ({"jobname": "x"}, "jobname: unknown member of SubmitServiceJobRequest"),
        ({"serviceJobType": "ECS"}, "serviceJobType: 'ECS' is not one of SAGEMAKER_TRAINING"),
        ({"schedulingPriority": "10"}, "schedulingPriority: expected integer, got str"),
        ({"schedulingPriority": True}, "schedulingPriority: expected integer, got bool"),
        ({"retryStrategy": {}}, "retryStrategy.attempts: required member is missing"),
        (
            {"retryStrategy": {"attempts": 1, "evaluateOnExit": [{"action": "retry"}]}},
            "retryStrategy.evaluateOnExit[0].action: 'retry' is not one of RETRY, EXIT",
        ),
        ({"clientToken": "x" * 65}, "clientToken: 65 characters, the maximum is 64"),
        ({"clientToken": ""}, "clientToken: 0 characters, the minimum is 1"),
        ({"tags": {}}, "tags: 0 entries, the minimum is 1"),
        ({"tags": {"k": "v" * 257}}, "tags['k']: 257 characters, the maximum is 256"),
        ({"preemptionConfiguration": None}, "preemptionConfiguration: null is not a structure"),
    ],
)
def test_request_faults_name_the_member(change: dict[str, Any], fault: str) -> None:
    faults = request_faults("SubmitServiceJob", {**SUBMIT, **change})
    assert fault in faults


def test_missing_required_request_member_is_reported_by_both_checkers() -> None:
    request = {k: v for k, v in SUBMIT.items() if k != "serviceRequestPayload"}
    with pytest.raises(BatchModelError) as caught:
        validate_request("SubmitServiceJob", request)
    faults = caught.value.faults
    assert faults[0] == "serviceRequestPayload: required member is missing"
    assert any(f.startswith("botocore: ") and "serviceRequestPayload" in f for f in faults)
    assert caught.value.operation == "SubmitServiceJob"
    assert caught.value.direction == "request"


@pytest.mark.parametrize(
    ("change", "fault"),
    [
        ({"status": "DONE"}, "status: 'DONE' is not one of SUBMITTED, PENDING, RUNNABLE"),
        ({"createdAt": 1.5}, "createdAt: expected long, got float"),
        (
            {"capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": "1"}]},
            "capacityUsage[0].quantity: expected double, got str",
        ),
        (
            {"attempts": [{"serviceResourceId": {"name": "Arn", "value": "x"}}]},
            "attempts[0].serviceResourceId.name: 'Arn' is not one of TrainingJobArn",
        ),
        ({"preemptionSummary": {"count": 1}}, "preemptionSummary.count: unknown member"),
        ({"attempts": {"a": 1}}, "attempts: expected a list, got dict"),
    ],
)
def test_response_faults_name_the_member(change: dict[str, Any], fault: str) -> None:
    faults = response_faults("DescribeServiceJob", {**DESCRIBE, **change})
    assert any(f.startswith(fault) for f in faults), faults


def test_int_is_accepted_for_double_and_unknown_operation_is_refused() -> None:
    ok = {**DESCRIBE, "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 2}]}
    assert response_faults("DescribeServiceJob", ok) == []
    with pytest.raises(ValueError, match="no operation 'SubmitJobs'"):
        validate_request("SubmitJobs", {})
