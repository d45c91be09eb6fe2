"""The Slack message announcing a risky audited change to the platform channel."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quotagov.governance.slack.blocks import Block, clip, context, header, section

#: Findings and differences listed by name (the rest as a count); each value from the
#: CloudTrail request is cut to :data:`_MAX_VALUE` characters, so every section stays
#: under Block Kit's 3000 characters.
_MAX_ITEMS = 10
_MAX_VALUE = 120


def risk_message(record: Mapping[str, Any]) -> tuple[str, list[Block]]:
    """The Slack text and Block Kit blocks announcing a risky audited change."""
    resource = record["resource"]
    actor = record["actor"]
    who = actor["principalArn"] + (" (quotagov)" if actor.get("quotagov") else "")
    text = (
        f"Risky Batch change: {record['action']} on {resource['type']} {resource['name']} "
        f"by {who}: {len(record['findings'])} finding(s)"
    )
    findings = record["findings"]
    lines = "\n".join(
        f"• *{f['code']}* ({f['severity']}): {clip(str(f['message']), 2 * _MAX_VALUE)}"
        for f in findings[:_MAX_ITEMS]
    )
    if len(findings) > _MAX_ITEMS:
        lines += f"\n• and {len(findings) - _MAX_ITEMS} more finding(s)"
    difference = record["difference"]
    changes = (
        "\n".join(
            f"`{clip(str(c['path']), _MAX_VALUE)}`: {clip(repr(c['before']), _MAX_VALUE)} → "
            f"{clip(repr(c['after']), _MAX_VALUE)}"
            for c in difference[:_MAX_ITEMS]
        )
        or "(no configuration difference)"
    )
    if len(difference) > _MAX_ITEMS:
        changes += f"\n… and {len(difference) - _MAX_ITEMS} more change(s)"
    blocks: list[Block] = [
        header("Risky Batch policy change"),
        section(
            f"*{record['action']}* on `{clip(str(resource['name']), _MAX_VALUE)}` by "
            f"`{clip(who, 2 * _MAX_VALUE)}` at {record['time']}"
        ),
        section(lines or "(no findings)"),
        section(changes),
        context(
            f"audit chain {record['chain']} record {record['seq']} · event {record.get('eventId')}"
        ),
    ]
    return text, blocks
