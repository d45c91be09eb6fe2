"""End to end through the handlers: walkthrough at t=900, escalation of bg-2 to "high".

DynamoDB on a loopback moto server, the simulated Batch, the loopback fake Slack;
Slack requests signed with the test signing secret exactly as Slack signs them.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from quotagov import composition
from quotagov.api_times import iso_utc
from quotagov.governance.model.escalation import EscalationStatus

from .world import ALICE, DAVE, ERIN, World, build_world, walkthrough_policy

REASON = "Camera-ready deadline on Friday; bg-2 produces the final ablation."


def message_text(blocks: list[dict[str, Any]]) -> str:
    """All mrkdwn/plain text of a message's blocks, joined."""
    parts: list[str] = []
    for block in blocks:
        for item in [block.get("text"), *block.get("fields", [])]:
            if isinstance(item, dict):
                parts.append(str(item.get("text", "")))
    return "\n".join(parts)


def actions_block(blocks: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((b for b in blocks if b["type"] == "actions"), None)


def audit_actions(world: World) -> list[str]:
    return [d.action for d in world.audit.decisions]


def test_walkthrough_state_at_900(world: World) -> None:
    assert {name: world.describe(name)["status"] for name in world.job_ids} == {
        "bg-1": "RUNNING",
        "bg-2": "RUNNABLE",
        "res-1": "RUNNING",
        "med-1": "RUNNING",
    }


def test_escalation_previews_preempting_bg1_and_approval_applies_it(world: World) -> None:
    status, body = world.request("sub-bg-2", "high", REASON)

    assert status == 201
    assert body["status"] == "PENDING"
    assert (body["currentPriority"], body["requestedPriority"]) == (10, 50)
    assert body["preview"]["outcome"] == "PREEMPTS"
    assert body["preview"]["preempted"] == [
        {
            "jobId": world.job_ids["bg-1"],
            "jobName": "bg-1",
            "quotaShareName": "background",
            "kind": "IN_SHARE",
            "unsavedSeconds": 300,
        }
    ]
    assert body["expiresAt"] == iso_utc(world.clock.now() + 3600)
    # The message in the share's approval channel.
    [message] = world.slack.messages
    assert (message.channel, message.ts) == (body["message"]["channel"], body["message"]["ts"])
    assert message.channel == "C0GOVERN"
    text = message_text(message.blocks)
    for expected in ("bg-2", "<@U0ALICE>", REASON.replace("'", "'"), "10 (standard)", "50 (high)"):
        assert expected in text
    assert "*bg-1*" in text and "300 s of unsaved work" in text
    buttons = actions_block(message.blocks)
    assert buttons is not None
    approve, deny = buttons["elements"]
    # the value names the escalation and the preview round the card shows (epoch ms)
    shown = f"{body['escalationId']}#r{round(world.clock.now() * 1000)}"
    assert (approve["action_id"], approve["value"]) == ("escalation_approve", shown)
    assert (deny["action_id"], deny["value"]) == ("escalation_deny", shown)
    assert "bg-1" in approve["confirm"]["text"]["text"] and "confirm" not in deny

    # An approver clicks Approve.
    world.clock.advance(5)
    assert world.click(body["escalationId"], "U0CAROL") == 200

    assert world.update_calls == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": 50}]
    world.batch.sync()  # the scheduling pass at this instant
    assert world.describe("bg-2")["status"] == "RUNNING"
    assert world.describe("bg-2")["schedulingPriority"] == 50
    assert world.describe("bg-1")["status"] == "RUNNABLE"  # preempted in-share
    record = world.jobs.get_by_batch_job_id(world.job_ids["bg-2"])
    assert record is not None
    assert (record.priorityLevel, record.schedulingPriority) == ("high", 50)
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None
    assert (stored.status, stored.decided_by, stored.apply_attempts) == (
        EscalationStatus.APPLIED,
        "U0CAROL",
        1,
    )
    updated = world.slack.message(message.channel, message.ts)
    assert updated.edits == 1
    assert actions_block(updated.blocks) is None
    assert "*Approved* by <@U0CAROL>" in message_text(updated.blocks)
    assert audit_actions(world) == [
        "EscalationRequested",
        "EscalationApproved",
        "EscalationApplied",
    ]
    applied = world.audit.decisions[-1]
    assert (applied.actor, applied.resource) == ("U0CAROL", body["escalationId"])
    assert applied.details["schedulingPriority"] == {"before": 10, "after": 50}

    # A repeated click (double click, Slack retry) changes nothing and says so privately.
    assert world.click(body["escalationId"], "U0ERIN") == 200
    assert len(world.update_calls) == 1
    assert world.slack.message(message.channel, message.ts).edits == 1
    [notice] = world.slack.calls_to("response_url")
    assert notice.params["response_type"] == "ephemeral"
    assert "already APPLIED" in notice.params["text"]


def test_deny_keeps_the_priority_and_shows_who_denied(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    assert world.click(body["escalationId"], "U0ERIN", "escalation_deny") == 200
    assert world.update_calls == []
    assert world.describe("bg-2")["schedulingPriority"] == 10
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.DENIED
    message = world.slack.messages[0]
    assert "*Denied* by <@U0ERIN>" in message_text(message.blocks)
    assert audit_actions(world) == ["EscalationRequested", "EscalationDenied"]


@pytest.mark.parametrize(
    ("clicker", "requester", "refusal"),
    [
        ("U0ERIN", ERIN, "four-eyes: you cannot decide your own request"),
        ("U0BOB", ALICE, "you are not an approver of quota share 'background'"),
        ("U0DAVE", ALICE, "you are not an approver of quota share 'background'"),
    ],
)
def test_refused_clicks_change_nothing(
    world: World, clicker: str, requester: str, refusal: str
) -> None:
    status, body = world.request("sub-bg-2", "high", REASON, principal=requester)
    assert status == 201
    assert world.click(body["escalationId"], clicker) == 200
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert world.update_calls == []
    assert world.slack.messages[0].edits == 0
    [notice] = world.slack.calls_to("response_url")
    assert refusal in notice.params["text"]
    refused = world.audit.decisions[-1]
    assert (refused.action, refused.actor) == ("EscalationDecisionRefused", clicker)
    assert refused.details["refusal"] == refusal


@pytest.mark.parametrize(
    "forgery",
    [
        {"timestamp_offset": -301},  # stale: more than 5 minutes old
        {"timestamp_offset": 301},  # from the future
        {"secret": "not-the-signing-secret"},  # wrong signature
        {"tamper": True},  # body changed after signing
    ],
)
def test_forged_or_stale_clicks_are_401_and_change_nothing(
    world: World, forgery: dict[str, Any]
) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    kwargs: dict[str, Any] = {}
    if "timestamp_offset" in forgery:
        kwargs["timestamp"] = int(world.clock.now()) + forgery["timestamp_offset"]
    if "secret" in forgery:
        kwargs["secret"] = forgery["secret"]
    if forgery.get("tamper"):
        kwargs["tamper"] = True
    assert (
        world.click(body["escalationId"], "U0BOB" if "tamper" in forgery else "U0CAROL", **kwargs)
        == 401
    )
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert world.update_calls == []
    assert world.slack.calls_to("chat.update") == []
    assert world.slack.calls_to("response_url") == []


def test_missing_signature_headers_are_401(world: World) -> None:
    from quotagov.handlers import slack_interactions
    from support.lambda_context import LambdaContext

    _, body = world.request("sub-bg-2", "high", REASON)
    event = world.click_event(body["escalationId"], "U0CAROL")
    event["headers"] = None
    event["multiValueHeaders"] = None
    response = slack_interactions.handler(event, LambdaContext())  # type: ignore[arg-type]
    assert response["statusCode"] == 401
    assert world.update_calls == []


def test_expired_request_cannot_be_approved_and_expiry_updates_messages(world: World) -> None:
    _, first = world.request("sub-bg-2", "high", REASON)
    world.clock.advance(3600)  # exactly at expiry: too late
    assert world.click(first["escalationId"], "U0CAROL") == 200
    # The Slack function expires it and tells the clicker; it holds no bot token, so
    # the card's update is kept for the scheduled run. Nothing is handed off.
    stored = world.escalations.get(first["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.EXPIRED
    assert stored.decided_by == "quotagov" and stored.decided_at == world.clock.now()
    assert world.update_calls == []
    [answer] = world.slack.calls_to("response_url")
    assert answer.params["response_type"] == "ephemeral"
    assert answer.params["text"] == "This request has expired; nothing was changed."
    first_message = world.slack.message(first["message"]["channel"], first["message"]["ts"])
    assert first_message.edits == 0 and actions_block(first_message.blocks) is not None
    assert audit_actions(world) == ["EscalationRequested", "EscalationExpired"]

    # The scheduled run shows the first card expired and expires the second request.
    _, second = world.request("sub-bg-2", "urgent", REASON)
    world.clock.advance(3601)
    result = world.expire()
    assert result["expired"] == [second["escalationId"]]
    assert result["cardsUpdated"] == [first["escalationId"]]
    assert result["cardsStillFailing"] == [] and result["cardsParked"] == []
    first_message = world.slack.message(first["message"]["channel"], first["message"]["ts"])
    assert first_message.edits == 1 and "*Expired*" in message_text(first_message.blocks)
    assert actions_block(first_message.blocks) is None
    stored = world.escalations.get(second["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.EXPIRED
    assert stored.decided_by == "quotagov"
    second_message = world.slack.message(second["message"]["channel"], second["message"]["ts"])
    assert second_message.edits == 1 and "*Expired*" in message_text(second_message.blocks)
    again = world.expire()
    assert again["expired"] == [] and again["cardsUpdated"] == []  # nothing twice
    assert audit_actions(world).count("EscalationExpired") == 2
    assert world.update_calls == []


def test_a_function_without_a_hand_off_records_no_decision(world: World) -> None:
    """The apply function settles decisions and has no hand-off: a click routed to
    its use case is a wiring fault, raised before anything is read or stored."""
    from quotagov.governance.escalations.context import MissingHandoffError

    _, body = world.request("sub-bg-2", "high", REASON)
    before = world.escalations.get(body["escalationId"])
    applying = composition.current(composition.ApplyDecisions).escalations
    with pytest.raises(MissingHandoffError, match="no hand-off to the apply function"):
        applying.decide(body["escalationId"], approve=True, user_id="U0CAROL")
    assert world.escalations.get(body["escalationId"]) == before
    assert audit_actions(world) == ["EscalationRequested"]
    assert world.update_calls == []


@pytest.mark.parametrize(
    ("submission", "level", "reason", "principal", "status", "message"),
    [
        ("sub-bg-2", "high", "   ", ALICE, 422, "reason: must not be empty"),
        ("sub-nope", "high", REASON, ALICE, 422, "is not a job submitted by quotagov"),
        ("sub-bg-2", "standard", REASON, ALICE, 422, "is not higher than the job's current"),
        ("sub-bg-2", "critical", REASON, ALICE, 422, "may not request level 'critical'"),
        ("sub-bg-2", "nosuch", REASON, ALICE, 422, "unknown priority level 'nosuch'"),
        # Fault 5: another team's caller gets the refusal of an unknown job.
        ("sub-bg-2", "high", REASON, DAVE, 422, "is not a job submitted by quotagov"),
    ],
)
def test_refused_requests(
    world: World,
    submission: str,
    level: str,
    reason: str,
    principal: str,
    status: int,
    message: str,
) -> None:
    got_status, body = world.request(submission, level, reason, principal)
    assert got_status == status
    assert message in body["message"]
    assert world.slack.messages == []
    assert world.escalations.with_status(EscalationStatus.PENDING) == []
    assert audit_actions(world) == ["EscalationRefused"]


def test_another_teams_job_is_answered_like_no_job(world: World) -> None:
    """dave (team applied) escalates research's bg-2 and a job that does not exist:
    the two answers are identical but for the id; nothing is stored or posted."""
    known = world.request("sub-bg-2", "high", REASON, DAVE)
    unknown = world.request("sub-xx-9", "high", REASON, DAVE)
    assert known == (
        422,
        {"message": "jobId: 'sub-bg-2' is not a job submitted by quotagov that you may escalate"},
    )
    assert unknown[1]["message"] == known[1]["message"].replace("sub-bg-2", "sub-xx-9")
    assert unknown[0] == 422
    assert world.slack.messages == [] and world.update_calls == []
    assert world.escalations.with_status(EscalationStatus.PENDING) == []


def test_terminal_job_is_refused(world: World) -> None:
    world.batch.terminate_service_job(jobId=world.job_ids["bg-2"], reason="test")
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 422
    assert "is FAILED; it will not run again" in body["message"]


def test_direct_level_is_handed_to_the_apply_function_which_applies_it(world: World) -> None:
    """As deployed: the escalation API stores a direct level APPROVED and hands it to
    the ``ApplyQueue`` (202); the apply function, the only ``UpdateServiceJob``
    caller, applies it."""
    status, body = world.request("sub-med-1", "standard", "weekly retrain is late", DAVE)
    assert status == 202
    assert (body["status"], body["direct"]) == ("APPROVED", True)
    assert world.update_calls == [{"jobId": world.job_ids["med-1"], "schedulingPriority": 10}]
    assert world.slack.messages == []
    approved, applied = world.audit.decisions
    assert (approved.action, approved.actor) == ("EscalationApproved", DAVE)
    assert approved.details["direct"] is True
    assert (applied.action, applied.actor) == ("EscalationApplied", "quotagov")
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status.value == "APPLIED"


def test_budget_spent(dynamodb_endpoint: str, aws_env: None) -> None:
    policy = walkthrough_policy(escalationBudget={"count": 1, "periodSeconds": 604800})
    world = build_world(policy, dynamodb_endpoint)
    try:
        assert world.request("sub-bg-2", "high", REASON)[0] == 201
        status, body = world.request("sub-bg-1", "urgent", REASON)
        assert status == 422
        assert body["message"] == "escalation budget of team 'research' is spent: 1 per 604800 s"
        assert len(world.slack.messages) == 1
    finally:
        world.slack.stop()
        composition.reset()


def test_fifty_concurrent_approvals_apply_once(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    escalation_id = body["escalationId"]
    events = [world.click_event(escalation_id, "U0CAROL" if n % 2 else "U0ERIN") for n in range(50)]
    from quotagov.handlers import slack_interactions
    from support.lambda_context import LambdaContext

    barrier = threading.Barrier(len(events))
    statuses: list[int] = []
    lock = threading.Lock()

    def click(event: dict[str, Any]) -> None:
        barrier.wait()
        response = slack_interactions.handler(event, LambdaContext())  # type: ignore[arg-type]
        with lock:
            statuses.append(int(response["statusCode"]))

    threads = [threading.Thread(target=click, args=(event,)) for event in events]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert statuses == [200] * 50
    assert world.update_calls == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": 50}]
    applied = world.escalations.with_status(EscalationStatus.APPLIED)
    assert [e.escalation_id for e in applied] == [escalation_id]
    assert world.escalations.with_status(EscalationStatus.PENDING) == []
    assert len(world.slack.calls_to("chat.update")) == 1
    assert audit_actions(world).count("EscalationApplied") == 1
    assert audit_actions(world).count("EscalationApproved") == 1


def test_failed_application_is_recorded_and_retried_by_the_schedule(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    world.batch.fail_next(
        "UpdateServiceJob", code="TooManyRequestsException", message="Too Many Requests"
    )
    assert world.click(body["escalationId"], "U0CAROL") == 200

    stored = world.escalations.get(body["escalationId"])
    assert stored is not None
    assert (stored.status, stored.apply_attempts) == (EscalationStatus.APPLY_FAILED, 1)
    assert stored.error == "UpdateServiceJob: TooManyRequestsException: Too Many Requests"
    assert world.describe("bg-2")["schedulingPriority"] == 10
    message = world.slack.messages[0]
    assert "UpdateServiceJob failed" in message_text(message.blocks)

    # One checkpoint interval later bg-1's unsaved work is the 300 s the approver saw:
    # the retry's impact recheck finds no change.
    world.clock.advance(600)
    world.batch.sync()
    result = world.expire()
    assert result["retried"] == {body["escalationId"]: "APPLIED"}
    assert world.describe("bg-2")["schedulingPriority"] == 50
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None
    assert (stored.status, stored.apply_attempts, stored.error) == (
        EscalationStatus.APPLIED,
        2,
        None,
    )
    assert "*Approved* by <@U0CAROL>" in message_text(world.slack.messages[0].blocks)
    assert audit_actions(world) == [
        "EscalationRequested",
        "EscalationApproved",
        "EscalationApplyFailed",
        "EscalationApplied",
    ]
    assert world.expire()["retried"] == {}


def test_a_retry_whose_impact_changed_reopens_the_request(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)  # bg-1: 300 s unsaved at t=900
    escalation_id = body["escalationId"]
    world.batch.fail_next("UpdateServiceJob", code="ServerException", message="boom")
    assert world.click(escalation_id, "U0CAROL") == 200
    world.clock.advance(240)  # t=1140: bg-1 has 540 s unsaved (next checkpoint at 1200)
    world.batch.sync()

    assert world.expire()["retried"] == {escalation_id: "PENDING"}

    assert world.update_calls == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": 50}]
    assert world.describe("bg-2")["schedulingPriority"] == 10
    stored = world.escalations.get(escalation_id)
    assert stored is not None
    assert (stored.status, stored.decided_by, stored.decided_at, stored.claimed_at) == (
        EscalationStatus.PENDING,
        None,
        None,
        None,
    )
    assert stored.previous_preview is not None and stored.preview is not None
    assert [v.unsaved_seconds for v in stored.previous_preview.preempted] == [300]
    assert [v.unsaved_seconds for v in stored.preview.preempted] == [540]
    assert stored.preview.computed_at == world.clock.now()
    assert audit_actions(world) == [
        "EscalationRequested",
        "EscalationApproved",
        "EscalationApplyFailed",
        "EscalationPreviewChanged",
    ]
    changed = world.audit.decisions[-1]
    assert changed.actor == "U0CAROL"
    assert "540 s" in changed.details["change"]
    # a confirming click with the new numbers applies, once
    assert world.click(escalation_id, "U0CAROL") == 200
    assert world.update_calls[1:] == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": 50}]
    assert world.describe("bg-2")["schedulingPriority"] == 50
    assert world.expire()["retried"] == {}


def test_slack_failure_withdraws_the_request_and_refunds_the_budget(
    dynamodb_endpoint: str, aws_env: None
) -> None:
    policy = walkthrough_policy(escalationBudget={"count": 1, "periodSeconds": 604800})
    world = build_world(policy, dynamodb_endpoint)
    try:
        world.slack.fail_next("chat.postMessage", "channel_not_found")
        status, body = world.request("sub-bg-2", "high", REASON)
        assert status == 503
        assert "channel_not_found" in body["message"]
        assert world.escalations.with_status(EscalationStatus.PENDING) == []
        # the budget unit came back: the next request is accepted
        assert world.request("sub-bg-2", "high", REASON)[0] == 201
        assert audit_actions(world) == [
            "EscalationRequested",
            "EscalationWithdrawn",
            "EscalationRequested",
        ]
    finally:
        world.slack.stop()
        composition.reset()


def test_signed_but_unusable_payloads_are_400_and_unknown_actions_ignored(world: World) -> None:
    from urllib.parse import urlencode

    from quotagov.handlers import slack_interactions
    from support.lambda_context import LambdaContext

    _, body = world.request("sub-bg-2", "high", REASON)

    def send(raw: bytes) -> int:
        event = world.raw_click_event(body["escalationId"], raw)
        response = slack_interactions.handler(event, LambdaContext())  # type: ignore[arg-type]
        return int(response["statusCode"])

    assert send(b"payload=%7Bnot-json") == 400
    assert send(b"text=no-payload-field") == 400
    assert send(urlencode({"payload": '{"type": "view_submission"}'}).encode()) == 400
    other = {
        "type": "block_actions",
        "user": {"id": "U0CAROL"},
        "actions": [{"action_id": "someone_elses_button", "value": "x"}],
    }
    import json

    assert send(urlencode({"payload": json.dumps(other)}).encode()) == 200
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert world.update_calls == []


def test_an_approval_interrupted_before_update_is_taken_over_by_the_schedule(
    world: World,
) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    # An invocation recorded APPROVED and died before calling UpdateServiceJob.
    decided = world.escalations.transition_if_status(
        body["escalationId"],
        EscalationStatus.PENDING,
        {
            "status": EscalationStatus.APPROVED,
            "decided_by": "U0CAROL",
            "decided_at": world.clock.now(),
        },
    )
    assert decided is not None
    world.clock.advance(300)
    assert world.expire()["retried"] == {}  # could still be in flight
    world.clock.advance(601)  # past STALE_APPROVAL_SECONDS (900 s): taken over
    world.batch.sync()
    # Taken over and rechecked like the first apply: 901 s after the preview the
    # approver saw (bg-1 preempted with 300 s unsaved), med-1 has finished and bg-2
    # runs by itself, so the request is reopened for the approvers, not applied.
    assert world.expire()["retried"] == {body["escalationId"]: "PENDING"}
    assert world.update_calls == []
    assert world.describe("bg-2")["schedulingPriority"] == 10
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None
    assert (stored.status, stored.decided_by, stored.error) == (
        EscalationStatus.PENDING,
        None,
        "interrupted before UpdateServiceJob was recorded",
    )
    assert stored.previous_preview is not None and stored.preview is not None
    assert [v.unsaved_seconds for v in stored.previous_preview.preempted] == [300]
    assert (stored.preview.outcome.value, stored.preview.preempted) == ("ALREADY_RUNNING", ())
    assert world.describe("bg-2")["status"] == "RUNNING"
    assert audit_actions(world) == ["EscalationRequested", "EscalationPreviewChanged"]
    assert world.audit.decisions[-1].actor == "U0CAROL"
    assert "impact changed since the request" in message_text(world.slack.messages[0].blocks)
    # the approvers confirm the new numbers: applied once
    assert world.click(body["escalationId"], "U0CAROL") == 200
    assert world.update_calls == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": 50}]
    assert "*Approved* by <@U0CAROL>" in message_text(world.slack.messages[0].blocks)
