"""Ports of ``quotagov redrive``: a queue of parked messages, and a way to replay events.

- :class:`ParkedQueue`: a dead-letter or failure queue (adapter
  ``quotagov.adapters.sqs_parked.SqsParkedQueue``).
- :class:`FunctionInvoker`: invokes one of the stack's functions synchronously
  (adapter ``quotagov.adapters.lambda_invoker.LambdaInvoker``; the local runtime's
  invoker in tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class ParkedQueueError(Exception):
    """The queue could not be read, written or deleted from (the message stays parked)."""


@dataclass(frozen=True)
class ParkedMessage:
    """One message received from a parked queue.

    Attributes:
        message_id: SQS ``MessageId`` (kept when SQS moves a message to its DLQ).
        body: the message body, as sent.
        attributes: the String message attributes (``principal`` of a direct submission).
        receipt: the receipt handle of this receive (to delete it).
    """

    message_id: str
    body: str
    receipt: str
    attributes: Mapping[str, str] = field(default_factory=dict)


class ParkedQueue(Protocol):
    """A queue holding messages nothing will process again by itself."""

    def receive(self, max_messages: int) -> list[ParkedMessage]:
        """Up to ``max_messages`` (1-10) messages, hidden from other readers for a while.

        Raises:
            ParkedQueueError: SQS could not be read.
        """
        ...

    def delete(self, message: ParkedMessage) -> None:
        """Remove a handled message.

        Raises:
            ParkedQueueError: SQS refused (the message comes back later; replays are
                idempotent, so a second replay is harmless).
        """
        ...

    def release(self, message: ParkedMessage) -> None:
        """Make a message that stays parked visible again at once (best effort).

        Raises:
            ParkedQueueError: SQS refused (it becomes visible after its timeout anyway).
        """
        ...

    def resend(self, message: ParkedMessage) -> None:
        """Send the message (body and attributes unchanged) to the queue it came from.

        Raises:
            ParkedQueueError: SQS refused.
        """
        ...


class InvocationFailedError(Exception):
    """The function ran and failed again (``FunctionError``), or could not be invoked."""


class FunctionInvoker(Protocol):
    """Synchronous invocation of one of the stack's functions."""

    def invoke(self, function_arn: str, payload: Mapping[str, Any]) -> Any:
        """Run the function on ``payload``; returns its answer.

        Raises:
            InvocationFailedError: the function failed or could not be invoked.
        """
        ...
