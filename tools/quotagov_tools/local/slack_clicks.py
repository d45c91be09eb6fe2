"""Build a Slack ``block_actions`` request for a button of a (fake) Slack message.

Used by ``quotagov demo`` and ``quotagov slack-click`` to click Approve, Deny or a
disposition button as Slack would: the interaction payload Slack sends when a user
clicks a Block Kit button (Slack API docs, "block_actions payloads"), form-encoded as
``payload=<url-encoded JSON>`` and signed with the app's signing secret (v0,
HMAC-SHA256 of ``v0:<timestamp>:<body>``, computed by slack_sdk's
``SignatureVerifier``).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from slack_sdk.signature import SignatureVerifier


class ButtonNotFoundError(LookupError):
    """The message has no button with that ``action_id`` (and ``value``)."""


def find_button(
    blocks: Sequence[Mapping[str, Any]], action_id: str, value: str | None = None
) -> tuple[str | None, Mapping[str, Any]]:
    """``(block_id, element)`` of the button ``action_id`` whose value is ``value``, or
    names the record ``value`` (an escalation button's value also carries the preview
    round it shows: :func:`~quotagov.governance.slack.escalations.button_value`).

    Raises:
        ButtonNotFoundError: when no ``actions`` block holds such a button.
    """
    from quotagov.governance.slack.escalations import parse_button_value

    for block in blocks:
        for element in block.get("elements") or []:
            if element.get("action_id") != action_id:
                continue
            shown = str(element.get("value") or "")
            if value is None or value in (shown, parse_button_value(shown)[0]):
                return block.get("block_id"), element
    raise ButtonNotFoundError(f"no button {action_id!r} with value {value!r}")


def block_actions_payload(
    *,
    user: str,
    message: Mapping[str, Any],
    action_id: str,
    response_url: str,
    action_ts: float,
    value: str | None = None,
) -> dict[str, Any]:
    """The ``block_actions`` payload of ``user`` clicking ``action_id`` on ``message``.

    Args:
        user: the clicking Slack user id (``U...``).
        message: ``{"channel", "ts", "text", "blocks"}`` as the fake Slack lists it.
        action_id: the button's ``action_id`` (``escalation_approve``, ...).
        response_url: where the app may answer the clicker (``response_url``).
        action_ts: the click's time (epoch seconds).
        value: the button's value, to pick among buttons with the same ``action_id``.

    Raises:
        ButtonNotFoundError: when the message has no such button.
    """
    block_id, element = find_button(message.get("blocks") or [], action_id, value)
    channel, ts = str(message["channel"]), str(message["ts"])
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": "T0LOCAL"},
        "api_app_id": "A0QUOTAGOV",
        "token": "legacy-unused",
        "team": {"id": "T0LOCAL", "domain": "quotagov-local"},
        "trigger_id": f"{int(action_ts)}.1.local",
        "container": {
            "type": "message",
            "message_ts": ts,
            "channel_id": channel,
            "is_ephemeral": False,
        },
        "channel": {"id": channel, "name": channel.lower()},
        "message": {
            "type": "message",
            "ts": ts,
            "text": message.get("text"),
            "blocks": message.get("blocks"),
        },
        "response_url": response_url,
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": block_id,
                "value": element.get("value"),
                "text": element.get("text"),
                "action_ts": f"{action_ts:.6f}",
            }
        ],
    }


def signed_form(
    payload: Mapping[str, Any], signing_secret: str, timestamp: float
) -> tuple[str, dict[str, str]]:
    """``(body, headers)`` of the form POST Slack makes for ``payload`` at ``timestamp``."""
    body = "payload=" + urllib.parse.quote(json.dumps(payload), safe="")
    ts = str(int(timestamp))
    signature = SignatureVerifier(signing_secret).generate_signature(timestamp=ts, body=body)
    return body, {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": str(signature),
    }
