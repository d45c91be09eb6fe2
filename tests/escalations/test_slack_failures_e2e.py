"""Slack's limits and failures, end to end through the handlers (walkthrough at t=900).

- a reason of 2,000 characters full of characters Slack escapes is asked in Slack (the
  fake Slack refuses, as Slack does, any text over its limit);
- a card that cannot be built changes nothing: no PENDING item, no budget unit, no job
  lock, no message;
- three HTTP 429s on ``chat.update`` (each honoured after ``Retry-After``) leave a pending
  card update; the scheduled run shows the decided state with no live buttons.
"""

from __future__ import annotations

from typing import Any

import pytest

from quotagov.governance.escalations import messages
from quotagov.governance.escalations.context import MAX_CARD_UPDATE_ATTEMPTS
from quotagov.governance.model.escalation import EscalationStatus

from .world import World

REASON = "Camera-ready deadline on Friday; bg-2 produces the final ablation."


def _items(world: World) -> dict[str, dict[str, Any]]:
    """Every item of the escalations table, by ``pk`` (low-level attribute values)."""
    answer = world.escalations.client.scan(TableName=world.escalations.table_name)
    return {item["pk"]["S"]: item for item in answer["Items"]}


def _buttons(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for b in blocks if b["type"] == "actions"]


def test_a_reason_that_grows_past_3000_when_escaped_is_asked_in_slack(world: World) -> None:
    reason = "&<>" * 666 + "&&"  # 2,000 characters, the API's limit; 9,994 escaped

    status, body = world.request("sub-bg-2", "high", reason)

    assert status == 201 and body["status"] == "PENDING"
    assert body["reason"] == reason  # stored whole; only the message is cut
    [post] = world.slack.calls_to("chat.postMessage")
    assert post.response["ok"] is True
    [message] = world.slack.messages
    [quoted] = [b for b in message.blocks if b.get("text", {}).get("text", "").startswith("*Re")]
    assert len(quoted["text"]["text"]) == 2997
    assert quoted["text"]["text"].endswith("&amp;&lt;…")
    assert message.blocks[1]["text"]["text"] == "*Approvers*: <@U0CAROL>, <@U0ERIN>"
    assert message.text == (
        "Priority escalation for bg-2: 10 -> 50 (high), requested by <@U0ALICE>"
    )


def test_a_card_that_cannot_be_built_changes_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unbuildable(*_: Any, **__: Any) -> Any:
        raise ValueError("button.value: longer than 2000 characters")

    monkeypatch.setattr(messages, "request_blocks", unbuildable)

    status, body = world.request("sub-bg-2", "high", REASON)

    assert status == 422
    assert "cannot be shown in Slack (button.value: longer than 2000 characters)" in str(body)
    assert _items(world) == {}  # no PENDING item, no budget counter, no job lock
    assert world.slack.calls == []
    assert [d.action for d in world.audit.decisions] == ["EscalationRefused"]
    monkeypatch.undo()
    status, body = world.request("sub-bg-2", "high", REASON)  # nothing was held
    assert status == 201 and body["status"] == "PENDING"


def test_three_429s_on_chat_update_still_end_with_the_decided_card(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    escalation_id = body["escalationId"]
    channel, ts = body["message"]["channel"], body["message"]["ts"]
    world.slack.rate_limit_next("chat.update", times=3, retry_after=0)

    world.clock.advance(5)
    assert world.click(escalation_id, "U0CAROL") == 200

    stored = world.escalations.get(escalation_id)
    assert stored is not None and stored.status is EscalationStatus.APPLIED
    assert [c.response["error"] for c in world.slack.calls_to("chat.update")] == ["ratelimited"] * 3
    assert _buttons(world.slack.message(channel, ts).blocks)  # Slack still shows the buttons
    card = _items(world)[f"card#{escalation_id}"]
    assert {k: v for k, v in card.items() if k != "expiresAt"} == {
        "pk": {"S": f"card#{escalation_id}"},
        "status": {"S": "CARD_UPDATE"},
        "escalationId": {"S": escalation_id},
        "attempts": {"N": "1"},
        "error": {"S": "ratelimited"},
    }

    world.clock.advance(300)
    result = world.expire()  # the 5-minute schedule

    assert result["cardsUpdated"] == [escalation_id] and result["cardsParked"] == []
    shown = world.slack.message(channel, ts)
    assert _buttons(shown.blocks) == []
    assert shown.blocks[0]["text"]["text"] == "Priority escalation approved and applied"
    assert shown.blocks[1]["text"]["text"].startswith(":white_check_mark: *Approved* by <@U0CAROL>")
    assert shown.text == "Priority escalation for bg-2: APPLIED by <@U0CAROL>"
    assert f"card#{escalation_id}" not in _items(world)
    assert world.expire()["cardsUpdated"] == []  # nothing twice


def test_a_card_that_keeps_failing_is_parked_after_the_bound(world: World) -> None:
    _, body = world.request("sub-bg-2", "high", REASON)
    escalation_id = body["escalationId"]
    world.slack.fail_next("chat.update", "internal_error")
    assert world.click(escalation_id, "U0CAROL", "escalation_deny") == 200

    for _ in range(MAX_CARD_UPDATE_ATTEMPTS - 2):
        world.slack.fail_next("chat.update", "internal_error")
        assert world.expire()["cardsStillFailing"] == [escalation_id]
    world.slack.fail_next("chat.update", "internal_error")
    assert world.expire()["cardsParked"] == [escalation_id]

    card = _items(world)[f"card#{escalation_id}"]
    assert card["status"] == {"S": "CARD_PARKED"}
    assert card["attempts"] == {"N": str(MAX_CARD_UPDATE_ATTEMPTS)}
    assert world.expire()["cardsParked"] == []  # parked: not retried, alarmed once
