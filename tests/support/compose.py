"""Wiring handlers in a test the way Lambda wires them: through :mod:`quotagov.composition`.

A test gives the settings it has resources for (moto tables, queues) and injects what it
replaces (a fake Slack, the simulated Batch, an in-memory audit sink). Every variable a
function requires that the test leaves empty gets a name no resource has
(:data:`UNPROVISIONED`): each composition then builds exactly as deployed, and a
dependency the test neither provisioned nor injected fails loudly against moto instead
of quietly becoming a no-op.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import fields, replace
from typing import Any

from quotagov import composition
from quotagov.settings import Settings

#: The value of every required variable a test did not provision.
UNPROVISIONED = "unprovisioned-in-this-test"

#: Required numeric variables a test did not set, and the value it gets: the audit
#: writes each CloudTrail-recorded call on arrival unless the test sets a window.
NUMBERS = {"AUDIT_SETTLE_SECONDS": "0"}


def complete(settings: Settings | None = None) -> Settings:
    """``settings`` with every variable some function requires set (:data:`UNPROVISIONED`
    where empty)."""
    given = settings or Settings()
    required = frozenset().union(*(kind.requires for kind in composition.COMPOSITIONS.values()))
    return replace(
        given,
        **{
            f.name: NUMBERS.get(f.name.upper(), UNPROVISIONED)
            for f in fields(Settings)
            if f.name.upper() in required and not getattr(given, f.name)
        },
    )


class LocalMac:
    """The message key (:class:`~quotagov.governance.ports.messages.MessageMac`) as an
    in-process HMAC-SHA256 with a random key: what KMS ``GenerateMac``/``VerifyMac`` on
    ``MESSAGE_KEY`` give, for tests without KMS (base64 text, as the adapter's). The
    key follows from ``key_id``, so two worlds built alike store alike records."""

    def __init__(self, key_id: str = "local-message-key") -> None:
        self.key_id = key_id
        self._key = hashlib.sha256(f"quotagov-test-key:{key_id}".encode()).digest()

    def seal(self, message: bytes) -> str:
        """The MAC of ``message``, base64."""
        import base64

        return base64.b64encode(hmac.new(self._key, message, hashlib.sha256).digest()).decode()

    def check(self, message: bytes, seal: str) -> bool:
        """True when ``seal`` is the MAC of ``message``."""
        return hmac.compare_digest(self.seal(message), seal)


def seal(body: str, purpose: str, *, sender: str = "JobsApiFunction", sent_at: float = 0.0) -> str:
    """``body`` (JSON text) as a quotagov function sends it on the ``purpose`` queue:
    sealed under :class:`LocalMac` (the key :func:`wire` gives), see
    :func:`quotagov.governance.provenance.seal_message`."""
    from quotagov.governance.provenance import seal_message

    return seal_message(LocalMac(), purpose, sender, sent_at, body)


def opened(text: str, purpose: str) -> Any:
    """The inner message (decoded JSON) of a sealed ``text`` received on the ``purpose``
    queue, verified under :class:`LocalMac`.

    Raises:
        quotagov.governance.provenance.UnauthenticatedError: not sealed with that key.
    """
    import json

    from quotagov.governance.provenance import open_message

    return json.loads(open_message(LocalMac(), purpose, text).body)


def wire(settings: Settings | None = None, **values: Any) -> None:
    """Build every function's composition from ``settings`` (completed, see the module)
    with ``values`` injected (``clock``, ``batch``, ``chat``, ``audit``, ...); without a
    ``MESSAGE_KEY`` in ``settings`` or an injected ``message_mac``, a :class:`LocalMac`."""
    given = settings or Settings()
    if not given.message_key and "message_mac" not in values:
        values["message_mac"] = LocalMac()
    composition.inject(complete(given), **values)


class RecordingChat:
    """A :class:`~quotagov.governance.ports.ChatNotifier` that keeps what it was asked
    to post and update (``posts``: ``(channel, text, blocks)``; ``updates``:
    ``(PostedMessage, text, blocks)``), for tests that look at records, not Slack."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, str, list[dict[str, Any]]]] = []
        self.updates: list[tuple[Any, str, list[dict[str, Any]]]] = []

    def post(self, channel: str, text: str, blocks: list[dict[str, Any]]) -> Any:
        """Record the post; it lands at ``ts`` = its number."""
        from quotagov.governance.ports import PostedMessage

        self.posts.append((channel, text, blocks))
        return PostedMessage(channel, f"{len(self.posts)}.000100")

    def update(self, message: Any, text: str, blocks: list[dict[str, Any]]) -> None:
        """Record the update."""
        self.updates.append((message, text, blocks))


class MemoryReplays:
    """The Slack function's replay cache
    (:class:`~quotagov.adapters.dynamodb_replay.DynamoDBReplayCache`) in memory:
    ``first_use(signature)`` is True once per signature."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def first_use(self, signature: str) -> bool:
        """True the first time ``signature`` is shown, False after."""
        if signature in self.seen:
            return False
        self.seen.add(signature)
        return True
