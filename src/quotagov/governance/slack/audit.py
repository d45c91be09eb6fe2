"""The Slack message announcing a risky audited change to the platform channel."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quotagov.governance.slack.blocks import Block, mrkdwn

#: Characters of the findings list and of the difference list (under the 3000 limit).
_MAX_LIST = 2900


def risk_message(record: Mapping[str, Any]) -> tuple[str, list[Block]]:
    """The Slack text and Block Kit blocks announcing a risky audited change."""
    resource = record["resource"]
    actor = record["actor"]
    who = actor["principalArn"] + (" (quotagov)" if actor.get("quotagov") else "")
    text = (
        f"Risky Batch change: {record['action']} on {resource['type']} {resource['name']} "
        f"by {who}: {len(record['findings'])} finding(s)"
    )
    lines = "\n".join(
        f"• *{f['code']}* ({f['severity']}): {f['message']}" for f in record["findings"]
    )
    changes = (
        "\n".join(f"`{c['path']}`: {c['before']!r} → {c['after']!r}" for c in record["difference"])
        or "(no configuration difference)"
    )
    blocks: list[Block] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Risky Batch policy change"}},
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": f"*{record['action']}* on `{resource['name']}` by `{who}` "
                f"at {record['time']}",
            },
        },
        {"type": "section", "text": mrkdwn(lines, _MAX_LIST)},
        {"type": "section", "text": mrkdwn(changes, _MAX_LIST)},
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": f"audit chain {record['chain']} record {record['seq']} "
                    f"· event {record.get('eventId')}",
                }
            ],
        },
    ]
    return text, blocks
