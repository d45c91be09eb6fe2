"""Block Kit pieces shared by every Slack message quotagov sends.

Limits from Block Kit (``../shared/reference/aws-and-slack-facts.md`` §7.5): section text
at most 3000 characters; texts are clipped with an ellipsis, never rejected.
"""

from __future__ import annotations

from typing import Any

#: One Block Kit block (a JSON object).
Block = dict[str, Any]
#: Section text limit, characters.
MAX_SECTION_TEXT = 3000


def plain_text(text: str, limit: int) -> dict[str, Any]:
    """A ``plain_text`` object (emoji on) with ``text`` clipped to ``limit`` characters."""
    return {"type": "plain_text", "text": clip(text, limit), "emoji": True}


def mrkdwn(text: str, limit: int = MAX_SECTION_TEXT) -> dict[str, Any]:
    """A ``mrkdwn`` text object with ``text`` clipped to ``limit`` characters."""
    return {"type": "mrkdwn", "text": clip(text, limit)}


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def escape(text: str) -> str:
    """Escape Slack's control characters (&, <, >) in user-provided text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def format_seconds(seconds: float) -> str:
    """``300`` -> ``"300 s"``, ``5400`` -> ``"5400 s (1 h 30 min)"``."""
    whole = round(seconds)
    if whole < 3600:
        return f"{whole} s"
    hours, rest = divmod(whole, 3600)
    minutes = rest // 60
    return f"{whole} s ({hours} h {minutes} min)" if minutes else f"{whole} s ({hours} h)"
