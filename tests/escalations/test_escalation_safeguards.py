"""Safeguards of the escalation life cycle: four-eyes without a Slack id, one open
escalation per job, never lowering a priority, one application per approval."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

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


# -- finding 7: overlapping retry runs apply once ------------------------------------------


class SlowFirstUpdate:
    """A Batch whose first ``UpdateServiceJob`` waits until released (a slow call)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.entered = threading.Event()
        self.release = threading.Event()
        self.update_calls: list[dict[str, Any]] = []

    def update_service_job(self, **request: Any) -> Any:
        self.update_calls.append(request)
        if len(self.update_calls) == 1:
            self.entered.set()
            self.release.wait(10)
        return self.inner.update_service_job(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_overlapping_retry_runs_apply_a_failed_approval_once(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    world.batch.fail_next("UpdateServiceJob", code="ServerException", message="boom")
    assert world.click(body["escalationId"], "U0CAROL") == 200
    failed = world.escalations.get(body["escalationId"])
    assert failed is not None and failed.status is EscalationStatus.APPLY_FAILED
    assert failed.claimed_at == failed.decided_at == world.clock.now()

    world.clock.advance(1000)  # later than STALE_APPROVAL_SECONDS after the approval
    slow = SlowFirstUpdate(world.batch)
    wiring.services().set("batch", slow)
    results: list[dict[str, Any]] = []
    run_a = threading.Thread(target=lambda: results.append(world.expire()))
    run_a.start()
    try:
        assert slow.entered.wait(10)
        claimed = world.escalations.get(body["escalationId"])
        assert claimed is not None
        assert (claimed.status, claimed.claimed_at) == (
            EscalationStatus.APPROVED,
            world.clock.now(),
        )
        results.append(world.expire())  # run B overlaps run A's UpdateServiceJob
    finally:
        slow.release.set()
        run_a.join()

    assert slow.update_calls == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": 50}]
    assert sorted((r["retried"] for r in results), key=len) == [
        {},
        {body["escalationId"]: "APPLIED"},
    ]
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None
    assert (stored.status, stored.apply_attempts) == (EscalationStatus.APPLIED, 2)


def test_a_claim_older_than_the_limit_is_released_only_once(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    now = world.clock.now()
    approved = world.escalations.transition(
        body["escalationId"],
        EscalationStatus.PENDING,
        {"status": EscalationStatus.APPROVED, "decided_at": now, "claimed_at": now},
    )
    assert approved is not None
    table = world.escalations
    assert table.release_stale_claim(body["escalationId"], now, "interrupted") is None
    released = table.release_stale_claim(body["escalationId"], now + 1, "interrupted")
    assert released is not None
    assert (released.status, released.error) == (EscalationStatus.APPLY_FAILED, "interrupted")
    assert table.release_stale_claim(body["escalationId"], now + 1, "interrupted") is None
