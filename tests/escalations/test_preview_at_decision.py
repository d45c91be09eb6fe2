"""Preview at decision time: Approve recomputes the impact preview, and a material
change must be confirmed before anything is applied.

Walkthrough world at t=900 (``world.py``): bg-1 RUNNING in background (in-share
victim of a raise of bg-2), bg-2 RUNNABLE, checkpoints every 600 s.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotagov.api_times import iso_utc
from quotagov.governance.escalations.recheck import material_change
from quotagov.governance.model.escalation import EscalationStatus
from quotagov.governance.model.impact_preview import ImpactOutcome, ImpactPreview, PreemptedJob

from .test_escalations_e2e import actions_block, audit_actions, message_text
from .world import World

REASON = "Camera-ready deadline on Friday."


def _victim(job_id: str, unsaved: float) -> PreemptedJob:
    return PreemptedJob(job_id, job_id, "background", "IN_SHARE", unsaved)


def _preview(*victims: PreemptedJob) -> ImpactPreview:
    outcome = ImpactOutcome.PREEMPTS if victims else ImpactOutcome.STARTS
    return ImpactPreview(outcome, "s", tuple(victims))


def test_material_change_rules() -> None:
    shown = _preview(_victim("j1", 180))
    assert material_change(shown, _preview(_victim("j1", 200))) is None  # 20 s drift
    assert material_change(shown, _preview(_victim("j1", 239))) is None  # under 60 s
    assert "300 s" in (material_change(shown, _preview(_victim("j1", 300))) or "")
    assert "j2" in (material_change(shown, _preview(_victim("j2", 180))) or "")
    assert "j1, j2" in (
        material_change(shown, _preview(_victim("j1", 180), _victim("j2", 1))) or ""
    )
    assert "STARTS" in (material_change(shown, _preview()) or "")
    assert material_change(None, _preview()) is None
    assert material_change(None, shown) is not None


def _request(world: World) -> dict[str, Any]:
    status, body = world.request("sub-bg-2", "high", REASON)
    assert status == 201 and body["preview"]["outcome"] == "PREEMPTS"
    assert [v["jobName"] for v in body["preview"]["preempted"]] == ["bg-1"]
    assert body["preview"]["computedAt"] == iso_utc(world.clock.now())
    return body


def test_victims_changed_between_request_and_click_must_be_confirmed(world: World) -> None:
    body = _request(world)
    escalation_id = body["escalationId"]
    [message] = world.slack.messages
    assert "computed" in message_text(message.blocks)  # the preview's time is shown
    # Between the request and the click, bg-1's owner stops it: bg-2 starts by itself,
    # so approving would preempt nobody any more.
    world.clock.advance(30)
    world.batch.terminate_service_job(jobId=world.job_ids["bg-1"], reason="owner stopped it")
    world.batch.sync()
    assert world.describe("bg-2")["status"] == "RUNNING"

    assert world.click(escalation_id, "U0CAROL") == 200

    # The Slack function recorded the approval and handed it off; the apply function
    # recomputed the impact, found it changed, and applied nothing: no UpdateServiceJob,
    # PENDING again, both previews kept.
    assert world.update_calls == []
    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert stored.decided_by is None
    assert stored.previous_preview is not None
    assert [v.job_name for v in stored.previous_preview.preempted] == ["bg-1"]
    assert stored.preview is not None and stored.preview.outcome is ImpactOutcome.ALREADY_RUNNING
    assert stored.preview.computed_at == world.clock.now()
    assert audit_actions(world) == [
        "EscalationRequested",
        "EscalationApproved",
        "EscalationPreviewChanged",
    ]
    changed = world.audit.decisions[-1]
    assert changed.actor == "U0CAROL"
    assert "ALREADY_RUNNING" in changed.details["change"]
    # The card (updated by the apply function) shows the new numbers with the buttons;
    # the click itself was answered before the recompute, with nothing to say.
    updated = world.slack.message(message.channel, message.ts)
    assert updated.edits == 1
    assert "impact changed since the request" in message_text(updated.blocks)
    assert actions_block(updated.blocks) is not None
    assert world.slack.calls_to("response_url") == []

    # The confirming click (the same numbers again) applies, once.
    assert world.click(escalation_id, "U0CAROL") == 200
    assert world.update_calls == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": 50}]
    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.APPLIED
    assert stored.decided_by == "U0CAROL"
    assert audit_actions(world)[-2:] == ["EscalationApproved", "EscalationApplied"]
    applied = world.slack.message(message.channel, message.ts)
    assert applied.edits == 2 and actions_block(applied.blocks) is None
    assert "Priority escalation approved and applied" in message_text(applied.blocks)
    assert "*Approved* by <@U0CAROL>" in message_text(applied.blocks)
    assert world.slack.calls_to("response_url") == []


def test_unsaved_work_grown_since_the_request_must_be_confirmed(world: World) -> None:
    body = _request(world)  # bg-1: 300 s unsaved at t=900
    world.clock.advance(240)  # t=1140: 540 s unsaved (next checkpoint at 1200)
    world.batch.sync()

    assert world.click(body["escalationId"], "U0ERIN") == 200

    assert world.update_calls == []
    stored = world.escalations.get(body["escalationId"])
    assert stored is not None and stored.status is EscalationStatus.PENDING
    assert stored.preview is not None
    assert [v.unsaved_seconds for v in stored.preview.preempted] == [540]
    assert "540 s" in world.audit.decisions[-1].details["change"]
    assert world.click(body["escalationId"], "U0ERIN") == 200
    assert len(world.update_calls) == 1


def test_small_drift_applies_at_the_first_click(world: World) -> None:
    body = _request(world)
    world.clock.advance(20)
    assert world.click(body["escalationId"], "U0ERIN") == 200
    assert len(world.update_calls) == 1
    assert "EscalationPreviewChanged" not in audit_actions(world)


def test_a_non_approver_cannot_make_quotagov_recompute_or_store_anything(world: World) -> None:
    body = _request(world)
    world.clock.advance(240)
    before = world.escalations.get(body["escalationId"])

    assert world.click(body["escalationId"], "U0MALLORY") == 200  # signed, not an approver

    assert world.update_calls == []
    assert world.escalations.get(body["escalationId"]) == before  # preview untouched
    assert audit_actions(world) == ["EscalationRequested", "EscalationDecisionRefused"]
    message = world.slack.messages[0]  # the request (the refusal notice is ephemeral)
    assert world.slack.message(message.channel, message.ts).edits == 0
    assert "impact changed" not in message_text(message.blocks)


def _emf(out: str, name: str) -> list[dict[str, Any]]:
    """The EMF documents on stdout that carry metric ``name``."""
    found = []
    for line in out.splitlines():
        if line.startswith("{") and f'"{name}"' in line:
            doc = json.loads(line)
            if name in doc:
                found.append(doc)
    return found


def test_requests_and_decisions_are_counted_per_team(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    body = _request(world)
    world.clock.advance(240)
    world.batch.sync()
    # Each click is counted when the Slack function records it (``approved``); the
    # first one's recompute in the apply function reopens the request, the second
    # one's applies it.
    assert world.click(body["escalationId"], "U0ERIN") == 200
    reopened = world.escalations.get(body["escalationId"])
    assert reopened is not None and reopened.status is EscalationStatus.PENDING
    assert world.click(body["escalationId"], "U0ERIN") == 200
    applied = world.escalations.get(body["escalationId"])
    assert applied is not None and applied.status is EscalationStatus.APPLIED
    out = capsys.readouterr().out
    [request] = _emf(out, "EscalationsRequested")
    assert (request["team"], request["requester"], request["kind"], request["level"]) == (
        "research",
        "alice",
        "approval",
        "high",
    )
    decisions = [(d["team"], d["outcome"]) for d in _emf(out, "EscalationsDecided")]
    assert decisions == [("research", "approved"), ("research", "approved")]


def test_an_approve_on_the_old_preview_round_confirms_nothing(world: World) -> None:
    """Attacker (or a stale card): holds a Slack-signed Approve made on the first card
    and sends it (signed anew, so the replay cache does not catch it) after the request
    was reopened with a new impact. Nothing is approved, applied or audited."""
    from quotagov.governance.slack.escalations import button_value, parse_button_value

    body = _request(world)
    escalation_id = body["escalationId"]
    first = world.escalations.get(escalation_id)
    assert first is not None
    old_value = button_value(first)
    assert parse_button_value(old_value) == (escalation_id, round(world.clock.now() * 1000))
    world.clock.advance(240)  # bg-1's unsaved work grows: the Approve reopens the request
    world.batch.sync()
    assert world.click(escalation_id, "U0ERIN") == 200
    reopened = world.escalations.get(escalation_id)
    assert reopened is not None and reopened.status is EscalationStatus.PENDING
    assert button_value(reopened) != old_value  # the new card carries the new round
    audited = audit_actions(world)
    notices = len(world.slack.calls_to("response_url"))

    world.clock.advance(5)
    for value in (old_value, escalation_id):  # the old round, and no round at all
        assert world.click(escalation_id, "U0ERIN", value=value) == 200

    assert world.update_calls == []
    assert world.escalations.get(escalation_id) == reopened  # item unchanged
    assert audit_actions(world) == audited  # nothing recorded
    answers = world.slack.calls_to("response_url")[notices:]
    assert len(answers) == 2
    assert all("no longer current" in a.params["text"] for a in answers)
    # The click on the current card confirms the numbers it shows, once.
    assert world.click(escalation_id, "U0ERIN") == 200
    assert world.update_calls == [{"jobId": world.job_ids["bg-2"], "schedulingPriority": 50}]


def test_a_deny_on_an_old_card_still_denies(world: World) -> None:
    """Deny confirms no impact, so an old card's Deny is honoured."""
    body = _request(world)
    escalation_id = body["escalationId"]
    assert world.click(escalation_id, "U0ERIN", "escalation_deny", value=escalation_id) == 200
    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.DENIED
