"""Slack request signing: is this request from Slack, and fresh?

Slack, "Verifying requests from Slack",
https://api.slack.com/authentication/verifying-requests-from-slack.

:func:`verify_slack_request` checks the ``X-Slack-Signature`` header over the raw body
bytes as Slack sent them (base64-decoded when API Gateway or a function URL set
``isBase64Encoded``), header names in any case, and a 300 s timestamp window on
quotagov's injectable clock. It never raises: a missing, malformed, stale or wrong
signature, or an undecodable body, is simply not valid.

The HMAC is computed here, over bytes, and compared with :func:`hmac.compare_digest`:
slack_sdk's ``SignatureVerifier`` decodes the body as UTF-8 before hashing, so a body
Slack signed that is not valid UTF-8 would fail there (and a decoded-then-re-encoded
body is not what Slack signed). The base string and window are Slack's
(``v0:<timestamp>:<body>``, HMAC-SHA256 hex, ``v0=`` prefix, 300 s).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from quotagov.clock import Clock

#: Slack's replay window: a timestamp further than this from now is refused (seconds).
MAX_SKEW_SECONDS = 300

#: Signature version Slack uses (``v0=`` prefix and ``v0:`` base string).
SIGNATURE_VERSION = "v0"


#: Longest ``X-Slack-Request-Timestamp`` read (epoch seconds need 10 digits until 2286):
#: a longer one is refused before it is converted, so that a huge header from the
#: internet is a 401, never a failure of the function (Python refuses to convert
#: decimal strings over 4300 digits).
MAX_TIMESTAMP_DIGITS = 12


def timestamp_fault(event: Mapping[str, Any]) -> str | None:
    """The reason an ``X-Slack-Request-Timestamp`` of decimal digits is refused unread
    (longer than :data:`MAX_TIMESTAMP_DIGITS`), else None (other faults are the
    signature's: :func:`verify_slack_request`)."""
    timestamp = request_headers(event).get("x-slack-request-timestamp", "")
    if len(timestamp) > MAX_TIMESTAMP_DIGITS:
        return (
            f"X-Slack-Request-Timestamp: {len(timestamp)} characters, "
            f"at most {MAX_TIMESTAMP_DIGITS} digits are read"
        )
    return None


def slack_signature(signing_secret: str, timestamp: str, body: bytes) -> str:
    """``v0=`` + hex HMAC-SHA256 of ``b"v0:<timestamp>:" + body`` keyed with the secret.

    Args:
        signing_secret: the Slack app's signing secret.
        timestamp: ``X-Slack-Request-Timestamp`` as sent (decimal epoch seconds).
        body: the raw request body bytes, never decoded.
    """
    base = f"{SIGNATURE_VERSION}:{timestamp}:".encode("ascii") + body
    digest = hmac.new(signing_secret.encode("utf-8"), base, hashlib.sha256).hexdigest()
    return f"{SIGNATURE_VERSION}={digest}"


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
    try:
        return body.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return None


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

    Args:
        event: an API Gateway REST (v1), HTTP API (v2) or Lambda function URL event
            (``body``, ``isBase64Encoded``, ``headers``/``multiValueHeaders``).
        signing_secret: the Slack app's signing secret.
        clock: the time source of the 300 s window (epoch seconds).

    Never raises: malformed or overlong timestamps (:func:`timestamp_fault`),
    non-ASCII signatures and undecodable bodies all count as invalid. A body that is
    not UTF-8 is verified as the bytes it is.
    """
    body = raw_body(event)
    if body is None:
        return None
    headers = request_headers(event)
    timestamp = headers.get("x-slack-request-timestamp", "")
    signature = headers.get("x-slack-signature", "")
    if not timestamp.isascii() or not timestamp.isdigit() or not signature.isascii():
        return None
    if len(timestamp) > MAX_TIMESTAMP_DIGITS:
        return None
    if abs(clock.now() - int(timestamp)) > MAX_SKEW_SECONDS:
        return None
    expected = slack_signature(signing_secret, timestamp, body)
    valid = hmac.compare_digest(expected.encode("ascii"), signature.encode("ascii"))
    return body if valid else None
