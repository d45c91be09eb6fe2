"""The Slack replay cache recognises its own put whose answer was lost.

Found by ``quotagov demo --faults 2``: the put that recorded the first use of U0ERIN's
signed Approve took effect, its answer was lost and botocore re-sent it; the re-sent
put met the item it had stored (``attribute_not_exists(id)`` failed) and the click was
refused as a replay of itself (HTTP 401): the escalation was never decided. A real
replay (another request with the same signature) is still refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ReadTimeoutError
from moto import mock_aws

from quotagov.adapters.dynamodb_replay import KEY_PREFIX, DynamoDBReplayCache
from quotagov.clock import ManualClock
from support.aws import REGION, fake_aws_env

TABLE = "replays"
NOW = 1_777_885_200.0
SIGNATURE = "v0=" + "ab" * 32


class _LoseFirstPutAnswer:
    """After moto carried out the first ``PutItem``, raise ``ReadTimeoutError``."""

    def __init__(self) -> None:
        self.sent = 0

    def __call__(self, request: Any, event_name: str, **_: Any) -> None:
        if not event_name.endswith(".PutItem"):
            return
        self.sent += 1
        if self.sent == 1:
            raise ReadTimeoutError(endpoint_url=request.url)


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    fake_aws_env(monkeypatch)
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        dynamodb.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield dynamodb


def test_a_first_use_whose_answer_was_lost_is_still_the_first_use(client: Any) -> None:
    lose = _LoseFirstPutAnswer()
    client.meta.events.register_last("before-send", lose)
    cache = DynamoDBReplayCache(TABLE, client, ManualClock(NOW))

    assert cache.first_use(SIGNATURE) is True
    assert lose.sent == 2  # the put, then botocore's re-sent copy (its condition failed)
    item = client.get_item(TableName=TABLE, Key={"id": {"S": KEY_PREFIX + SIGNATURE}})["Item"]
    assert item["expiration"] == {"N": str(int(NOW) + 600)}
    assert set(item) == {"id", "expiration", "useToken"}
    # the same signature again, by anyone (a replay): refused, the item unchanged
    assert cache.first_use(SIGNATURE) is False
    again = client.get_item(TableName=TABLE, Key={"id": {"S": KEY_PREFIX + SIGNATURE}})["Item"]
    assert again == item
