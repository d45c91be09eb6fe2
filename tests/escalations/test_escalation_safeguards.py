"""Safeguards of the escalation life cycle: four-eyes without a Slack id, one open
escalation per job, never lowering a priority, one application per approval."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from quotagov import wiring
from quotagov.governance.escalation_records import EscalationStatus
from quotagov.policy import parse_policy

from .world import ERIN, World, build_world, walkthrough_policy

REASON = "Camera-ready deadline on Friday; bg-2 produces the final ablation."


@pytest.fixture
def erin_without_slack_id(dynamodb_endpoint: str, aws_env: None) -> Iterator[World]:
    """The walkthrough world where Erin (research member and approver U0ERIN) has no
    ``slackUserId`` on her member entry."""
    data = walkthrough_policy().model_dump(mode="json", exclude_none=True)
    for member in data["teams"]["research"]["members"]:
        if member["principal"] == ERIN:
            member.pop("slackUserId", None)
    built = build_world(parse_policy(data), dynamodb_endpoint)
    try:
        yield built
    finally:
        built.slack.stop()
        wiring.reset()


def audit_actions(world: World) -> list[str]:
    return [d.action for d in world.audit.decisions]


# -- finding 1: four-eyes needs the requester's Slack id ---------------------------------


def test_requester_without_slack_id_cannot_ask_for_an_approval_level(
    erin_without_slack_id: World,
) -> None:
    world = erin_without_slack_id
    status, body = world.request("sub-bg-2", "high", REASON, principal=ERIN)
    assert status == 422
    assert body["message"] == (
        f"teams.research.members: {ERIN} has no slackUserId, "
        "so approvers cannot be checked against the requester"
    )
    assert world.escalations.with_status(EscalationStatus.PENDING) == []
    assert world.slack.messages == []
    assert world.update_calls == []
    assert audit_actions(world) == ["EscalationRefused"]
    assert world.audit.decisions[0].details["statusCode"] == 422


@pytest.mark.parametrize("clicker", ["U0ERIN", "U0CAROL"])
def test_click_on_a_request_without_requester_slack_id_is_refused(
    world: World, clicker: str
) -> None:
    _, body = world.request("sub-bg-2", "high", REASON, principal=ERIN)
    # A record written before the request-time check (or by hand) has no requester id.
    stripped = world.escalations.transition(
        body["escalationId"], EscalationStatus.PENDING, {"requester_slack_id": None}
    )
    assert stripped is not None and stripped.requester_slack_id is None
    assert world.click(body["escalationId"], clicker) == 200
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None
    assert (stored.status, stored.decided_by) == (EscalationStatus.PENDING, None)
    assert world.update_calls == []
    [notice] = world.slack.calls_to("response_url")
    assert "four-eyes: the request has no requester Slack user id" in notice.params["text"]
    refused = world.audit.decisions[-1]
    assert (refused.action, refused.actor) == ("EscalationDecisionRefused", clicker)
