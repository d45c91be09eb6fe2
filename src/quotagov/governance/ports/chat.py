"""Chat port: posting and updating Slack messages (adapter: ``quotagov.adapters.slack``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class PostedMessage:
    """Where a chat message landed: Slack channel id and message ``ts``."""

    channel: str
    ts: str


class ChatNotifier(Protocol):
    """Posting and updating interactive messages (Slack ``chat.postMessage``/``chat.update``).

    ``blocks`` are Block Kit blocks (list of dicts); ``text`` is the notification
    fallback, always given. Implementations raise :class:`ChatError` on failure.
    """

    def post(self, channel: str, text: str, blocks: list[dict[str, Any]]) -> PostedMessage:
        """Post a message to ``channel``; returns where it landed."""
        ...

    def update(self, message: PostedMessage, text: str, blocks: list[dict[str, Any]]) -> None:
        """Replace the text and blocks of ``message``."""
        ...


class ChatError(Exception):
    """A chat call failed (Slack answered ``ok: false`` or could not be reached).

    Attributes:
        error: Slack's error code, e.g. ``"channel_not_found"``, or the transport fault.
    """

    def __init__(self, error: str) -> None:
        super().__init__(f"chat call failed: {error}")
        self.error = error
