"""Slack request verification: Slack's own example, header case, base64, and refusals."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from quotagov.clock import ManualClock
from quotagov.handlers.slack_interactions import verify_slack_request
from support.slack import slack_signature

# Slack's published request-signing example (Slack, "Verifying requests from Slack",
# https://api.slack.com/authentication/verifying-requests-from-slack).
SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
SLACK_TS = 1531420618
SLACK_BODY = (
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&"
    "channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&"
    "command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands"
    "%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&"
    "trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
)
SLACK_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"


def event(
    body: str,
    headers: dict[str, str] | None,
    *,
    encode: bool = False,
    multi: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    return {
        "body": base64.b64encode(body.encode()).decode() if encode else body,
        "isBase64Encoded": encode,
        "headers": headers,
        "multiValueHeaders": multi,
    }


def test_slacks_published_example_verifies() -> None:
    headers = {"X-Slack-Request-Timestamp": str(SLACK_TS), "X-Slack-Signature": SLACK_SIGNATURE}
    verified = verify_slack_request(event(SLACK_BODY, headers), SLACK_SECRET, ManualClock(SLACK_TS))
    assert verified == SLACK_BODY.encode()
    assert slack_signature(SLACK_SECRET, SLACK_TS, SLACK_BODY.encode()) == SLACK_SIGNATURE


@pytest.mark.parametrize(
    "names",
    [
        ("x-slack-request-timestamp", "x-slack-signature"),
        ("X-SLACK-REQUEST-TIMESTAMP", "X-SLACK-SIGNATURE"),
        ("x-Slack-Request-timestamp", "X-slack-Signature"),
    ],
)
def test_header_names_in_any_case_and_base64_bodies(names: tuple[str, str]) -> None:
    headers = {names[0]: str(SLACK_TS), names[1]: SLACK_SIGNATURE}
    verified = verify_slack_request(
        event(SLACK_BODY, headers, encode=True), SLACK_SECRET, ManualClock(SLACK_TS)
    )
    assert verified == SLACK_BODY.encode()


def test_multi_value_headers_only() -> None:
    multi = {
        "X-Slack-Request-Timestamp": [str(SLACK_TS)],
        "X-Slack-Signature": [SLACK_SIGNATURE],
    }
    verified = verify_slack_request(
        event(SLACK_BODY, None, multi=multi), SLACK_SECRET, ManualClock(SLACK_TS)
    )
    assert verified == SLACK_BODY.encode()


def test_the_window_is_300_seconds_either_way() -> None:
    headers = {"X-Slack-Request-Timestamp": str(SLACK_TS), "X-Slack-Signature": SLACK_SIGNATURE}
    for skew, accepted in [(300, True), (301, False), (-300, True), (-301, False)]:
        clock = ManualClock(SLACK_TS + skew)
        result = verify_slack_request(event(SLACK_BODY, headers), SLACK_SECRET, clock)
        assert (result is not None) is accepted, skew


@pytest.mark.parametrize(
    ("body", "headers", "encode"),
    [
        # tampered body
        (SLACK_BODY.replace("roadrunner", "coyote"), None, False),
        # wrong secret's signature
        (SLACK_BODY, {"X-Slack-Signature": slack_signature("other", SLACK_TS, b"x")}, False),
        # missing signature / timestamp / all headers
        (SLACK_BODY, {"X-Slack-Signature": None}, False),
        (SLACK_BODY, {"X-Slack-Request-Timestamp": None}, False),
        (SLACK_BODY, "no-headers", False),
        # malformed timestamp and non-ASCII signature must not crash
        (SLACK_BODY, {"X-Slack-Request-Timestamp": "15314206l8"}, False),
        (SLACK_BODY, {"X-Slack-Request-Timestamp": "-1531420618"}, False),
        (SLACK_BODY, {"X-Slack-Signature": "v0=ä" + SLACK_SIGNATURE[4:]}, False),
    ],
)
def test_refusals_never_raise(body: str, headers: Any, encode: bool) -> None:
    base = {"X-Slack-Request-Timestamp": str(SLACK_TS), "X-Slack-Signature": SLACK_SIGNATURE}
    if headers == "no-headers":
        merged = None
    else:
        merged = {k: v for k, v in {**base, **(headers or {})}.items() if v is not None}
    result = verify_slack_request(
        event(body, merged, encode=encode), SLACK_SECRET, ManualClock(SLACK_TS)
    )
    assert result is None


def test_undecodable_base64_is_refused() -> None:
    headers = {"X-Slack-Request-Timestamp": str(SLACK_TS), "X-Slack-Signature": SLACK_SIGNATURE}
    bad = {"body": "%%%not-base64", "isBase64Encoded": True, "headers": headers}
    assert verify_slack_request(bad, SLACK_SECRET, ManualClock(SLACK_TS)) is None


def test_sample_event_verifies_and_re_signs() -> None:
    import json
    from pathlib import Path

    from quotagov_tools.local.fake_slack import sign_event

    sample = json.loads(
        (Path(__file__).resolve().parents[2] / "events/slack_interactions-approve.json").read_text()
    )
    ts = int(sample["headers"]["X-Slack-Request-Timestamp"])
    body = verify_slack_request(sample, "quotagov-example-signing-secret", ManualClock(ts))
    assert body is not None and body.startswith(b"payload=")
    assert verify_slack_request(sample, "another-secret", ManualClock(ts)) is None
    resigned = sign_event(sample, "another-secret", ts + 7200)
    assert verify_slack_request(resigned, "another-secret", ManualClock(ts + 7200)) == body
    assert resigned["multiValueHeaders"]["X-Slack-Signature"] == [
        resigned["headers"]["X-Slack-Signature"]
    ]
