"""The redrive adapters: Lambda Invoke (Stubber: exact requests, FunctionError) and the
parked SQS queue (moto: attributes kept, resend, release, errors as ParkedQueueError)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber
from moto import mock_aws

from quotagov.adapters.lambda_invoker import LambdaInvoker
from quotagov.adapters.sqs_parked import SqsParkedQueue
from quotagov.governance.ports.parked import InvocationFailedError, ParkedQueueError
from support.aws import REGION, fake_aws_env

ARN = "arn:aws:lambda:eu-west-1:111122223333:function:quotagov-AuditFunction-x"


def _body(payload: Any) -> StreamingBody:
    raw = json.dumps(payload).encode()
    return StreamingBody(io.BytesIO(raw), len(raw))


@pytest.fixture
def lambda_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LambdaInvoker, Stubber]]:
    fake_aws_env(monkeypatch)
    client = boto3.client("lambda", region_name=REGION)
    with Stubber(client) as stub:
        yield LambdaInvoker(client), stub
        stub.assert_no_pending_responses()


def test_invoke_is_synchronous_and_returns_the_answer(
    lambda_stub: tuple[LambdaInvoker, Stubber],
) -> None:
    invoker, stub = lambda_stub
    event = {"id": "e-1", "source": "aws.batch", "detail-type": "x", "detail": {}}
    stub.add_response(
        "invoke",
        {"StatusCode": 200, "Payload": _body({"status": "recorded"})},
        {
            "FunctionName": ARN,
            "InvocationType": "RequestResponse",
            "Payload": json.dumps(event).encode(),
        },
    )
    assert invoker.invoke(ARN, event) == {"status": "recorded"}


def test_a_function_error_or_a_failed_call_is_invocation_failed(
    lambda_stub: tuple[LambdaInvoker, Stubber],
) -> None:
    invoker, stub = lambda_stub
    stub.add_response(
        "invoke",
        {
            "StatusCode": 200,
            "FunctionError": "Unhandled",
            "Payload": _body({"errorMessage": "table not found"}),
        },
    )
    with pytest.raises(InvocationFailedError, match="Unhandled: table not found"):
        invoker.invoke(ARN, {})
    stub.add_client_error("invoke", "AccessDeniedException", "not allowed", 403)
    with pytest.raises(InvocationFailedError, match="AccessDeniedException"):
        invoker.invoke(ARN, {})


@pytest.fixture
def queues(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str, str]]:
    fake_aws_env(monkeypatch)
    with mock_aws():
        sqs = boto3.client("sqs", region_name=REGION)
        parked = sqs.create_queue(QueueName="dlq")["QueueUrl"]
        source = sqs.create_queue(QueueName="source")["QueueUrl"]
        yield sqs, parked, source


def test_parked_messages_keep_their_attributes_and_go_back_unchanged(
    queues: tuple[Any, str, str],
) -> None:
    sqs, parked_url, source_url = queues
    sqs.send_message(
        QueueUrl=parked_url,
        MessageBody='{"team": "research"}',
        MessageAttributes={"principal": {"DataType": "String", "StringValue": "arn:p"}},
    )
    parked = SqsParkedQueue(parked_url, sqs, source_url)
    [message] = parked.receive(10)
    assert (message.body, dict(message.attributes)) == (
        '{"team": "research"}',
        {"principal": "arn:p"},
    )
    assert parked.receive(10) == []  # hidden while it is handled

    parked.resend(message)
    parked.release(message)

    [again] = parked.receive(10)
    assert again.message_id == message.message_id
    [resent] = sqs.receive_message(QueueUrl=source_url, MessageAttributeNames=["All"])["Messages"]
    assert resent["Body"] == '{"team": "research"}'
    assert resent["MessageAttributes"]["principal"]["StringValue"] == "arn:p"
    parked.delete(again)
    assert parked.receive(10) == []


def test_queue_failures_are_parked_queue_errors(queues: tuple[Any, str, str]) -> None:
    sqs, _, _ = queues
    missing = SqsParkedQueue("https://sqs.eu-west-1.amazonaws.com/111122223333/none", sqs)
    with pytest.raises(ParkedQueueError, match="ReceiveMessage"):
        missing.receive(1)
    no_source = SqsParkedQueue(queues[1], sqs)
    sqs.send_message(QueueUrl=queues[1], MessageBody="{}")
    [message] = no_source.receive(1)
    with pytest.raises(ParkedQueueError, match="no source queue"):
        no_source.resend(message)
