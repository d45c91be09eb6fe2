"""The Slack messages are built with slack_sdk's Block Kit models and stay within Block
Kit's limits however large the input (many victims, long differences)."""

from __future__ import annotations

from typing import Any

from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.model.impact_preview import ImpactOutcome, ImpactPreview, PreemptedJob
from quotagov.governance.slack.audit import risk_message
from quotagov.governance.slack.escalations import request_blocks


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    out = []
    for block in blocks:
        for item in [block.get("text"), *block.get("fields", []), *block.get("elements", [])]:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                out.append(item["text"])
    return out


def test_a_preview_with_many_victims_fits_and_counts_the_rest() -> None:
    victims = tuple(
        PreemptedJob(f"id-{i:03d}" * 4, f"victim-{'x' * 100}-{i}", "background", "IN_SHARE", 300.0)
        for i in range(40)
    )
    preview = ImpactPreview(ImpactOutcome.PREEMPTS, "s" * 2000, victims, computed_at=1.0)
    escalation = Escalation(
        escalation_id="esc-1",
        job_id="sub-1",
        batch_job_id="b-1",
        job_name="j" * 128,
        job_queue="q",
        team="research",
        quota_share_name="background",
        requester="arn:aws:sts::1:assumed-role/r/alice",
        reason="r" * 5000,
        current_priority=10,
        requested_level="high",
        requested_priority=50,
        status=EscalationStatus.PENDING,
        created_at=0.0,
        expires_at=3600.0,
        preview=preview,
        previous_preview=preview,
    )
    blocks = request_blocks(escalation, {10: "standard"})  # slack_sdk validates on to_dict
    assert all(len(t) <= 3000 for t in _texts(blocks))
    text = "\n".join(_texts(blocks))
    assert "and 32 more job(s) with 9600 s" in text
    actions = next(b for b in blocks if b["type"] == "actions")
    approve = actions["elements"][0]
    assert len(approve["confirm"]["text"]["text"]) <= 300
    assert approve["confirm"]["style"] == "danger"


def test_a_risk_alert_with_a_long_difference_fits() -> None:
    record = {
        "resource": {"type": "quota-share", "name": "reserved" * 40},
        "actor": {"principalArn": "arn:aws:sts::1:assumed-role/admin/" + "g" * 300},
        "action": "UpdateQuotaShare",
        "time": "2026-05-04T10:31:00Z",
        "findings": [
            {"code": f"F{i}", "severity": "high", "message": "m" * 1000} for i in range(15)
        ],
        "difference": [
            {"path": f"capacityLimits[{i}]", "before": "x" * 500, "after": "y" * 500}
            for i in range(60)
        ],
        "chain": "ml-gov-queue",
        "seq": 9,
        "eventId": "e-1",
    }
    _, blocks = risk_message(record)
    assert all(len(t) <= 3000 for t in _texts(blocks))
    text = "\n".join(_texts(blocks))
    assert "and 5 more finding(s)" in text and "and 50 more change(s)" in text
