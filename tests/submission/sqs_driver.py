"""Runs the submit worker the way the SQS event source mapping does, on moto SQS.

Each round receives up to ``batch_size`` messages (attributes included), hands them to
the handler as a Lambda SQS event, deletes the processed ones and leaves the reported
failures in flight. When only in-flight messages remain, the virtual clock moves by the
visibility timeout and those messages become visible again (moto's own visibility
timer runs on the wall clock, so the driver ends it with ``ChangeMessageVisibility``).
moto applies the redrive policy (DLQ after ``maxReceiveCount`` receives) on receive.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from quotagov.governance.provenance import SUBMISSION_QUEUE
from support.compose import seal
from support.lambda_context import LambdaContext

from .conftest import REGION, VISIBILITY_TIMEOUT, Stack


@dataclass
class DriverReport:
    """What happened while draining the queue."""

    invocations: int = 0
    processed: int = 0
    failures: list[str] = field(default_factory=list)
    replies: list[dict[str, Any]] = field(default_factory=list)


def lambda_record(message: dict[str, Any], queue_arn: str) -> dict[str, Any]:
    """An SQS ``ReceiveMessage`` message in the Lambda SQS event record shape."""
    attributes = {
        name: {
            "stringValue": value.get("StringValue"),
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": value["DataType"],
        }
        for name, value in message.get("MessageAttributes", {}).items()
    }
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": attributes,
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": REGION,
    }


def send_direct(
    stack: Stack, body: dict[str, Any], principal: str | None, *, sealed: bool = False
) -> str:
    """Put a whole submission on the queue, as a role with ``sqs:SendMessage`` would
    (unsealed: no proof of sender), or, ``sealed``, as a quotagov function sealing it
    under the message key; returns the message id."""
    attributes = (
        {"principal": {"DataType": "String", "StringValue": principal}} if principal else {}
    )
    text = json.dumps(body)
    response = stack.sqs.send_message(
        QueueUrl=stack.queue_url,
        MessageBody=seal(text, SUBMISSION_QUEUE) if sealed else text,
        MessageAttributes=attributes,
    )
    message_id: str = response["MessageId"]
    return message_id


def queue_depth(stack: Stack, url: str | None = None) -> tuple[int, int]:
    """(visible, in flight) messages of the queue (default: the submission queue)."""
    attributes = stack.sqs.get_queue_attributes(
        QueueUrl=url or stack.queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return (
        int(attributes["ApproximateNumberOfMessages"]),
        int(attributes["ApproximateNumberOfMessagesNotVisible"]),
    )


def drain(stack: Stack, *, batch_size: int = 10, max_invocations: int = 500) -> DriverReport:
    """Invoke the worker until the queue is empty; returns what happened."""
    from quotagov.handlers import submit_worker

    arn = stack.sqs.get_queue_attributes(QueueUrl=stack.queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    report = DriverReport()
    in_flight: dict[str, str] = {}
    while report.invocations < max_invocations:
        messages = stack.sqs.receive_message(
            QueueUrl=stack.queue_url,
            MaxNumberOfMessages=batch_size,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            if not in_flight:
                break
            stack.clock.advance(VISIBILITY_TIMEOUT)
            for handle in in_flight.values():
                stack.sqs.change_message_visibility(
                    QueueUrl=stack.queue_url, ReceiptHandle=handle, VisibilityTimeout=0
                )
            in_flight.clear()
            continue
        event = {"Records": [lambda_record(m, arn) for m in messages]}
        reply = submit_worker.handler(event, LambdaContext())
        report.invocations += 1
        report.replies.append(reply)
        failed = {f["itemIdentifier"] for f in reply["batchItemFailures"]}
        done = []
        for message in messages:
            if message["MessageId"] in failed:
                report.failures.append(message["MessageId"])
                in_flight[message["MessageId"]] = message["ReceiptHandle"]
            else:
                report.processed += 1
                done.append({"Id": str(len(done)), "ReceiptHandle": message["ReceiptHandle"]})
        if done:  # the event source mapping deletes the processed messages
            stack.sqs.delete_message_batch(QueueUrl=stack.queue_url, Entries=done)
    return report
