"""Slack button clicks (``block_actions``) and the table that routes them to use cases.

The Slack interactions handler verifies the request, parses each clicked action into
a :class:`BlockAction` and calls the handler registered for the longest matching
``action_id`` prefix: ``escalation_`` for escalations, ``disposition_`` for the
job-state helper's dispositions, and whatever a later module registers with
:func:`register_action`. A handler returns an :class:`ActionReply`; its ``notice``
(if any) is shown to the clicker only (ephemeral, through ``response_url``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BlockAction:
    """One clicked element of a ``block_actions`` payload (Slack, "block_actions payload",
    https://docs.slack.dev/reference/interaction-payloads/block_actions-payload).

    Attributes:
        action_id: the element's ``action_id``, e.g. ``"escalation_approve"``.
        value: the element's ``value`` (quotagov puts the record id there).
        user_id: Slack user id of the clicker (``payload.user.id``).
        user_name: their Slack user name, for display only.
        channel_id: channel of the message (``container.channel_id``), if any.
        message_ts: ``ts`` of the message (``container.message_ts``), if any.
        response_url: where to answer the clicker (5 uses within 30 minutes).
        payload: the whole decoded payload.
    """

    action_id: str
    value: str
    user_id: str
    user_name: str = ""
    channel_id: str | None = None
    message_ts: str | None = None
    response_url: str | None = None
    payload: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ActionReply:
    """What to tell the clicker: ``notice`` (ephemeral text) or nothing when None."""

    notice: str | None = None


ActionHandler = Callable[[BlockAction], ActionReply]

_HANDLERS: dict[str, ActionHandler] = {}
_lock = threading.Lock()


def register_action(prefix: str, handler: ActionHandler) -> None:
    """Route actions whose ``action_id`` starts with ``prefix`` to ``handler``.

    Raises:
        ValueError: when ``prefix`` is empty.
    """
    if not prefix:
        raise ValueError("prefix: must not be empty")
    with _lock:
        _HANDLERS[prefix] = handler


def handler_for(action_id: str) -> ActionHandler | None:
    """The handler of the longest registered prefix of ``action_id``, or None."""
    with _lock:
        matches = [p for p in _HANDLERS if action_id.startswith(p)]
        return _HANDLERS[max(matches, key=len)] if matches else None


def registered_prefixes() -> list[str]:
    """The prefixes with a handler, sorted."""
    with _lock:
        return sorted(_HANDLERS)


def parse_block_actions(payload: Mapping[str, Any]) -> list[BlockAction]:
    """The clicked actions of a ``block_actions`` payload.

    Raises:
        ValueError: naming the field when the payload is not a usable
            ``block_actions`` payload (wrong ``type``, no ``user.id``, no ``actions``).
    """
    if payload.get("type") != "block_actions":
        raise ValueError(f"payload.type: expected 'block_actions', got {payload.get('type')!r}")
    user = payload.get("user")
    if not isinstance(user, Mapping) or not isinstance(user.get("id"), str) or not user["id"]:
        raise ValueError("payload.user.id: missing")
    raw_actions = payload.get("actions")
    if not isinstance(raw_actions, list) or not raw_actions:
        raise ValueError("payload.actions: missing or empty")
    container = payload.get("container")
    container = container if isinstance(container, Mapping) else {}
    channel = payload.get("channel")
    channel_id = container.get("channel_id") or (
        channel.get("id") if isinstance(channel, Mapping) else None
    )
    response_url = payload.get("response_url")
    actions = []
    for index, raw in enumerate(raw_actions):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("action_id"), str):
            raise ValueError(f"payload.actions[{index}].action_id: missing")
        actions.append(
            BlockAction(
                action_id=raw["action_id"],
                value=str(raw.get("value") or ""),
                user_id=user["id"],
                user_name=str(user.get("username") or user.get("name") or ""),
                channel_id=str(channel_id) if channel_id else None,
                message_ts=str(container.get("message_ts"))
                if container.get("message_ts")
                else None,
                response_url=response_url if isinstance(response_url, str) else None,
                payload=payload,
            )
        )
    return actions
