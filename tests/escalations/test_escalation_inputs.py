"""Hostile but well-signed inputs: deeply nested JSON and button clicks without a value."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest

from quotagov.governance.escalation_records import EscalationStatus
from support.events import rest_event
from support.lambda_context import LambdaContext

from .world import ALICE, World

REASON = "Camera-ready deadline on Friday; bg-2 produces the final ablation."
#: 1000 levels of nesting: about 2 KB, past CPython's JSON decoder recursion limit.
NESTED = "[" * 1000 + "]" * 1000


def send(event: dict[str, Any]) -> int:
    from quotagov.handlers import slack_interactions

    response = slack_interactions.handler(event, LambdaContext())  # type: ignore[arg-type]
    return int(response["statusCode"])


def test_escalation_request_with_deeply_nested_body_is_400(world: World) -> None:
    from quotagov.handlers import escalations_api

    event = rest_event(
        "escalations_api-request",
        path="/jobs/sub-bg-2/escalations",
        path_parameters={"jobId": "sub-bg-2"},
        body='{"level":' + NESTED + ', "reason": "x"}',
        principal=ALICE,
    )
    response = escalations_api.handler(event, LambdaContext())  # type: ignore[arg-type]
    assert response["statusCode"] == 400
    assert json.loads(response["body"]) == {
        "message": "invalid request",
        "faults": [{"path": "(body)", "fault": "nested too deeply to decode"}],
    }
    assert world.escalations.with_status(EscalationStatus.PENDING) == []
    assert world.slack.messages == []


def test_deeply_nested_slack_payload_is_400(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    raw = urlencode({"payload": '{"type": "block_actions", "actions": ' + NESTED + "}"})
    assert send(world.raw_click_event(body["escalationId"], raw.encode())) == 400
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert world.update_calls == []


@pytest.mark.parametrize(
    ("action_id", "value"),
    [
        ("escalation_approve", None),
        ("escalation_deny", ""),
        ("escalation_approve", "   "),
        ("escalation_approve", "x" * 513),
        ("disposition_abandon", None),
        ("disposition_resubmit", ""),
    ],
)
def test_signed_click_without_a_usable_value_gets_a_private_notice(
    world: World, action_id: str, value: str | None
) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.channel and stored.ts
    action: dict[str, Any] = {"action_id": action_id}
    if value is not None:
        action["value"] = value
    payload = {
        "type": "block_actions",
        "user": {"id": "U0CAROL"},
        "actions": [action],
        "response_url": world.slack.response_url_for(stored.channel, stored.ts),
    }
    raw = urlencode({"payload": json.dumps(payload)}).encode()
    assert send(world.raw_click_event(body["escalationId"], raw)) == 200
    [notice] = world.slack.calls_to("response_url")
    assert notice.params["response_type"] == "ephemeral"
    assert notice.params["text"].startswith("Nothing was changed: the " + repr(action_id))
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert world.update_calls == []
