"""Block Kit builders for dispositions: asking a job's owner, and telling the outcome.

A job whose preemption retries ran out (``docs/design.md``, "Job-state handling and retry
exhaustion") and whose class's policy says ``ask-owner`` (or whose policy action is
impossible) gets a message to its owner: the question and one button per choice still
offered. The same message is updated once the owner decided. Limits from Block Kit
(Slack, "Button element",
https://docs.slack.dev/reference/block-kit/block-elements/button-element, and
"Confirmation dialog object",
https://docs.slack.dev/reference/block-kit/composition-objects/confirmation-dialog-object):
button text <= 75 characters, confirm title <= 100, confirm text <= 300, confirm/deny
button text <= 30, section text <= 3000, ``block_id`` <= 255.

Action ids: ``disposition_<choice>`` (:data:`ACTION_ID_PREFIX` + ``resubmit``,
``reclassify`` or ``abandon``; the Slack interactions handler dispatches on the
prefix); the button ``value`` is the submission id.

These builders take plain values (ids, texts, choices as strings), so this module
depends on nothing of :mod:`quotagov.governance.dispositions`, which uses it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quotagov.governance.slack.blocks import Block, actions, button, section

#: Slack ``action_id`` prefix of the ask-owner buttons (``disposition_<choice>``).
ACTION_ID_PREFIX = "disposition_"

_LABELS = {"resubmit": "Resubmit", "reclassify": "Reclassify", "abandon": "Abandon"}
_MAX_BLOCK_ID = 255


def ask_text(job_id: str, workload_class: str, quota_share: str | None, reason: str) -> str:
    """The question to the owner (also the notification fallback text)."""
    return (
        f"Job `{job_id}` (class {workload_class}, share {quota_share}) needs a decision: {reason}"
    )


def ask_blocks(job_id: str, text: str, choices: Sequence[str]) -> list[Block]:
    """The ask-owner message: a section with ``text`` and :func:`choice_buttons`."""
    return [section(text), choice_buttons(job_id, choices)]


def choice_buttons(job_id: str, choices: Sequence[str]) -> Block:
    """An ``actions`` block with one button per choice, in the order given.

    Args:
        job_id: the submission id (each button's ``value``).
        choices: ``resubmit``, ``reclassify`` and/or ``abandon``; resubmit is the
            primary button, abandon the danger one and asks for confirmation.
    """
    elements = [
        button(
            _LABELS[choice],
            f"{ACTION_ID_PREFIX}{choice}",
            job_id,
            style={"resubmit": "primary", "abandon": "danger"}.get(choice),
            confirm=(
                ("Abandon this job?", "No successor will be submitted.", "Abandon", "Cancel")
                if choice == "abandon"
                else None
            ),
        )
        for choice in choices
    ]
    block_id = f"disposition_{re.sub(r'[^A-Za-z0-9_-]', '-', job_id)}"[:_MAX_BLOCK_ID]
    return actions(block_id, elements)


def abandoned_text(job_id: str, reason: str) -> str:
    """What the owner is told when nothing but ``abandon`` was left."""
    return f"Job `{job_id}` was abandoned: {reason}"


def notice_blocks(text: str) -> list[Block]:
    """A message of one section (no buttons)."""
    return [section(text)]


def decision_text(
    *,
    decided_by: str | None,
    choice: str | None,
    target_share: str | None,
    submitted_successor: str | None,
    error: str | None,
) -> str:
    """The updated ask-owner message once the owner decided.

    Args:
        decided_by: the owner's Slack user id (mentioned).
        choice: what was decided.
        target_share: the successor's quota share, when there is one.
        submitted_successor: the successor's submission id once Batch accepted it.
        error: why submitting the successor failed (the owner may click again).
    """
    target = f" into share {target_share}" if target_share else ""
    text = f"Decision by <@{decided_by}>: {choice}{target}"
    if submitted_successor:
        text += f"; successor `{submitted_successor}` submitted"
    if error:
        text += f"; submitting the successor failed ({error}), click again to retry"
    return text


def decision_blocks(job_id: str, text: str, retry_choice: str | None) -> list[Block]:
    """The decided message: ``text``, plus the chosen button again when it must be retried."""
    blocks = notice_blocks(text)
    if retry_choice is not None:
        blocks.append(choice_buttons(job_id, [retry_choice]))
    return blocks
