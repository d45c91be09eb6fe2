"""Hostile but well-signed inputs: deeply nested JSON and button clicks without a value."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest

from quotagov.governance.model.escalation import EscalationStatus
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


# -- the escalation and Slack routes answer in the one error format --------------------


def _escalation_raw(body: str, content_type: str = "application/json") -> tuple[int, Any]:
    from quotagov.handlers import escalations_api

    event = rest_event(
        "escalations_api-request",
        path="/jobs/sub-bg-2/escalations",
        path_parameters={"jobId": "sub-bg-2"},
        body=body,
        principal=ALICE,
    )
    event["headers"] = {**event["headers"], "Content-Type": content_type}
    event["multiValueHeaders"] = {
        **(event.get("multiValueHeaders") or {}),
        "Content-Type": [content_type],
    }
    response = escalations_api.handler(event, LambdaContext())  # type: ignore[arg-type]
    return int(response["statusCode"]), json.loads(response["body"])


def _untouched(world: World) -> None:
    assert world.escalations.with_status(EscalationStatus.PENDING) == []
    assert world.update_calls == []
    assert world.slack.messages == []
    assert world.audit.decisions == []


def test_malformed_escalation_body_is_400_naming_the_body_not_a_bare_422(world: World) -> None:
    status, reply = _escalation_raw('{"level": "high", "reason": "x",}')
    assert (status, reply) == (
        400,
        {
            "message": "invalid request",
            "faults": [
                {
                    "path": "(body)",
                    "fault": "not valid JSON: Expecting property name enclosed in double "
                    "quotes at line 1 column 33 (character 32)",
                }
            ],
        },
    )
    _untouched(world)


def test_escalation_missing_and_unknown_fields_are_400_by_path(world: World) -> None:
    status, reply = _escalation_raw(json.dumps({"level": "high", "why": "x"}))
    assert (status, reply) == (
        400,
        {
            "message": "invalid request",
            "faults": [
                {"path": "reason", "fault": "Field required"},
                {"path": "why", "fault": "Extra inputs are not permitted"},
            ],
        },
    )
    _untouched(world)


def test_escalation_text_plain_is_415_in_the_same_format(world: World) -> None:
    status, reply = _escalation_raw(json.dumps({"level": "high", "reason": REASON}), "text/plain")
    assert (status, reply) == (
        415,
        {
            "message": "invalid request",
            "faults": [
                {
                    "path": "headers.Content-Type",
                    "fault": "'text/plain' is not accepted: send the body as application/json",
                }
            ],
        },
    )
    _untouched(world)


def test_escalation_as_form_fields_that_would_validate_is_still_415(world: World) -> None:
    # Powertools reads a form body as fields; these would pass the schema
    status, reply = _escalation_raw(
        urlencode({"level": "high", "reason": REASON}), "application/x-www-form-urlencoded"
    )
    assert status == 415
    assert reply["faults"][0]["path"] == "headers.Content-Type"
    _untouched(world)


def test_slack_request_without_payload_says_what_is_missing(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    from quotagov.handlers import slack_interactions

    event = world.raw_click_event(body["escalationId"], b"token=x&team_id=T0")
    response = slack_interactions.handler(event, LambdaContext())  # type: ignore[arg-type]
    assert (response["statusCode"], json.loads(response["body"])) == (
        400,
        {
            "message": "invalid request",
            "faults": [
                {
                    "path": "payload",
                    "fault": "missing: Slack sends a click as the form field 'payload' "
                    "(application/x-www-form-urlencoded)",
                }
            ],
        },
    )
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert world.update_calls == []


def test_slack_body_that_is_not_utf8_is_refused_and_changes_nothing(world: World) -> None:
    from aws_lambda_powertools.event_handler import Response

    from quotagov.handlers.slack_interactions import _payload_of

    _, body = world.request("sub-bg-2", "high", REASON)
    # the signature is over the raw bytes: a signed body that is not UTF-8 is a 400
    assert send(world.raw_click_event(body["escalationId"], b"payload=\xff\xfe")) == 400
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.PENDING
    answer = _payload_of(b"payload=\xff\xfe")
    assert isinstance(answer, Response) and answer.status_code == 400
    assert json.loads(str(answer.body)) == {
        "message": "invalid request",
        "faults": [
            {"path": "(body)", "fault": "not UTF-8 form data (invalid start byte at byte 8)"}
        ],
    }
