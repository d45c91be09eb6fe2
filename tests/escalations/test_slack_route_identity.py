"""The Slack route as an attacker meets it: signatures over raw bytes, and the three
event shapes Slack apps are deployed behind (REST v1, HTTP API v2, function URL)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotagov.governance.model.escalation import EscalationStatus
from support.lambda_context import LambdaContext
from support.lambda_http_events import function_url_event, http_api_v2_event

from .world import World

REASON = "Camera-ready deadline on Friday; bg-2 produces the final ablation."


def _send(event: dict[str, Any]) -> dict[str, Any]:
    from quotagov.handlers import slack_interactions

    response: dict[str, Any] = slack_interactions.handler(event, LambdaContext())  # type: ignore[arg-type]
    return response


def _pending(world: World) -> str:
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 201, body
    escalation_id: str = body["escalationId"]
    return escalation_id


def test_a_signed_body_that_is_not_utf8_is_verified_then_refused_as_unusable(
    world: World,
) -> None:
    """Slack signs bytes: a correctly signed non-UTF-8 body passes the signature (so it
    is not a 401) and is then an unusable payload (400); nothing changes."""
    escalation_id = _pending(world)
    raw = b"payload=%7B%22type%22%3A%22block_actions%22%7D\xff\xfe"
    response = _send(world.raw_click_event(escalation_id, raw))
    assert response["statusCode"] == 400
    assert json.loads(response["body"]) == {
        "message": "invalid request",
        "faults": [
            {"path": "(body)", "fault": "not UTF-8 form data (invalid start byte at byte 46)"}
        ],
    }
    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert world.update_calls == []


def test_one_flipped_byte_of_a_non_utf8_body_is_401(world: World) -> None:
    escalation_id = _pending(world)
    raw = b"payload=%7B%7D\xff"
    event = world.raw_click_event(escalation_id, raw)
    event["body"] = __import__("base64").b64encode(raw[:-1] + b"\xfe").decode()
    response = _send(event)
    assert response["statusCode"] == 401
    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.PENDING


def test_the_signature_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verifier's answer comes from ``hmac.compare_digest`` (no early exit on the
    first differing character)."""
    from quotagov.clock import ManualClock
    from quotagov.handlers import slack_signature

    calls: list[tuple[bytes, bytes]] = []
    real = slack_signature.hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(slack_signature.hmac, "compare_digest", spy)
    body = b"payload=%7B%7D"
    good = slack_signature.slack_signature("s3cret", "1700000000", body)
    event = {
        "body": body.decode(),
        "headers": {"X-Slack-Request-Timestamp": "1700000000", "X-Slack-Signature": good},
    }
    assert slack_signature.verify_slack_request(event, "s3cret", ManualClock(1700000000)) == body
    event["headers"]["X-Slack-Signature"] = "v0=" + "0" * 64
    assert slack_signature.verify_slack_request(event, "s3cret", ManualClock(1700000000)) is None
    assert [b for _a, b in calls] == [good.encode(), ("v0=" + "0" * 64).encode()]


@pytest.mark.parametrize("shape", [http_api_v2_event, function_url_event], ids=["v2", "url"])
def test_http_api_v2_and_function_url_clicks_are_verified_and_recorded(
    world: World, shape: Any
) -> None:
    escalation_id = _pending(world)
    response = _send(shape(world.click_event(escalation_id, "U0CAROL")))
    assert response["statusCode"] == 200, response
    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.APPLIED
    assert stored.decided_by == "U0CAROL"


@pytest.mark.parametrize("shape", [http_api_v2_event, function_url_event], ids=["v2", "url"])
def test_forged_v2_and_function_url_clicks_are_401_and_change_nothing(
    world: World, shape: Any
) -> None:
    escalation_id = _pending(world)
    response = _send(shape(world.click_event(escalation_id, "U0CAROL", secret="not-the-secret")))
    assert response["statusCode"] == 401
    assert json.loads(response["body"]) == {"message": "invalid Slack request signature"}
    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert stored.decided_by is None and world.update_calls == []


def test_a_five_thousand_digit_timestamp_is_a_401_with_its_reason(world: World) -> None:
    """From the internet (no right held): a signed-looking click whose
    X-Slack-Request-Timestamp has 5,000 digits is a 401 naming the header, not a
    failure of the function; the escalation stays PENDING."""
    escalation_id = _pending(world)
    event = world.click_event(escalation_id, "U0CAROL")
    event["headers"]["X-Slack-Request-Timestamp"] = "9" * 5000
    response = _send(event)
    assert response["statusCode"] == 401
    assert json.loads(response["body"]) == {
        "message": "invalid Slack request signature: X-Slack-Request-Timestamp: "
        "5000 characters, at most 12 digits are read"
    }
    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.PENDING


def test_a_click_replayed_within_the_window_is_refused_and_changes_nothing(
    world: World, dynamodb_endpoint: str
) -> None:
    """No right held but a captured request (a proxy log, a browser extension): a
    signed Deny click sent again within Slack's 300 s window verifies, but its
    signature was already used: 401, and the escalation stays as the first click left
    it."""
    import copy

    import boto3

    from quotagov import composition
    from quotagov.adapters.dynamodb_replay import DynamoDBReplayCache

    client = boto3.client("dynamodb", region_name="eu-west-1", endpoint_url=dynamodb_endpoint)
    client.create_table(
        TableName="replays",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    composition.provide(slack_replays=DynamoDBReplayCache("replays", client, world.clock))
    escalation_id = _pending(world)
    click = world.click_event(escalation_id, "U0CAROL", "escalation_deny")
    first = _send(copy.deepcopy(click))
    assert first["statusCode"] == 200, first
    after_first = world.escalations.get(escalation_id)
    assert after_first is not None and after_first.status is EscalationStatus.DENIED
    world.clock.advance(120)  # still inside the 300 s window
    replayed = _send(click)
    assert replayed["statusCode"] == 401
    assert json.loads(replayed["body"]) == {
        "message": "replayed Slack request: this signature was already used"
    }
    assert world.escalations.get(escalation_id) == after_first


def test_a_click_whose_replay_check_fails_is_a_503_and_records_nothing(world: World) -> None:
    """DynamoDB refuses the replay cache's write (throttled): the documented 503, the
    click is not recorded (the user clicks again)."""
    from botocore.exceptions import ClientError

    from quotagov import composition

    class Throttled:
        def first_use(self, signature: str) -> bool:
            error = {"Error": {"Code": "ProvisionedThroughputExceededException"}}
            raise ClientError(error, "PutItem")  # type: ignore[arg-type]

    composition.provide(slack_replays=Throttled())
    escalation_id = _pending(world)
    response = _send(world.click_event(escalation_id, "U0CAROL", "escalation_deny"))
    assert response["statusCode"] == 503
    assert json.loads(response["body"]) == {
        "message": "Slack request not checked for replay: try again"
    }
    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.PENDING
