"""Safeguards of the escalation life cycle: four-eyes without a Slack id, one open
escalation per job, never lowering a priority, one application per approval."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from quotagov import composition
from quotagov.governance.model.escalation import EscalationStatus
from quotagov.policy import PolicyError, parse_policy
from quotagov.policy.models import Policy

from .world import ERIN, World, build_world, walkthrough_policy

REASON = "Camera-ready deadline on Friday; bg-2 produces the final ablation."


@pytest.fixture
def erin_without_slack_id(dynamodb_endpoint: str, aws_env: None) -> Iterator[World]:
    """The walkthrough world where Erin (research member and approver U0ERIN) has no
    ``slackUserId`` on her member entry.

    ``policy validate`` refuses such a policy; the models alone accept it, and
    the request-time check stays as a second line for a policy loaded without the
    cross-field rules."""
    data = walkthrough_policy().model_dump(mode="json", exclude_none=True)
    for member in data["teams"]["research"]["members"]:
        if member["principal"] == ERIN:
            member.pop("slackUserId", None)
    with pytest.raises(PolicyError, match=r"teams\.research\.members\[2\]\.slackUserId: required"):
        parse_policy(data)
    built = build_world(Policy.model_validate(data), dynamodb_endpoint)
    try:
        yield built
    finally:
        built.slack.stop()
        composition.reset()


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
    stripped = world.escalations.transition_if_status(
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

    # One checkpoint interval (600 s) later: bg-1's unsaved work is back to the 300 s
    # the approver saw, so the retry's impact recheck finds no change and applies.
    world.clock.advance(600)
    world.batch.sync()
    slow = SlowFirstUpdate(world.batch)
    composition.provide(batch=slow)
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
    approved = world.escalations.transition_if_status(
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


# -- findings 2 and 9: one open escalation per job; never lower a priority ---------------


def budget_used(world: World) -> int:
    """Units of research's escalation budget taken in the current period."""
    period = world.policy.teams["research"].escalationBudget.periodSeconds
    start = int(world.clock.now() // period) * period
    return world.escalations.budget_used(f"budget#research#{start}")


def test_a_second_request_while_one_is_open_is_refused_without_budget_or_message(
    world: World,
) -> None:
    status, first = world.request("sub-bg-2", "high", REASON)
    assert status == 201
    assert world.escalations.open_escalation_id("sub-bg-2") == first["escalationId"]
    retry = world.request("sub-bg-2", "high", REASON)  # a client retry
    other = world.request(world.job_ids["bg-2"], "urgent", REASON)  # by Batch job id
    expected = (
        f"jobId: job 'bg-2' already has an open escalation {first['escalationId']} "
        "(level 'high', PENDING); wait until it is closed"
    )
    assert retry == (422, {"message": expected})
    assert other == (422, {"message": expected})
    assert [e.escalation_id for e in world.escalations.with_status(EscalationStatus.PENDING)] == [
        first["escalationId"]
    ]
    assert budget_used(world) == 1
    assert len(world.slack.messages) == 1
    assert audit_actions(world) == [
        "EscalationRequested",
        "EscalationRefused",
        "EscalationRefused",
    ]


@pytest.mark.parametrize("close", ["deny", "expire", "apply"])
def test_closing_an_escalation_frees_the_job(world: World, close: str) -> None:
    _, first = world.request("sub-bg-2", "high", REASON)
    if close == "deny":
        assert world.click(first["escalationId"], "U0CAROL", "escalation_deny") == 200
    elif close == "expire":
        world.clock.advance(3601)
        assert world.expire()["expired"] == [first["escalationId"]]
    else:
        assert world.click(first["escalationId"], "U0CAROL") == 200
    assert world.escalations.open_escalation_id("sub-bg-2") is None
    status, second = world.request("sub-bg-2", "urgent", REASON)
    assert (status, second["status"]) == (201, "PENDING")
    assert world.escalations.open_escalation_id("sub-bg-2") == second["escalationId"]


def test_a_lock_left_by_a_closed_escalation_is_freed_by_the_next_request(world: World) -> None:
    _, first = world.request("sub-bg-2", "high", REASON)
    assert world.click(first["escalationId"], "U0CAROL", "escalation_deny") == 200
    # An invocation that died between DENIED and freeing the lock left it behind.
    world.escalations.client.put_item(
        TableName=world.escalations.table_name,
        Item={"pk": {"S": "open#sub-bg-2"}, "escalationId": {"S": first["escalationId"]}},
    )
    status, second = world.request("sub-bg-2", "high", REASON)
    assert status == 201
    assert world.escalations.open_escalation_id("sub-bg-2") == second["escalationId"]
    assert budget_used(world) == 2


def test_simultaneous_duplicate_requests_open_one_escalation(world: World) -> None:
    barrier = threading.Barrier(8)
    statuses: list[int] = []
    lock = threading.Lock()

    def request() -> None:
        barrier.wait()
        status, _ = world.request("sub-bg-2", "high", REASON)
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=request) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201] + [422] * 7
    assert len(world.escalations.with_status(EscalationStatus.PENDING)) == 1
    assert budget_used(world) == 1
    assert len(world.slack.messages) == 1


@pytest.mark.parametrize("raised_to", [50, 90])
def test_an_approval_never_lowers_a_priority_raised_meanwhile(world: World, raised_to: int) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)  # 10 -> 50
    # Raised outside this escalation (another tool, an operator) before the approval.
    world.batch.update_service_job(jobId=world.job_ids["bg-2"], schedulingPriority=raised_to)
    world.clock.advance(5)
    assert world.click(body["escalationId"], "U0CAROL") == 200

    assert world.update_calls == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": raised_to}]
    assert world.describe("bg-2")["schedulingPriority"] == raised_to
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None
    assert (stored.status, stored.superseded_priority, stored.apply_attempts) == (
        EscalationStatus.SUPERSEDED,
        raised_to,
        1,
    )
    assert stored.decided_by == "U0CAROL"
    record = world.jobs.get("sub-bg-2")
    assert record is not None and record.priorityLevel == "standard"  # not noted as "high"
    [message] = world.slack.messages
    text = str(message.blocks)
    assert "not applied: Batch already runs the job at schedulingPriority" in text
    assert audit_actions(world) == [
        "EscalationRequested",
        "EscalationApproved",
        "EscalationSuperseded",
    ]
    superseded = world.audit.decisions[-1]
    assert superseded.details["schedulingPriority"] == {"current": raised_to, "requested": 50}
    assert world.escalations.open_escalation_id("sub-bg-2") is None


def test_a_retried_approval_never_lowers_a_priority_raised_meanwhile(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    world.batch.fail_next("UpdateServiceJob", code="ServerException", message="boom")
    assert world.click(body["escalationId"], "U0CAROL") == 200
    world.batch.update_service_job(jobId=world.job_ids["bg-2"], schedulingPriority=90)
    world.clock.advance(300)
    assert world.expire()["retried"] == {body["escalationId"]: "SUPERSEDED"}
    assert world.update_calls == [
        {"jobId": world.job_ids["bg-2"], "schedulingPriority": 50},  # the failed call
        {"jobId": world.job_ids["bg-2"], "schedulingPriority": 90},  # outside quotagov
    ]
    assert world.describe("bg-2")["schedulingPriority"] == 90
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None
    assert (stored.status, stored.superseded_priority, stored.apply_attempts) == (
        EscalationStatus.SUPERSEDED,
        90,
        2,
    )
    assert world.expire()["retried"] == {}


# -- an approval whose first reply was lost, and one whose retries ran out -------------


class _LostFirstReply:
    """A Batch whose first ``UpdateServiceJob`` takes effect but answers with a 5xx."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0

    def update_service_job(self, **request: Any) -> Any:
        from quotagov.governance.ports import BatchServerError

        self.calls += 1
        answer = self.inner.update_service_job(**request)
        if self.calls == 1:
            raise BatchServerError("UpdateServiceJob", "ServerException", "read timeout")
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_an_approval_whose_reply_was_lost_is_applied_on_retry(world: World) -> None:
    lossy = _LostFirstReply(world.batch)
    composition.provide(batch=lossy)
    status, body = world.request("sub-bg-2", "high", "deadline")
    assert status == 201, body
    escalation_id = body["escalationId"]
    assert world.click(escalation_id, "U0CAROL") == 200
    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.APPLY_FAILED
    assert world.describe("bg-2")["schedulingPriority"] == 50  # Batch did apply it

    world.clock.advance(60)
    world.expire()
    stored = world.escalations.get(escalation_id)
    record = world.jobs.get("sub-bg-2")
    assert stored is not None and record is not None
    assert stored.status is EscalationStatus.APPLIED
    assert (record.priorityLevel, record.schedulingPriority) == ("high", 50)
    assert lossy.calls == 1  # the retry found 50 and did not call Batch again
    assert audit_actions(world)[-1] == "EscalationApplied"


def test_an_approval_out_of_retries_frees_the_job_for_a_new_request(world: World) -> None:
    status, body = world.request("sub-bg-2", "high", "deadline")
    assert status == 201, body
    world.batch.fail_next("UpdateServiceJob", code="TooManyRequestsException", times=10)
    assert world.click(body["escalationId"], "U0CAROL") == 200
    for _ in range(6):
        world.clock.advance(60)
        world.expire()
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None
    assert (stored.status, stored.apply_attempts) == (EscalationStatus.APPLY_FAILED, 5)
    assert audit_actions(world).count("EscalationAbandoned") == 1
    world.expire()  # later runs record nothing more
    assert audit_actions(world).count("EscalationAbandoned") == 1

    again, answer = world.request("sub-bg-2", "urgent", "still blocked")
    assert again == 201, answer
    assert answer["status"] == "PENDING"
