"""The audit queue: :class:`~quotagov.governance.ports.AuditQueue` over SQS.

IAM: ``sqs:SendMessage`` on the queue (``AUDIT_QUEUE_URL``); the queue policy admits
quotagov's function roles only. The audit function consumes it (partial batch
responses; failed messages reach the DLQ after ``maxReceiveCount`` receives).
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from quotagov.governance.ports import AuditQueueError


class SqsAuditQueue:
    """Sends decision records to the audit queue.

    Args:
        queue_url: ``AUDIT_QUEUE_URL``.
        client: a boto3 SQS client (built with the default session when None).
    """

    def __init__(self, queue_url: str, client: Any | None = None) -> None:
        if client is None:
            from quotagov.adapters import aws_clients

            client = aws_clients.client("sqs")
        self._client = client
        self._url = queue_url

    def send(self, body: str) -> None:
        """``SendMessage`` of ``body`` (after botocore's retries).

        Raises:
            AuditQueueError: SQS refused or could not be reached.
        """
        try:
            self._client.send_message(QueueUrl=self._url, MessageBody=body)
        except (ClientError, BotoCoreError) as exc:
            raise AuditQueueError(f"audit queue SendMessage failed: {exc}") from exc
