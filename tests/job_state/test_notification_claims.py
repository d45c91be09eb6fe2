"""The owner-notification log's claim recognises its own retried write: a claim whose
answer was lost is still this delivery's (the owner is told), while a claim another
delivery made is not (the owner is not told twice)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ReadTimeoutError
from moto import mock_aws

from quotagov.adapters.dynamodb_jobs import jobs_table_definition
from quotagov.adapters.dynamodb_notifications import DynamoDBNotificationLog
from quotagov.governance.ports.notifications import NotificationEntry
from support.aws import REGION, fake_aws_env

TABLE = "jobs-claims"


class _LoseFirstClaimAnswer:
    """After moto carried out the first ``UpdateItem`` with a condition, raise
    ``ReadTimeoutError``; botocore then re-sends it."""

    def __init__(self) -> None:
        self.sent = 0

    def __call__(self, request: Any, event_name: str, **_: Any) -> None:
        if not event_name.endswith(".UpdateItem") or b"ConditionExpression" not in request.body:
            return
        self.sent += 1
        if self.sent == 1:
            raise ReadTimeoutError(endpoint_url=request.url)


@pytest.fixture
def log(monkeypatch: pytest.MonkeyPatch) -> Iterator[DynamoDBNotificationLog]:
    fake_aws_env(monkeypatch)
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        client.create_table(**jobs_table_definition(TABLE))
        yield DynamoDBNotificationLog(boto3.resource("dynamodb", region_name=REGION).Table(TABLE))


def _entry() -> NotificationEntry:
    return NotificationEntry(
        submission_id="sub-1",
        event_key="refused",
        kind="refused",
        job_name="nightly-eval",
        team="applied",
        recipient="U0DAVE",
        text="Your job nightly-eval was refused: quotaShareName: ...",
        at=1_777_885_200.0,
        delivery="pending",
    )


def test_a_claim_whose_answer_was_lost_is_still_ours(log: DynamoDBNotificationLog) -> None:
    lose = _LoseFirstClaimAnswer()
    log._table.meta.client.meta.events.register_last("before-send", lose)
    assert log.claim(_entry()) is True
    assert lose.sent == 2  # the claim, then botocore's re-sent copy (condition failed)
    [stored] = log.entries("sub-1")
    assert (stored.event_key, stored.delivery, stored.recipient) == ("refused", "pending", "U0DAVE")


def test_a_claim_made_by_another_delivery_is_not_ours(log: DynamoDBNotificationLog) -> None:
    assert log.claim(_entry()) is True
    assert log.claim(_entry()) is False  # a redelivery of the same event: told once
    assert len(log.entries("sub-1")) == 1
