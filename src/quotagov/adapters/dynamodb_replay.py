"""The replay cache of Slack request signatures: one conditional ``PutItem`` per
verified request on the idempotency table.

Slack signs ``v0:<timestamp>:<body>`` and the receiver accepts a timestamp within
300 s of its clock (https://api.slack.com/authentication/verifying-requests-from-slack),
so a captured request verifies again for up to 300 s after it was sent. The cache
stores each accepted signature for longer than that window (``expiration``, the
table's TTL attribute) with ``attribute_not_exists(id)``, or over an expired entry
that DynamoDB's TTL has not removed yet (deletion may lag:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html); a second
use is refused.

Each put carries a token of its own (``useToken``) and asks for the stored item when
its condition fails (``ReturnValuesOnConditionCheckFailure: ALL_OLD``): a put whose
answer was lost, and which botocore re-sent, meets the item it stored itself, and that
first use is accepted, not refused as a replay of itself (DynamoDB error handling,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html).

IAM: ``dynamodb:PutItem`` on the table (``IDEMPOTENCY_TABLE``).
"""

from __future__ import annotations

import uuid
from typing import Any

from botocore.exceptions import ClientError

from quotagov.clock import Clock

#: Key prefix of the cache's items (the table also holds Powertools Idempotency records).
KEY_PREFIX = "slack-signature#"


class DynamoDBReplayCache:
    """First use of a Slack signature within its window.

    Args:
        table_name: ``IDEMPOTENCY_TABLE`` (key ``id`` (S), TTL ``expiration`` (N)).
        client: a boto3 DynamoDB client.
        clock: epoch seconds.
        keep_seconds: how long a signature is kept (default 600 s, twice Slack's
            300 s window: a timestamp up to 300 s in the future is accepted too).
    """

    def __init__(self, table_name: str, client: Any, clock: Clock, keep_seconds: int = 600) -> None:
        self._table = table_name
        self._client = client
        self._clock = clock
        self._keep = keep_seconds

    def first_use(self, signature: str) -> bool:
        """True the first time ``signature`` is seen within :attr:`keep_seconds`;
        False for a replay.

        Raises:
            botocore.exceptions.ClientError: DynamoDB failed (the request is answered
                503 by the caller, not accepted unchecked).
        """
        now = int(self._clock.now())
        token = uuid.uuid4().hex
        try:
            self._client.put_item(
                TableName=self._table,
                Item={
                    "id": {"S": KEY_PREFIX + signature},
                    "expiration": {"N": str(now + self._keep)},
                    "useToken": {"S": token},
                },
                ConditionExpression="attribute_not_exists(id) OR expiration < :now",
                ExpressionAttributeValues={":now": {"N": str(now)}},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                stored: dict[str, Any] = dict(exc.response.get("Item") or {})  # type: ignore[call-overload]
                return bool((stored.get("useToken") or {}).get("S") == token)
            raise
        return True
