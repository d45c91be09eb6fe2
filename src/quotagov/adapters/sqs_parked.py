"""Parked SQS queues for ``quotagov redrive``: implements
:class:`~quotagov.governance.ports.parked.ParkedQueue`.

IAM: ``sqs:ReceiveMessage``, ``sqs:DeleteMessage``, ``sqs:ChangeMessageVisibility`` on
the parked queue; ``sqs:SendMessage`` on the source queue for :meth:`resend`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from quotagov.governance.ports.parked import ParkedMessage, ParkedQueueError

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

#: How long a received message stays hidden from other readers (seconds): long enough
#: for one replay (a function invocation of at most a few minutes).
RECEIVE_VISIBILITY_SECONDS = 300


class SqsParkedQueue:
    """A dead-letter or failure queue.

    Args:
        queue_url: the parked queue.
        client: a boto3 SQS client.
        source_url: the queue its messages came from (for :meth:`resend`); "" when none.
    """

    def __init__(self, queue_url: str, client: SQSClient, source_url: str = "") -> None:
        self._url = queue_url
        self._client = client
        self._source = source_url

    def receive(self, max_messages: int) -> list[ParkedMessage]:
        """Up to ``max_messages`` (1-10) messages with their String attributes.

        Raises:
            ParkedQueueError: ReceiveMessage failed.
        """
        try:
            response = self._client.receive_message(
                QueueUrl=self._url,
                MaxNumberOfMessages=max(1, min(10, max_messages)),
                MessageAttributeNames=["All"],
                VisibilityTimeout=RECEIVE_VISIBILITY_SECONDS,
                WaitTimeSeconds=0,
            )
        except (ClientError, BotoCoreError) as exc:
            raise ParkedQueueError(f"SQS ReceiveMessage on {self._url} failed: {exc}") from exc
        return [
            ParkedMessage(
                message_id=m["MessageId"],
                body=m.get("Body", ""),
                receipt=m["ReceiptHandle"],
                attributes={
                    name: value["StringValue"]
                    for name, value in (m.get("MessageAttributes") or {}).items()
                    if "StringValue" in value
                },
            )
            for m in response.get("Messages", [])
        ]

    def delete(self, message: ParkedMessage) -> None:
        """Delete the message (``DeleteMessage`` with its receipt handle)."""
        try:
            self._client.delete_message(QueueUrl=self._url, ReceiptHandle=message.receipt)
        except (ClientError, BotoCoreError) as exc:
            raise ParkedQueueError(f"SQS DeleteMessage failed: {exc}") from exc

    def release(self, message: ParkedMessage) -> None:
        """``ChangeMessageVisibility`` to 0: the message is visible again at once."""
        try:
            self._client.change_message_visibility(
                QueueUrl=self._url, ReceiptHandle=message.receipt, VisibilityTimeout=0
            )
        except (ClientError, BotoCoreError) as exc:
            raise ParkedQueueError(f"SQS ChangeMessageVisibility failed: {exc}") from exc

    def resend(self, message: ParkedMessage) -> None:
        """Send body and String attributes unchanged to the source queue.

        Raises:
            ParkedQueueError: no source queue, or SendMessage failed.
        """
        if not self._source:
            raise ParkedQueueError("no source queue to resend to")
        attributes: dict[str, Any] = {
            name: {"DataType": "String", "StringValue": value}
            for name, value in message.attributes.items()
        }
        try:
            self._client.send_message(
                QueueUrl=self._source, MessageBody=message.body, MessageAttributes=attributes
            )
        except (ClientError, BotoCoreError) as exc:
            raise ParkedQueueError(f"SQS SendMessage to {self._source} failed: {exc}") from exc
