"""Block Kit pieces shared by every Slack message quotagov sends.

Limits from Block Kit (Slack's Block Kit reference, e.g. "Button element",
https://docs.slack.dev/reference/block-kit/block-elements/button-element): section text
at most 3000 characters, header 150, button 75, confirm text 300. The blocks are built
with slack_sdk's models (below), which refuse a text over its limit; the messages keep
their texts short by construction (bounded lists), and :func:`clip` cuts only free
text that comes from people or CloudTrail (reasons, request values).
"""

from __future__ import annotations

from typing import Any

#: One Block Kit block (a JSON object).
Block = dict[str, Any]
#: Section text limit, characters.
MAX_SECTION_TEXT = 3000


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


# -- Block Kit through slack_sdk's models ---------------------------------------------
#
# Each builder makes the block with slack_sdk's Block Kit models
# (:mod:`slack_sdk.models.blocks`), which check Block Kit's limits and shapes when the
# block is serialized (a too-long text raises ``SlackObjectFormationError`` instead of
# reaching Slack), and returns its ``to_dict()``. slack_sdk is imported when the first
# block is built, not when this module is (Lambda cold start: importing slack_sdk costs
# several times a bare ``import boto3``). Free text from people (reasons) is cut with
# :func:`clip` by the callers before it gets here; everything else is short by
# construction.


def section(text: str, fields: list[str] | None = None) -> Block:
    """A ``section`` block with mrkdwn ``text`` (and mrkdwn ``fields``, at most 10)."""
    from slack_sdk.models.blocks import MarkdownTextObject, SectionBlock

    block = SectionBlock(
        text=MarkdownTextObject(text=text) if text else None,
        fields=[MarkdownTextObject(text=f) for f in fields] if fields else None,
    )
    return dict(block.to_dict())


def header(text: str) -> Block:
    """A ``header`` block (plain text, at most 150 characters)."""
    from slack_sdk.models.blocks import HeaderBlock, PlainTextObject

    return dict(HeaderBlock(text=PlainTextObject(text=text, emoji=True)).to_dict())


def context(text: str) -> Block:
    """A ``context`` block of one mrkdwn element."""
    from slack_sdk.models.blocks import ContextBlock, MarkdownTextObject

    return dict(ContextBlock(elements=[MarkdownTextObject(text=text)]).to_dict())


def button(
    label: str,
    action_id: str,
    value: str,
    *,
    style: str | None = None,
    confirm: tuple[str, str, str, str] | None = None,
) -> Any:
    """A ``button`` element (a slack_sdk ``ButtonElement``, for :func:`actions`).

    Args:
        confirm: ``(title, mrkdwn text, confirm label, deny label)`` of a confirmation
            dialog (style ``danger``), or None.
    """
    from slack_sdk.models.blocks import (
        ButtonElement,
        ConfirmObject,
        MarkdownTextObject,
        PlainTextObject,
    )

    dialog = None
    if confirm is not None:
        title, body, yes, no = confirm
        dialog = ConfirmObject(
            title=PlainTextObject(text=title, emoji=True),
            text=MarkdownTextObject(text=body),
            confirm=PlainTextObject(text=yes, emoji=True),
            deny=PlainTextObject(text=no, emoji=True),
            style="danger",
        )
    return ButtonElement(
        text=PlainTextObject(text=label, emoji=True),
        action_id=action_id,
        value=value,
        style=style,
        confirm=dialog,
    )


def actions(block_id: str, elements: list[Any]) -> Block:
    """An ``actions`` block of :func:`button` elements."""
    from slack_sdk.models.blocks import ActionsBlock

    return dict(ActionsBlock(block_id=block_id, elements=elements).to_dict())
