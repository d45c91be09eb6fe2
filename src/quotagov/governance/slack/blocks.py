"""Block Kit pieces shared by every Slack message quotagov sends, within Slack's limits
by construction.

Limits (Slack's Block Kit reference: "Section block",
https://docs.slack.dev/reference/block-kit/blocks/section-block, "Header block",
https://docs.slack.dev/reference/block-kit/blocks/header-block, "Button element",
https://docs.slack.dev/reference/block-kit/block-elements/button-element,
"Confirmation dialog object",
https://docs.slack.dev/reference/block-kit/composition-objects/confirmation-dialog-object;
``chat.postMessage``, https://docs.slack.dev/reference/methods/chat.postMessage, for the
fallback ``text``): see the ``MAX_*`` constants below.

Every builder here bounds what it is given itself, so no caller can build a block
Slack (or slack_sdk's models, which raise ``SlackObjectFormationError``) would refuse:

- free text from people or CloudTrail (reasons, names, request values) is escaped
  FIRST (:func:`escape`: ``&``, ``<``, ``>`` become ``&amp;``, ``&lt;``, ``&gt;``) and cut
  SECOND (:func:`fit`), so text full of characters Slack escapes cannot grow past a
  limit after it was cut; :func:`fit` never cuts inside an ``&...;`` entity nor a
  ``<...>`` token (a mention or a link);
- :func:`section`, :func:`header`, :func:`context`, :func:`button` and
  :func:`fallback_text` cut their mrkdwn (already escaped) or plain text to the limit
  with :func:`fit`; a button ``value`` or ``action_id`` (ids, never cut) over its limit
  is a ``ValueError`` naming the field;
- :func:`quote` puts EVERY line of a multi-line text in the block quote, so a later
  line of a reason cannot pose as a section of the bot's own.
"""

from __future__ import annotations

import re
from typing import Any

#: One Block Kit block (a JSON object).
Block = dict[str, Any]
#: ``section`` text, characters.
MAX_SECTION_TEXT = 3000
#: Each of a ``section``'s ``fields``, characters; and at most this many fields.
MAX_FIELD_TEXT = 2000
MAX_FIELDS = 10
#: ``header`` text (plain text), characters.
MAX_HEADER_TEXT = 150
#: A ``context`` element's mrkdwn text, characters (kept within a field's limit).
MAX_CONTEXT_TEXT = 2000
#: Button: label 75, ``value`` 2000, ``action_id`` 255 characters.
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_ACTION_ID = 255
#: ``block_id``, characters.
MAX_BLOCK_ID = 255
#: Confirmation dialog: title 100, text 300, confirm/deny labels 30 characters.
MAX_CONFIRM_TITLE = 100
MAX_CONFIRM_TEXT = 300
MAX_CONFIRM_BUTTON = 30
#: The message's fallback ``text``: Slack asks to keep it within 4,000 characters
#: (it truncates far longer ones); quotagov keeps it within this.
MAX_FALLBACK_TEXT = 4000

_ELLIPSIS = "…"
#: An entity (``&amp;``) or token (``<@U1>``, ``<!date^...|...>``) left open at the cut.
_OPEN_ENTITY = re.compile(r"&[#A-Za-z0-9]*$")
_OPEN_TOKEN = re.compile(r"<[^<>]*$")


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in an ellipsis when cut.

    For plain text that is not escaped afterwards (e.g. a ``plain_text`` object or a
    value kept in a record). Text that is escaped for mrkdwn goes through
    :func:`escape` first and :func:`fit` second instead.
    """
    return text if len(text) <= limit else text[: limit - 1] + _ELLIPSIS


def escape(text: str) -> str:
    """Escape Slack's control characters (``&``, ``<``, ``>``) in text from people.

    Slack, "Formatting text for app surfaces", escaping:
    https://docs.slack.dev/messaging/formatting-message-text. The result may be up to
    five times as long as ``text`` (``&`` -> ``&amp;``); cut it afterwards with :func:`fit`.
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fit(mrkdwn: str, limit: int) -> str:
    """``mrkdwn`` (already escaped) cut to at most ``limit`` characters, ellipsis included.

    The cut never splits an entity (``&amp;``) nor a ``<...>`` token (mention, date,
    link): a piece left open at the cut is dropped whole.

    Raises:
        ValueError: when ``limit`` is below 1.
    """
    if limit < 1:
        raise ValueError(f"limit: must be at least 1, got {limit}")
    if len(mrkdwn) <= limit:
        return mrkdwn
    head = mrkdwn[: limit - len(_ELLIPSIS)]
    for open_piece in (_OPEN_ENTITY, _OPEN_TOKEN):
        match = open_piece.search(head)
        if match is not None:
            head = head[: match.start()]
    return head + _ELLIPSIS


def escape_and_fit(text: str, limit: int) -> str:
    """Text from people as mrkdwn within ``limit`` characters: :func:`escape`, then :func:`fit`."""
    return fit(escape(text), limit)


def quote(text: str, limit: int) -> str:
    """``text`` from people as a mrkdwn block quote of at most ``limit`` characters.

    Escaped first; every line (blank ones too) starts with ``>``, so no line of a
    multi-line text stands outside the quote; cut second (:func:`fit`).
    """
    lines = escape(text).splitlines() or [""]
    return fit("\n".join(f">{line}" for line in lines), limit)


def fallback_text(mrkdwn: str) -> str:
    """A message's fallback (notification) ``text``, cut to :data:`MAX_FALLBACK_TEXT`.

    Slack reads the fallback as mrkdwn too: escape what people wrote into it first.
    """
    return fit(mrkdwn, MAX_FALLBACK_TEXT)


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
# block is serialized, and returns its ``to_dict()``; every text is cut to its limit
# here first (:func:`fit`), so that check cannot fail on a length. slack_sdk is
# imported when the first block is built, not when this module is (Lambda cold start:
# importing slack_sdk costs several times a bare ``import boto3``).


def _plain(text: str, limit: int) -> Any:
    from slack_sdk.models.blocks import PlainTextObject

    return PlainTextObject(text=clip(text, limit), emoji=True)


def section(text: str, fields: list[str] | None = None) -> Block:
    """A ``section`` block with mrkdwn ``text`` (cut to :data:`MAX_SECTION_TEXT`) and mrkdwn
    ``fields`` (the first :data:`MAX_FIELDS`, each cut to :data:`MAX_FIELD_TEXT`).

    ``text`` and ``fields`` are mrkdwn: anything people wrote in them is escaped already.
    """
    from slack_sdk.models.blocks import MarkdownTextObject, SectionBlock

    block = SectionBlock(
        text=MarkdownTextObject(text=fit(text, MAX_SECTION_TEXT)) if text else None,
        fields=(
            [MarkdownTextObject(text=fit(f, MAX_FIELD_TEXT)) for f in fields[:MAX_FIELDS]]
            if fields
            else None
        ),
    )
    return dict(block.to_dict())


def header(text: str) -> Block:
    """A ``header`` block (plain text, cut to :data:`MAX_HEADER_TEXT` characters)."""
    from slack_sdk.models.blocks import HeaderBlock

    return dict(HeaderBlock(text=_plain(text, MAX_HEADER_TEXT)).to_dict())


def context(text: str) -> Block:
    """A ``context`` block of one mrkdwn element (cut to :data:`MAX_CONTEXT_TEXT`)."""
    from slack_sdk.models.blocks import ContextBlock, MarkdownTextObject

    return dict(
        ContextBlock(elements=[MarkdownTextObject(text=fit(text, MAX_CONTEXT_TEXT))]).to_dict()
    )


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
        label: plain text, cut to :data:`MAX_BUTTON_TEXT`.
        action_id: at most :data:`MAX_ACTION_ID` characters (never cut: it routes the click).
        value: at most :data:`MAX_BUTTON_VALUE` characters (never cut: an id).
        confirm: ``(title, mrkdwn text, confirm label, deny label)`` of a confirmation
            dialog (style ``danger``), or None; each cut to its limit.

    Raises:
        ValueError: ``action_id`` or ``value`` is too long (named in the message).
    """
    from slack_sdk.models.blocks import ButtonElement, ConfirmObject, MarkdownTextObject

    if len(action_id) > MAX_ACTION_ID:
        raise ValueError(f"button.action_id: longer than {MAX_ACTION_ID} characters")
    if len(value) > MAX_BUTTON_VALUE:
        raise ValueError(f"button.value: longer than {MAX_BUTTON_VALUE} characters")
    dialog = None
    if confirm is not None:
        title, body, yes, no = confirm
        dialog = ConfirmObject(
            title=_plain(title, MAX_CONFIRM_TITLE),
            text=MarkdownTextObject(text=fit(body, MAX_CONFIRM_TEXT)),
            confirm=_plain(yes, MAX_CONFIRM_BUTTON),
            deny=_plain(no, MAX_CONFIRM_BUTTON),
            style="danger",
        )
    return ButtonElement(
        text=_plain(label, MAX_BUTTON_TEXT),
        action_id=action_id,
        value=value,
        style=style,
        confirm=dialog,
    )


def actions(block_id: str, elements: list[Any]) -> Block:
    """An ``actions`` block of :func:`button` elements (``block_id`` cut to
    :data:`MAX_BLOCK_ID`)."""
    from slack_sdk.models.blocks import ActionsBlock

    return dict(ActionsBlock(block_id=block_id[:MAX_BLOCK_ID], elements=elements).to_dict())
