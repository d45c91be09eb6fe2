"""The decision hand-off port: how the internet-facing Slack function passes a recorded
decision to the apply function, which alone acts on Batch (``docs/design.md``, "Trust model").

Adapter: ``quotagov.adapters.sqs_queue.SqsDecisionHandoff`` (the ``ApplyQueue``; only
the Slack and escalation functions' roles may send to it, the queue policy says so).
Message shapes: :mod:`quotagov.governance.apply_messages`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class HandoffError(Exception):
    """The hand-off queue refused the message or could not be reached."""


class DecisionHandoff(Protocol):
    """Sends one JSON-ready message to the apply function."""

    def send(self, message: Mapping[str, Any]) -> None:
        """Send ``message`` (a JSON object, see :mod:`quotagov.governance.apply_messages`).

        Raises:
            HandoffError: the message was not accepted.
        """
        ...
