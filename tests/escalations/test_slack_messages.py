"""Block Kit builders and the block_actions routing table."""

from __future__ import annotations

from typing import Any

import pytest

from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.model.impact_preview import ImpactOutcome, ImpactPreview, PreemptedJob
from quotagov.governance.slack.escalations import outcome_blocks, request_blocks
from quotagov.governance.slack.interactions import (
    ActionReply,
    BlockAction,
    handler_for,
    parse_block_actions,
    register_action,
)

LEVELS = {0: "low", 10: "standard", 50: "high", 90: "urgent"}


def pending(preview: ImpactPreview, reason: str = "deadline") -> Escalation:
    return Escalation(
        escalation_id="esc-1",
        job_id="sub-bg-2",
        batch_job_id="job-2",
        job_name="bg-2",
        job_queue="ml-gov-queue",
        team="research",
        quota_share_name="background",
        requester="arn:aws:sts::111122223333:assumed-role/researcher/alice",
        requester_slack_id="U0ALICE",
        reason=reason,
        current_priority=10,
        requested_level="high",
        requested_priority=50,
        status=EscalationStatus.PENDING,
        created_at=1_764_548_100.0,
        expires_at=1_764_551_700.0,
        preview=preview,
    )


def buttons(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    [actions] = [b for b in blocks if b["type"] == "actions"]
    elements: list[dict[str, Any]] = actions["elements"]
    return elements


def test_confirm_dialog_only_when_approval_preempts() -> None:
    preempts = ImpactPreview(
        ImpactOutcome.PREEMPTS,
        "s",
        (PreemptedJob("job-1", "bg-1", "background", "IN_SHARE", 300.0),),
    )
    approve, _ = buttons(request_blocks(pending(preempts), LEVELS))
    assert approve["confirm"]["text"]["text"] == (
        "Approving stops bg-1 and loses 300 s of unsaved work."
    )
    assert approve["confirm"]["style"] == "danger"
    moves = ImpactPreview(ImpactOutcome.MOVES_FORWARD, "s", (), 2, 1)
    approve, deny = buttons(request_blocks(pending(moves), LEVELS))
    assert "confirm" not in approve and "confirm" not in deny


def test_user_text_is_escaped_and_clipped() -> None:
    reason = "<!channel> & " + "x" * 5000
    blocks = request_blocks(pending(ImpactPreview(ImpactOutcome.NO_CHANGE, "s"), reason), LEVELS)
    [reason_block] = [b for b in blocks if b.get("text", {}).get("text", "").startswith("*Reason*")]
    text = reason_block["text"]["text"]
    assert "&lt;!channel&gt; &amp; " in text and "<!channel>" not in text
    assert len(text) <= 3000


def test_outcome_shows_decider_and_drops_buttons() -> None:
    decided = pending(ImpactPreview(ImpactOutcome.NO_CHANGE, "s")).with_changes(
        status=EscalationStatus.DENIED, decided_by="U0CAROL", decided_at=1_764_548_200.0
    )
    blocks = outcome_blocks(decided, LEVELS)
    assert not [b for b in blocks if b["type"] == "actions"]
    assert blocks[0]["text"]["text"] == "Priority escalation denied"
    assert blocks[1]["text"]["text"].startswith(
        ":no_entry: *Denied* by <@U0CAROL> at <!date^1764548200^"
    )


def test_routing_by_longest_prefix_and_payload_checks() -> None:
    seen: list[str] = []

    def ours(action: BlockAction) -> ActionReply:
        seen.append(f"{action.action_id}:{action.value}:{action.user_id}:{action.message_ts}")
        return ActionReply("noted")

    register_action("test_route_", lambda action: ActionReply(None))
    register_action("test_route_special_", ours)
    payload = {
        "type": "block_actions",
        "user": {"id": "U0CAROL", "username": "carol"},
        "container": {"type": "message", "channel_id": "C0GOVERN", "message_ts": "1.000001"},
        "response_url": "http://127.0.0.1:9/actions/R1",
        "actions": [{"action_id": "test_route_special_go", "value": "v1"}],
    }
    [action] = parse_block_actions(payload)
    handler = handler_for(action.action_id)
    assert handler is not None and handler(action) == ActionReply("noted")
    assert seen == ["test_route_special_go:v1:U0CAROL:1.000001"]
    assert handler_for("nobody_registered_this") is None
    with pytest.raises(ValueError, match=r"payload.type: expected 'block_actions'"):
        parse_block_actions({**payload, "type": "view_submission"})
    with pytest.raises(ValueError, match=r"payload.user.id: missing"):
        parse_block_actions({**payload, "user": {}})
    with pytest.raises(ValueError, match=r"payload.actions: missing or empty"):
        parse_block_actions({**payload, "actions": []})
    with pytest.raises(ValueError, match="prefix: must not be empty"):
        register_action("", ours)
