"""The runtime provisions a template in moto and plays API Gateway, SQS and EventBridge."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import boto3
import echo_handlers
import pytest

from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions
from quotagov_tools.local.stack import ACCOUNT_ID

MINI = Path(__file__).parent / "fixtures" / "mini-template.yaml"
ALICE = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/researcher/alice"


@pytest.fixture
def runtime() -> Iterator[LocalRuntime]:
    echo_handlers.RECEIVED.clear()
    with LocalRuntime(RuntimeOptions(template=MINI, simulated_batch=False)) as rt:
        yield rt


def test_tables_queues_parameter_and_secret_come_from_the_template(runtime: LocalRuntime) -> None:
    dynamodb = boto3.client("dynamodb")
    env = runtime.environments["EchoFunction"]
    table = dynamodb.describe_table(TableName=env["JOBS_TABLE"])["Table"]
    assert [i["IndexName"] for i in table["GlobalSecondaryIndexes"]] == ["byBatchJobId"]
    ttl = dynamodb.describe_time_to_live(TableName=env["JOBS_TABLE"])["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expiresAt"}
    # the condition IsProd is false: its table is not created
    assert len(dynamodb.list_tables()["TableNames"]) == 1

    sqs = boto3.client("sqs")
    attributes = sqs.get_queue_attributes(
        QueueUrl=env["SUBMISSION_QUEUE_URL"], AttributeNames=["RedrivePolicy", "VisibilityTimeout"]
    )["Attributes"]
    assert json.loads(attributes["RedrivePolicy"]) == {
        "deadLetterTargetArn": env["DLQ_ARN"],
        "maxReceiveCount": 3,
    }
    assert attributes["VisibilityTimeout"] == "60"

    assert env["POLICY_PARAMETER"] == "/quotagov-local/policy"
    value = boto3.client("ssm").get_parameter(Name=env["POLICY_PARAMETER"])["Parameter"]["Value"]
    assert value == runtime.policy_text
    secret = boto3.client("secretsmanager").get_secret_value(SecretId=env["SLACK_SECRET_ARN"])
    assert json.loads(secret["SecretString"]) == {
        "botToken": "xoxb-quotagov-local",
        "signingSecret": runtime.signing_secret,
    }
    assert env["JOB_QUEUE"] == runtime.job_queue
    assert env["SLACK_API_URL"] == runtime.slack.base_url


def test_api_event_is_shaped_like_api_gateway_rest(runtime: LocalRuntime) -> None:
    response = runtime.api("GET", "/echo/bob", principal=ALICE, query={"x": ["1", "2"]})
    assert response.status == 200
    received = response.json()
    event = received["event"]
    assert received["function"] == "EchoFunction"
    assert event["resource"] == "/echo/{name}"
    assert event["path"] == "/echo/bob"
    assert event["pathParameters"] == {"name": "bob"}
    assert event["queryStringParameters"] == {"x": "2"}
    assert event["multiValueQueryStringParameters"] == {"x": ["1", "2"]}
    assert event["requestContext"]["identity"]["userArn"] == ALICE
    assert event["requestContext"]["identity"]["caller"].endswith(":alice")
    assert event["requestContext"]["stage"] == "dev"
    assert event["requestContext"]["path"] == "/dev/echo/bob"
    assert event["body"] is None and event["isBase64Encoded"] is False


def test_iam_route_without_principal_is_refused_and_unknown_route_is_404(
    runtime: LocalRuntime,
) -> None:
    assert runtime.api("GET", "/echo/bob").status == 403
    assert runtime.api("GET", "/nothing").status == 404
    assert runtime.invocations == []


def test_form_post_is_base64_per_binary_media_types_and_has_no_identity(
    runtime: LocalRuntime,
) -> None:
    body = b"payload=%7B%22a%22%3A1%7D"
    response = runtime.api(
        "POST",
        "/form",
        principal=ALICE,
        body=body,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    event = response.json()["event"]
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == body
    assert event["requestContext"]["identity"]["userArn"] is None


def test_sqs_partial_failures_come_back_after_visibility_then_go_to_the_dlq(
    runtime: LocalRuntime,
) -> None:
    sqs = boto3.client("sqs")
    url = runtime.environments["EchoFunction"]["SUBMISSION_QUEUE_URL"]
    for body in ("ok-1", "fail", "ok-2"):
        sqs.send_message(QueueUrl=url, MessageBody=body)
    runtime.pump()
    bodies = [r["body"] for _, r in echo_handlers.RECEIVED]
    assert sorted(bodies) == ["fail", "ok-1", "ok-2"]
    # not visible again before the visibility timeout (60 s of virtual time)
    runtime.advance(59)
    assert [r["body"] for _, r in echo_handlers.RECEIVED].count("fail") == 1
    runtime.advance(1)
    retried = [r for _, r in echo_handlers.RECEIVED if r["body"] == "fail"]
    assert [r["attributes"]["ApproximateReceiveCount"] for r in retried] == ["1", "2"]
    runtime.advance(60)
    runtime.advance(60)
    # received 3 times (maxReceiveCount), then moved to the DLQ on the next receive
    assert len([r for _, r in echo_handlers.RECEIVED if r["body"] == "fail"]) == 3
    dlq = runtime.stack.ref("SubmissionDLQ")
    moved = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in moved] == ["fail"]
    assert sqs.receive_message(QueueUrl=url).get("Messages") is None


def test_events_are_routed_by_the_template_pattern(runtime: LocalRuntime) -> None:
    def envelope(queue: str) -> dict[str, object]:
        return {
            "source": "aws.batch",
            "detail-type": "Batch Service Job State Change",
            "time": "2026-05-04T09:10:00Z",
            "resources": ["arn:aws:batch:eu-west-1:111122223333:service-job/j1"],
            "detail": {"jobId": "j1", "jobQueue": queue, "status": "RUNNING"},
        }

    runtime.emit(envelope(runtime.job_queue))
    runtime.emit(envelope("arn:aws:batch:eu-west-1:111122223333:job-queue/other"))
    runtime.pump()
    states = [e for kind, e in echo_handlers.RECEIVED if kind == "state"]
    assert len(states) == 1
    delivered = states[0]
    assert delivered["detail"]["jobQueue"] == runtime.job_queue
    assert delivered["detail-type"] == "Batch Service Job State Change"
    assert delivered["time"] == "2026-05-04T09:10:00Z"
    assert delivered["account"] == ACCOUNT_ID and delivered["version"] == "0"
    assert "ingestion-time" not in delivered


def test_schedule_fires_on_each_tick_of_virtual_time(runtime: LocalRuntime) -> None:
    runtime.advance(299)
    assert [e for kind, e in echo_handlers.RECEIVED if kind == "state"] == []
    runtime.advance(601)
    ticks = [e for kind, e in echo_handlers.RECEIVED if kind == "state"]
    assert [t["detail-type"] for t in ticks] == ["Scheduled Event"] * 3
    assert ticks[0]["time"] == "2026-05-04T09:05:00Z"


def test_failed_async_invocation_is_retried_then_sent_to_the_on_failure_queue(
    runtime: LocalRuntime,
) -> None:
    runtime.emit(
        {
            "source": "aws.batch",
            "detail-type": "Batch Service Job State Change",
            "time": "2026-05-04T09:10:00Z",
            "resources": [],
            "detail": {"jobId": "j2", "jobQueue": runtime.job_queue, "fail": True},
        }
    )
    runtime.pump()
    attempts = [i for i in runtime.invocations if i.function == "StateFunction"]
    assert [i.ok for i in attempts] == [False, False]  # the call and MaximumRetryAttempts 1
    assert attempts[0].error == "RuntimeError: asked to fail"
    failed = boto3.client("sqs").receive_message(QueueUrl=runtime.stack.ref("FailedEventsQueue"))
    (message,) = failed["Messages"]
    record = json.loads(message["Body"])
    assert record["requestContext"]["condition"] == "RetriesExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == 2
    assert record["requestPayload"]["detail"]["jobId"] == "j2"
    assert record["responsePayload"] == {"errorMessage": "RuntimeError: asked to fail"}


def test_a_template_that_cannot_be_provisioned_leaves_nothing_behind(tmp_path: Path) -> None:
    import os

    from quotagov_tools.deploy.template import TemplateError

    broken = tmp_path / "template.yaml"
    broken.write_text(
        "Resources:\n"
        "  Queue:\n"
        "    Type: AWS::SQS::Queue\n"
        "    Properties:\n"
        "      RedrivePolicy: {deadLetterTargetArn: !GetAtt Missing.Arn, maxReceiveCount: 1}\n"
    )
    before = dict(os.environ)
    runtime = LocalRuntime(RuntimeOptions(template=broken, simulated_batch=False))
    with pytest.raises(TemplateError, match=r"cannot provision \['Queue'\]"):
        runtime.start()
    assert dict(os.environ) == before
    assert runtime.slack is None
