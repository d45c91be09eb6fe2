"""The boto3 Batch adapter: exact requests (Stubber), error mapping, retries, wiring."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import EndpointConnectionError, ParamValidationError
from botocore.stub import Stubber

from quotagov.adapters.batch_boto3 import Boto3Batch, make_batch_client, map_client_error
from quotagov.adapters.batch_model import validate_request, validate_response
from quotagov.adapters.batch_pages import iter_quota_shares, iter_service_jobs
from quotagov.governance.ports import (
    BatchClientError,
    BatchNotFoundError,
    BatchServerError,
    BatchThrottledError,
)
from quotagov.settings import Settings
from quotagov.wiring import Services
from support.aws import ACCOUNT, QUEUE_ARN, REGION
from support.payloads import training_job_request

JOB_ID = "9e1c2b7a-41d0-4f5b-8a66-3c2d1e0f7a55"
JOB_ARN = f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/{JOB_ID}"
SHARE_ARN = f"{QUEUE_ARN}/quota-share/team_vision"

PAYLOAD = json.dumps(
    training_job_request(
        "resnet-sweep-017",
        instance_count=2,
        volume_gb=None,
        role_arn=f"arn:aws:iam::{ACCOUNT}:role/sm-exec-team-vision",
        image="img:2.4",
        output_path="s3://bucket/out/",
        max_runtime_seconds=14400,
    )
)


def _session() -> boto3.Session:
    return boto3.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION
    )


@pytest.fixture
def stubbed() -> Iterator[tuple[Boto3Batch, Stubber]]:
    client = make_batch_client(region_name=REGION, max_attempts=3, session=_session())
    with Stubber(client) as stubber:
        yield Boto3Batch(client), stubber
        stubber.assert_no_pending_responses()


def test_client_uses_adaptive_retries() -> None:
    client = make_batch_client(region_name=REGION, max_attempts=5, session=_session())
    # botocore keeps max_attempts (retries) as total_max_attempts (sends, first included).
    assert client.meta.config.retries == {"mode": "adaptive", "total_max_attempts": 6}
    with pytest.raises(ValueError, match="max_attempts"):
        make_batch_client(region_name=REGION, max_attempts=-1, session=_session())


def test_submit_sends_exactly_the_request_and_returns_the_response_members(
    stubbed: tuple[Boto3Batch, Stubber],
) -> None:
    batch, stubber = stubbed
    request: dict[str, Any] = {
        "jobName": "team-vision-resnet-sweep-017",
        "jobQueue": QUEUE_ARN,
        "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": PAYLOAD,
        "quotaShareName": "team_vision",
        "schedulingPriority": 40,
        "preemptionConfiguration": {"preemptionRetriesBeforeTermination": 5},
        "retryStrategy": {"attempts": 3},
        "tags": {"requester": "U07EXAMPLE"},
        "clientToken": "gov-req-7f3a9c2e",
    }
    validate_request("SubmitServiceJob", request)
    reply = {"jobArn": JOB_ARN, "jobName": "team-vision-resnet-sweep-017", "jobId": JOB_ID}
    stubber.add_response("submit_service_job", reply, expected_params=request)
    result = batch.submit_service_job(**request)
    assert result == reply  # no ResponseMetadata
    validate_response("SubmitServiceJob", result)


def test_update_terminate_and_quota_share_calls_send_exact_members(
    stubbed: tuple[Boto3Batch, Stubber],
) -> None:
    batch, stubber = stubbed
    stubber.add_response(
        "update_service_job",
        {"jobArn": JOB_ARN, "jobName": "j", "jobId": JOB_ID},
        expected_params={"jobId": JOB_ID, "schedulingPriority": 9999},
    )
    stubber.add_response(
        "terminate_service_job", {}, expected_params={"jobId": JOB_ID, "reason": "owner asked"}
    )
    create = {
        "quotaShareName": "team_vision",
        "jobQueue": QUEUE_ARN,
        "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 4}],
        "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 150},
        "preemptionConfiguration": {"inSharePreemption": "ENABLED"},
    }
    stubber.add_response(
        "create_quota_share",
        {"quotaShareName": "team_vision", "quotaShareArn": SHARE_ARN},
        expected_params=create,
    )
    stubber.add_response(
        "update_quota_share",
        {"quotaShareName": "team_vision", "quotaShareArn": SHARE_ARN},
        expected_params={"quotaShareArn": SHARE_ARN, "state": "DISABLED"},
    )
    stubber.add_response("delete_quota_share", {}, expected_params={"quotaShareArn": SHARE_ARN})
    stubber.add_response(
        "get_job_queue_snapshot",
        {"frontOfQuotaShares": {"quotaShares": {"team_vision": []}, "lastUpdatedAt": 1}},
        expected_params={"jobQueue": QUEUE_ARN},
    )
    assert batch.update_service_job(jobId=JOB_ID, schedulingPriority=9999)["jobId"] == JOB_ID
    assert batch.terminate_service_job(jobId=JOB_ID, reason="owner asked") == {}
    assert batch.create_quota_share(**create)["quotaShareArn"] == SHARE_ARN
    assert batch.update_quota_share(quotaShareArn=SHARE_ARN, state="DISABLED") == {
        "quotaShareName": "team_vision",
        "quotaShareArn": SHARE_ARN,
    }
    assert batch.delete_quota_share(quotaShareArn=SHARE_ARN) == {}
    snapshot = batch.get_job_queue_snapshot(jobQueue=QUEUE_ARN)
    assert snapshot["frontOfQuotaShares"]["quotaShares"] == {"team_vision": []}


@pytest.mark.parametrize(
    ("code", "status", "message", "expected"),
    [
        ("ClientException", 400, f"Job {JOB_ID} does not exist", BatchNotFoundError),
        ("ClientException", 400, "JobQueue ml-gov-queue not found.", BatchNotFoundError),
        ("ClientException", 400, "schedulingPriority must be 0-9999", BatchClientError),
        ("AccessDeniedException", 403, "not authorized", BatchClientError),
        ("TooManyRequestsException", 429, "Too Many Requests", BatchThrottledError),
        ("SomethingNew", 429, "slow down", BatchThrottledError),
        ("ServerException", 500, "internal failure", BatchServerError),
        ("ServiceUnavailable", 503, "unavailable", BatchServerError),
    ],
)
def test_error_answers_map_to_named_exceptions(
    stubbed: tuple[Boto3Batch, Stubber],
    code: str,
    status: int,
    message: str,
    expected: type[Exception],
) -> None:
    batch, stubber = stubbed
    stubber.add_client_error(
        "describe_service_job",
        service_error_code=code,
        service_message=message,
        http_status_code=status,
        expected_params={"jobId": JOB_ID},
    )
    with pytest.raises(expected) as caught:
        batch.describe_service_job(jobId=JOB_ID)
    assert type(caught.value) is expected
    error = caught.value
    assert isinstance(error, BatchClientError | BatchThrottledError | BatchServerError)
    assert (error.operation, error.code, error.message) == ("DescribeServiceJob", code, message)


def test_transport_and_validation_failures_are_mapped() -> None:
    conn = map_client_error(
        "ListServiceJobs", EndpointConnectionError(endpoint_url="https://batch.example")
    )
    assert type(conn) is BatchServerError
    assert conn.code == "EndpointConnectionError"
    invalid = map_client_error("SubmitServiceJob", ParamValidationError(report="jobName missing"))
    assert type(invalid) is BatchClientError
    assert "jobName missing" in invalid.message


def test_botocore_param_validation_surfaces_as_client_error() -> None:
    batch = Boto3Batch(make_batch_client(region_name=REGION, session=_session()))
    with pytest.raises(BatchClientError) as caught:
        batch.submit_service_job(jobName="x", jobQueue=QUEUE_ARN)  # payload and type missing
    assert caught.value.code == "ParamValidationError"
    assert "serviceRequestPayload" in caught.value.message


def test_pagination_helpers_follow_next_token(stubbed: tuple[Boto3Batch, Stubber]) -> None:
    batch, stubber = stubbed
    summary = {"jobId": "a", "jobName": "a", "serviceJobType": "SAGEMAKER_TRAINING"}
    stubber.add_response(
        "list_service_jobs",
        {"jobSummaryList": [summary], "nextToken": "t1"},
        expected_params={"jobQueue": QUEUE_ARN, "jobStatus": "RUNNABLE", "maxResults": 1},
    )
    stubber.add_response(
        "list_service_jobs",
        {"jobSummaryList": [{**summary, "jobId": "b", "jobName": "b"}]},
        expected_params={
            "jobQueue": QUEUE_ARN,
            "jobStatus": "RUNNABLE",
            "maxResults": 1,
            "nextToken": "t1",
        },
    )
    stubber.add_response(
        "list_quota_shares",
        {"quotaShares": [{"quotaShareName": "a"}], "nextToken": "s1"},
        expected_params={"jobQueue": QUEUE_ARN},
    )
    stubber.add_response(
        "list_quota_shares",
        {"quotaShares": [{"quotaShareName": "b"}]},
        expected_params={"jobQueue": QUEUE_ARN, "nextToken": "s1"},
    )
    jobs = iter_service_jobs(batch, jobQueue=QUEUE_ARN, jobStatus="RUNNABLE", maxResults=1)
    assert [j["jobId"] for j in jobs] == ["a", "b"]
    shares = iter_quota_shares(batch, jobQueue=QUEUE_ARN)
    assert [s["quotaShareName"] for s in shares] == ["a", "b"]


def _answer(status: int, body: dict[str, Any]) -> AWSResponse:
    class _Raw:
        def stream(self, **_kwargs: Any) -> Iterator[bytes]:
            yield json.dumps(body).encode()

    return AWSResponse(
        "https://batch.eu-west-1.amazonaws.com/v1/describeservicejob",
        status,
        {"x-amzn-errortype": str(body.get("__type", "")), "content-type": "application/json"},
        _Raw(),
    )


def test_client_retries_a_5xx_itself_then_raises_server_error() -> None:
    client = make_batch_client(region_name=REGION, max_attempts=1, session=_session())
    sent: list[int] = []

    def always_500(**_kwargs: Any) -> AWSResponse:
        sent.append(1)
        return _answer(500, {"__type": "ServerException", "message": "internal failure"})

    client.meta.events.register("before-send.batch.DescribeServiceJob", always_500)
    with pytest.raises(BatchServerError) as caught:
        Boto3Batch(client).describe_service_job(jobId=JOB_ID)
    assert len(sent) == 2  # the first try and one retry, by botocore
    assert caught.value.code == "ServerException"


def test_client_recovers_from_a_throttle_by_retrying() -> None:
    client = make_batch_client(region_name=REGION, max_attempts=2, session=_session())
    answers = [
        _answer(429, {"__type": "TooManyRequestsException", "message": "Too Many Requests"}),
        _answer(200, {"jobArn": JOB_ARN, "jobName": "j", "jobId": JOB_ID}),
    ]

    def next_answer(**_kwargs: Any) -> AWSResponse:
        return answers.pop(0)

    client.meta.events.register("before-send.batch.UpdateServiceJob", next_answer)
    result = Boto3Batch(client).update_service_job(jobId=JOB_ID, schedulingPriority=50)
    assert result == {"jobArn": JOB_ARN, "jobName": "j", "jobId": JOB_ID}
    assert answers == []


def test_wiring_builds_the_boto3_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    services = Services(Settings())
    batch = services.batch
    assert isinstance(batch, Boto3Batch)
    assert batch.client.meta.config.retries["mode"] == "adaptive"
    assert services.batch is batch


def test_importing_wiring_does_not_import_boto3() -> None:
    code = "import sys, quotagov.wiring; print('boto3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
