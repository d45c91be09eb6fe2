"""Slack messages stay within Slack's limits by construction: text escaped first, cut
second, every field bounded, the whole reason quoted; approvers @-mentioned and the
fallback texts naming people as mentions."""

from __future__ import annotations

from typing import Any

from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.model.impact_preview import ImpactOutcome, ImpactPreview, PreemptedJob
from quotagov.governance.slack.blocks import escape_and_fit, fit, quote
from quotagov.governance.slack.escalations import (
    outcome_blocks,
    outcome_text,
    request_blocks,
    request_text,
)

LEVELS = {10: "standard", 50: "high"}
NAME = "n" * 128  # the longest job / share / level name the policy and API allow


def _escalation(reason: str, **changes: Any) -> Escalation:
    victims = tuple(
        PreemptedJob(f"{i:036d}", f"{'v' * 126}{i:02d}", "s" * 128, "IN_SHARE", 300.0)
        for i in range(40)
    )
    preview = ImpactPreview(ImpactOutcome.PREEMPTS, "&" * 2000, victims, computed_at=1.0)
    base = Escalation(
        escalation_id="esc-" + "0" * 32,
        job_id="sub-1",
        batch_job_id="b" * 36,
        job_name=NAME,
        job_queue="q",
        team="t" * 128,
        quota_share_name="s" * 128,
        requester="arn:aws:sts::111122223333:assumed-role/researcher/" + "a" * 64,
        requester_slack_id="U0ALICE",
        reason=reason,
        current_priority=10,
        requested_level="l" * 128,
        requested_priority=50,
        status=EscalationStatus.PENDING,
        created_at=0.0,
        expires_at=3600.0,
        preview=preview,
        previous_preview=preview,
    )
    return base.with_changes(**changes)


def _limits_hold(blocks: list[dict[str, Any]]) -> None:
    for block in blocks:
        text = block.get("text", {}).get("text", "")
        assert len(text) <= {"header": 150}.get(block["type"], 3000), block["type"]
        for field in block.get("fields", []):
            assert len(field["text"]) <= 2000
        for element in block.get("elements", []):
            if element.get("type") == "button":
                assert len(element["text"]["text"]) <= 75
                assert len(element["value"]) <= 2000
                if "confirm" in element:
                    assert len(element["confirm"]["text"]["text"]) <= 300
            elif "text" in element:
                assert len(element["text"]) <= 3000


def test_a_2000_character_reason_of_escaped_characters_and_longest_names_fit() -> None:
    reason = "&<>" * 666 + "&&"  # 2000 characters; 9,994 once escaped
    escalation = _escalation(reason)

    request = request_blocks(escalation, LEVELS, ["U0CAROL", "U0BOB"])
    decided = _escalation(
        reason, status=EscalationStatus.DENIED, decided_by="U0CAROL", error="&" * 2000
    )
    outcome = outcome_blocks(decided, LEVELS)

    _limits_hold(request)
    _limits_hold(outcome)
    [quoted] = [b for b in request if b.get("text", {}).get("text", "").startswith("*Reason*")]
    text = quoted["text"]["text"]
    assert len(text) == 2997  # cut before the entity the limit would split, then "…"
    assert text.startswith("*Reason*\n>&amp;&lt;&gt;&amp;") and text.endswith("&amp;&lt;…")
    assert "<" not in text and ">&" in text
    assert len(request_text(escalation)) <= 4000 and len(outcome_text(decided)) <= 4000


def test_every_line_of_a_multi_line_reason_sits_in_the_quote() -> None:
    reason = "deadline tomorrow\n\n*Impact preview*\n• no job is preempted\n:white_check_mark:"
    blocks = request_blocks(_escalation(reason), LEVELS)

    [quoted] = [b for b in blocks if b.get("text", {}).get("text", "").startswith("*Reason*")]
    assert quoted["text"]["text"] == (
        "*Reason*\n>deadline tomorrow\n>\n>*Impact preview*\n>• no job is preempted\n"
        ">:white_check_mark:"
    )


def test_the_cut_never_splits_an_entity_or_a_token() -> None:
    assert fit("a&amp;b", 4) == "a…"
    assert fit("hi <@U0ALICE> there", 8) == "hi …"
    assert fit("short", 5) == "short"
    assert escape_and_fit("<&>", 100) == "&lt;&amp;&gt;"
    assert quote("x\ny", 100) == ">x\n>y"


def test_approvers_are_mentioned_and_fallbacks_name_people() -> None:
    escalation = _escalation("deadline").with_changes(
        job_name="bg-2", requested_level="high", team="research"
    )
    blocks = request_blocks(escalation, LEVELS, ["U0CAROL", "U0BOB", "U0CAROL"])

    assert blocks[1]["text"]["text"] == "*Approvers*: <@U0BOB>, <@U0CAROL>"
    assert request_text(escalation) == (
        "Priority escalation for bg-2: 10 -> 50 (high), requested by <@U0ALICE>"
    )
    decided = escalation.with_changes(status=EscalationStatus.APPLIED, decided_by="U0CAROL")
    assert outcome_text(decided) == "Priority escalation for bg-2: APPLIED by <@U0CAROL>"
    no_one = request_blocks(escalation, LEVELS, [])
    assert no_one[1]["text"]["text"] == (
        ":warning: *Approvers*: none named in the policy for this share or team."
    )
