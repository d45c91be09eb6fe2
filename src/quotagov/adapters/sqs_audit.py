"""The audit queue: :class:`~quotagov.governance.ports.AuditQueue` over SQS.

IAM: ``sqs:SendMessage`` on the queue (``AUDIT_QUEUE_URL``); the queue policy admits
quotagov's function roles only. The audit function consumes it (partial batch
responses; failed messages reach the DLQ after ``maxReceiveCount`` receives).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from quotagov.governance.ports import AuditQueueError


class SqsAuditQueue:
    """Sends decision records to the audit queue.

    Args:
        queue_url: ``AUDIT_QUEUE_URL``.
        client: a boto3 SQS client (built with the default session when None).
        seal: turns a body into the sealed message sent
            (:class:`~quotagov.governance.provenance.MessageSealer`); None sends it bare.
    """

    def __init__(
        self,
        queue_url: str,
        client: Any | None = None,
        seal: Callable[[str], str] | None = None,
    ) -> None:
        if client is None:
            from quotagov.adapters import aws_clients

            client = aws_clients.client("sqs")
        self._client = client
        self._url = queue_url
        self._seal = seal

    def send(self, body: str) -> None:
        """``SendMessage`` of ``body`` (after botocore's retries).

        Raises:
            AuditQueueError: SQS (or KMS, sealing it) refused or could not be reached.
        """
        try:
            if self._seal is not None:
                body = self._seal(body)
            self._client.send_message(QueueUrl=self._url, MessageBody=body)
        except (ClientError, BotoCoreError) as exc:
            raise AuditQueueError(f"audit queue SendMessage failed: {exc}") from exc
