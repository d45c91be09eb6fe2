"""The SQS submission queue: implements :class:`~quotagov.governance.submission.SubmissionQueue`.

Messages sent by the API carry ``{"submissionId": "<id>"}``, the only kind the submit
worker submits (who submitted, for which team, what: all from the stored record).
Also :class:`SqsDecisionHandoff`, the ``ApplyQueue`` and ``OwnerNoticeQueue`` sender.

IAM: ``sqs:SendMessage`` on the queue (``SUBMISSION_QUEUE_URL``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from quotagov.governance.ports import SubmissionQueueError
from quotagov.governance.ports.handoff import HandoffError

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

#: The body key of messages that reference a stored submission.
SUBMISSION_ID_KEY = "submissionId"


def queued_message_body(submission_id: str) -> str:
    """The body of a message referencing a stored ``QUEUED`` submission."""
    return json.dumps({SUBMISSION_ID_KEY: submission_id}, separators=(",", ":"))


class SqsSubmissionQueue:
    """Sends submission ids to the SQS submission queue.

    Args:
        queue_url: the queue URL (``SUBMISSION_QUEUE_URL``).
        client: a boto3 SQS client (built with the default session when None).
        seal: turns a body into the sealed message sent
            (:class:`~quotagov.governance.provenance.MessageSealer`); None sends it bare.
    """

    def __init__(
        self,
        queue_url: str,
        client: SQSClient | None = None,
        seal: Callable[[str], str] | None = None,
    ) -> None:
        if client is None:
            from quotagov.adapters import aws_clients

            client = aws_clients.client("sqs")
        self._client = client
        self._url = queue_url
        self._seal = seal

    def send(self, submission_id: str) -> None:
        """Send ``{"submissionId": ...}``.

        Raises:
            SubmissionQueueError: SQS (or KMS, sealing it) refused the message or could
                not be reached.
        """
        try:
            body = queued_message_body(submission_id)
            if self._seal is not None:
                body = self._seal(body)
            self._client.send_message(QueueUrl=self._url, MessageBody=body)
        except (ClientError, BotoCoreError) as exc:
            raise SubmissionQueueError(f"SQS SendMessage failed: {exc}") from exc


class SqsDecisionHandoff:
    """Sends hand-offs to ``ApplyDecisionsFunction``: decisions to the SQS ``ApplyQueue``
    (``APPLY_QUEUE_URL``), owner notices to the ``OwnerNoticeQueue``
    (``OWNER_NOTICE_QUEUE_URL``).

    Implements :class:`~quotagov.governance.ports.handoff.DecisionHandoff`.
    IAM: ``sqs:SendMessage`` on the queue (and the queue policy must name the role).

    Args:
        queue_url: the queue URL.
        client: a boto3 SQS client (built with the default session when None).
        seal: turns a body into the sealed message sent
            (:class:`~quotagov.governance.provenance.MessageSealer`); None sends it bare.
    """

    def __init__(
        self,
        queue_url: str,
        client: SQSClient | None = None,
        seal: Callable[[str], str] | None = None,
    ) -> None:
        if client is None:
            from quotagov.adapters import aws_clients

            client = aws_clients.client("sqs")
        self._client = client
        self._url = queue_url
        self._seal = seal

    def send(self, message: Mapping[str, Any]) -> None:
        """Send ``message`` as compact JSON.

        Raises:
            HandoffError: SQS (or KMS, sealing it) refused the message or could not be
                reached.
        """
        try:
            body = json.dumps(dict(message), separators=(",", ":"), sort_keys=True)
            if self._seal is not None:
                body = self._seal(body)
            self._client.send_message(QueueUrl=self._url, MessageBody=body)
        except (ClientError, BotoCoreError) as exc:
            raise HandoffError(f"SQS SendMessage failed: {exc}") from exc
