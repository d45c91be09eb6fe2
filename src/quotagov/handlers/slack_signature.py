"""Slack request signing: is this request from Slack, and fresh? (reference §7.1).

:func:`verify_slack_request` checks the ``X-Slack-Signature`` header with slack_sdk's
``SignatureVerifier`` over the raw body as Slack sent it (base64-decoded when API
Gateway set ``isBase64Encoded``), header names in any case, and a 300 s timestamp
window on quotagov's injectable clock. It never raises: a missing, malformed, stale or
wrong signature, or an undecodable body, is simply not valid.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from slack_sdk.signature import Clock as SlackClock
from slack_sdk.signature import SignatureVerifier

from quotagov.clock import Clock


class _VerifierClock(SlackClock):
    """slack_sdk's clock interface over quotagov's injectable clock."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def now(self) -> float:
        """Epoch seconds from the injected clock."""
        return self._clock.now()


def raw_body(event: Mapping[str, Any]) -> bytes | None:
    """The body bytes as Slack sent them, or None when the body cannot be decoded."""
    body = event.get("body")
    if body is None:
        return b""
    if not isinstance(body, str):
        return None
    if event.get("isBase64Encoded"):
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            return None
    return body.encode("utf-8")


def request_headers(event: Mapping[str, Any]) -> dict[str, str]:
    """Headers with lower-case names; ``headers`` wins over ``multiValueHeaders``."""
    merged: dict[str, str] = {}
    multi = event.get("multiValueHeaders")
    if isinstance(multi, Mapping):
        for name, values in multi.items():
            if isinstance(name, str) and isinstance(values, list) and values:
                merged[name.lower()] = str(values[-1])
    single = event.get("headers")
    if isinstance(single, Mapping):
        for name, value in single.items():
            if isinstance(name, str) and isinstance(value, str):
                merged[name.lower()] = value
    return merged


def verify_slack_request(
    event: Mapping[str, Any], signing_secret: str, clock: Clock
) -> bytes | None:
    """The raw body when the event carries a valid, fresh Slack signature; else None.

    Never raises: malformed timestamps, non-ASCII signatures and undecodable bodies
    all count as invalid.
    """
    body = raw_body(event)
    if body is None:
        return None
    headers = request_headers(event)
    timestamp = headers.get("x-slack-request-timestamp", "")
    signature = headers.get("x-slack-signature", "")
    if not timestamp.isascii() or not timestamp.isdigit() or not signature.isascii():
        return None
    try:
        verifier = SignatureVerifier(signing_secret, clock=_VerifierClock(clock))
        valid = verifier.is_valid(body=body, timestamp=timestamp, signature=signature)
    except (ValueError, TypeError):
        return None
    return body if valid else None
