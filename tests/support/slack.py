"""Slack as the handlers meet it: signed interaction requests, and the fake Slack's client.

:func:`slack_signature` is computed here, apart from ``quotagov``'s own code, so that
the signature checks are tested against Slack's algorithm rather than against
themselves.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode

from quotagov.adapters.slack import SlackChatNotifier, build_web_client
from quotagov_tools.local.fake_slack import FakeSlack
from support.events import load_event

#: The sample click, an API Gateway REST event: ``events/slack_interactions-approve.json``.
SAMPLE_CLICK = "slack_interactions-approve"


def slack_signature(secret: str, timestamp: int | str, body: bytes) -> str:
    """``X-Slack-Signature`` exactly as Slack computes it ("Verifying requests from Slack")."""
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def chat_for(fake: FakeSlack) -> SlackChatNotifier:
    """The real Slack adapter (slack_sdk ``WebClient``) talking to ``fake``."""
    return SlackChatNotifier(build_web_client(fake.token, fake.base_url))


def click_payload(
    *,
    user: str,
    channel: str,
    ts: str,
    response_url: str,
    action_id: str,
    value: str,
    block_id: str,
) -> dict[str, Any]:
    """The sample click's ``block_actions`` payload, made by Slack user ``user`` on button
    ``action_id`` (``value``, in block ``block_id``) of message ``ts`` in ``channel``."""
    event = load_event(SAMPLE_CLICK)
    form = parse_qs(base64.b64decode(event["body"]).decode())
    payload: dict[str, Any] = json.loads(form["payload"][0])
    payload["user"] = {"id": user, "username": user.lower(), "name": user.lower()}
    payload["container"].update(channel_id=channel, message_ts=ts)
    payload["channel"]["id"] = channel
    payload["message"]["ts"] = ts
    payload["response_url"] = response_url
    payload["actions"][0].update(action_id=action_id, value=value, block_id=block_id)
    return payload


def click_event(
    payload: dict[str, Any],
    *,
    secret: str,
    timestamp: int,
    tamper: Callable[[bytes], bytes] | None = None,
) -> dict[str, Any]:
    """``POST /slack/interactions`` carrying ``payload`` as Slack sends it: form-encoded,
    base64 in the event, signed with ``secret`` at ``timestamp``. ``tamper`` changes the
    body after signing (a forged request)."""
    body = urlencode({"payload": json.dumps(payload, separators=(",", ":"))}).encode()
    signature = slack_signature(secret, timestamp, body)
    if tamper is not None:
        body = tamper(body)
    event = load_event(SAMPLE_CLICK)
    event["body"] = base64.b64encode(body).decode()
    event["isBase64Encoded"] = True
    event["headers"]["X-Slack-Request-Timestamp"] = str(timestamp)
    event["headers"]["X-Slack-Signature"] = signature
    event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
    return event
