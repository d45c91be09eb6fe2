"""Block Kit builders for escalation requests and their outcomes.

The request message carries the job, requester, reason, current and requested
priority, the impact preview and Approve / Deny buttons; Approve asks for
confirmation when approval would preempt running jobs. Limits from Block Kit
(Slack, "Button element",
https://docs.slack.dev/reference/block-kit/block-elements/button-element, and
"Confirmation dialog object",
https://docs.slack.dev/reference/block-kit/composition-objects/confirmation-dialog-object):
button text <= 75 chars, value <= 2000, confirm title <= 100, confirm text <= 300,
section text <= 3000. The builders of :mod:`.blocks` bound every text themselves
(escaped first, cut second), so a request whose reason is 2,000 characters of ``&``
or whose names are all at their maximum length still makes a message Slack accepts;
the whole multi-line reason sits in one block quote.

Approvers (the quota share's and the team's ``approvers``, Slack user ids) are
@-mentioned in the request message, so Slack notifies them; the fallback texts name
people as mentions (``<@U...>``, which Slack shows as the person's name), never as
bare user ids.

Action ids: :data:`APPROVE_ACTION` and :data:`DENY_ACTION`, both starting with
:data:`ACTION_PREFIX` (the Slack interactions handler dispatches on that prefix);
the button ``value`` is the escalation id and, when the request carries an impact
preview, the preview round it shows (:func:`button_value`, ``<escalation id>#r<ms>``):
an Approve click whose round is not the request's current one (a click on an old card,
or replayed after the request was reopened with a new impact) confirms nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.model.impact_preview import ImpactPreview
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.slack.blocks import (
    MAX_SECTION_TEXT,
    Block,
    actions,
    button,
    escape,
    escape_and_fit,
    fallback_text,
    format_seconds,
    header,
    quote,
    section,
)

ACTION_PREFIX = "escalation_"
#: Separates the escalation id from the preview round in a button ``value``.
ROUND_MARK = "#r"
APPROVE_ACTION = "escalation_approve"
DENY_ACTION = "escalation_deny"

#: The reason section's heading; the quoted reason gets the rest of the section's 3000.
_REASON_HEADING = "*Reason*\n"
#: A Slack user id (``U...``/``W...``): only such ids are written as mentions.
_SLACK_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,20}$")
#: Approvers mentioned by name in a request (the rest as a count).
MAX_MENTIONED_APPROVERS = 20
#: A preview lists at most this many victims by name (the rest as a count), which keeps
#: the section within Block Kit's 3000 characters with both previews shown.
MAX_LISTED_VICTIMS = 8


def preview_round(escalation: Escalation) -> int | None:
    """The preview round of ``escalation``: when its current impact preview was computed,
    in epoch milliseconds; None without a preview (or one without a time). A request
    reopened because its impact changed carries a newer preview, so a new round."""
    preview = escalation.preview
    if preview is None or preview.computed_at is None:
        return None
    return round(preview.computed_at * 1000)


def button_value(escalation: Escalation) -> str:
    """The Approve/Deny button ``value``: ``<escalation id>#r<round>`` (the round of
    :func:`preview_round`), or the escalation id alone when there is no preview."""
    shown = preview_round(escalation)
    ident = escalation.escalation_id
    return ident if shown is None else f"{ident}{ROUND_MARK}{shown}"


def parse_button_value(value: str) -> tuple[str, int | None]:
    """``(escalation id, round)`` of a button ``value`` (:func:`button_value`); the round
    is None when the value carries none (or a mark not followed by a whole number, which
    then stays part of the id and matches no escalation)."""
    ident, mark, shown = value.rpartition(ROUND_MARK)
    if mark and ident and shown.isdigit() and len(shown) <= 20:
        return ident, int(shown)
    return value, None


def _when(epoch_seconds: float) -> str:
    """A Slack date token for ``epoch_seconds`` (the reader's time zone), with a UTC
    fallback text."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(epoch_seconds)}^{{date_short_pretty}} {{time}}|{moment}>"


def mention(user_id: str) -> str:
    """A Slack user id as a mention (``<@U123>``, shown as the person's name); anything
    that is not a Slack user id in code style, escaped."""
    if _SLACK_USER_ID.match(user_id):
        return f"<@{user_id}>"
    return f"`{escape_and_fit(user_id, 200)}`"


def _who(escalation: Escalation) -> str:
    """The requester as a Slack mention, else their principal in code style."""
    if escalation.requester_slack_id:
        return mention(escalation.requester_slack_id)
    return f"`{escape_and_fit(escalation.requester, 500)}`"


def approvers_line(approvers: Iterable[str]) -> str:
    """``*Approvers*: <@U1>, <@U2>`` (sorted; at most :data:`MAX_MENTIONED_APPROVERS`,
    the rest as a count), or a warning when the policy names none."""
    ids = sorted(set(approvers))
    if not ids:
        return ":warning: *Approvers*: none named in the policy for this share or team."
    named = ", ".join(mention(a) for a in ids[:MAX_MENTIONED_APPROVERS])
    rest = len(ids) - MAX_MENTIONED_APPROVERS
    return f"*Approvers*: {named}" + (f" and {rest} more" if rest > 0 else "")


def preview_text(preview: ImpactPreview | None) -> str:
    """The impact preview as mrkdwn: the summary plus one line per preempted job."""
    if preview is None:
        return "_No impact preview._"
    lines = [escape_and_fit(preview.summary, 400)]
    for job in preview.preempted[:MAX_LISTED_VICTIMS]:
        kind = "in-share" if job.kind == "IN_SHARE" else "cross-share"
        lines.append(
            f"• *{escape_and_fit(job.job_name, 128)}* (`{escape_and_fit(job.job_id, 64)}`, "
            f"{escape_and_fit(job.quota_share_name, 128)}, "
            f"{kind} preemption): {format_seconds(job.unsaved_seconds)} of unsaved work"
        )
    rest = preview.preempted[MAX_LISTED_VICTIMS:]
    if rest:
        unsaved = format_seconds(sum(j.unsaved_seconds for j in rest))
        lines.append(f"• and {len(rest)} more job(s) with {unsaved} of unsaved work in all")
    return "\n".join(lines)


def _facts(escalation: Escalation, level_names: dict[int, str]) -> list[Block]:
    """The blocks both messages share: job, requester, share, expiry, priorities,
    the whole reason in one block quote (cut to the section's limit) and the impact
    preview."""
    current = level_names.get(escalation.current_priority)
    current_text = f"{escalation.current_priority}" + (f" ({current})" if current else "")
    return [
        section(
            "",
            fields=[
                f"*Job*\n{escape(escalation.job_name)} (`{escalation.batch_job_id}`)",
                f"*Requester*\n{_who(escalation)} ({escape(escalation.team)})",
                f"*Quota share*\n{escape(escalation.quota_share_name)}",
                f"*Expires*\n{_when(escalation.expires_at)}",
                f"*Current priority*\n{current_text}",
                f"*Requested priority*\n{escalation.requested_priority} "
                f"({escape(escalation.requested_level)})",
            ],
        ),
        section(
            _REASON_HEADING + quote(escalation.reason, MAX_SECTION_TEXT - len(_REASON_HEADING))
        ),
        *(section(text) for text in _if_approved(escalation)),
    ]


def _if_approved(escalation: Escalation) -> list[str]:
    """The preview with the time it was computed; after a materially changed recompute
    at an Approve click, the new numbers first, then (a section of its own) what the
    approvers saw before."""
    preview = escalation.preview
    when = (
        f" (computed {_when(preview.computed_at)})"
        if preview is not None and preview.computed_at
        else ""
    )
    text = f"*If approved*{when}\n{preview_text(preview)}"
    old = escalation.previous_preview
    if old is None or escalation.status is not EscalationStatus.PENDING:
        return [text]
    old_when = f" at {_when(old.computed_at)}" if old.computed_at else ""
    return [
        ":warning: *The impact changed since the request.* Recomputed when Approve was "
        f"clicked; click Approve again to confirm these numbers.\n{text}",
        f"_Shown before{old_when}:_ {preview_text(old)}",
    ]


def _requester_name(escalation: Escalation) -> str:
    """The requester for a fallback text: a mention (shown as their name), else their
    principal, escaped."""
    if escalation.requester_slack_id:
        return mention(escalation.requester_slack_id)
    return escape_and_fit(escalation.requester, 500)


def request_text(escalation: Escalation) -> str:
    """Notification fallback text of the request message (names as mentions, escaped,
    at most :data:`~.blocks.MAX_FALLBACK_TEXT` characters)."""
    return fallback_text(
        f"Priority escalation for {escape_and_fit(escalation.job_name, 128)}: "
        f"{escalation.current_priority} -> {escalation.requested_priority} "
        f"({escape_and_fit(escalation.requested_level, 128)}), "
        f"requested by {_requester_name(escalation)}"
    )


def request_blocks(
    escalation: Escalation, level_names: dict[int, str], approvers: Iterable[str] = ()
) -> list[Block]:
    """Blocks of the request message: the approvers @-mentioned, the facts, Approve /
    Deny buttons.

    Args:
        escalation: the PENDING request (its ``preview`` decides the confirm dialog).
        level_names: ``schedulingPriority`` -> level name, to name the current level.
        approvers: Slack user ids who may decide it (mentioned, so Slack notifies them).

    Raises:
        ValueError: the escalation id is longer than a button value may be (2000).
    """
    preview = escalation.preview
    confirm = None
    if preview is not None and preview.would_preempt:
        # the dialog allows 300 characters: two names (each at most 80), then a count
        names = ", ".join(escape_and_fit(job.job_name, 80) for job in preview.preempted[:2])
        more = len(preview.preempted) - 2
        names += f" and {more} more" if more > 0 else ""
        confirm = (
            "Preempt running jobs?",
            f"Approving stops {names} and loses "
            f"{format_seconds(preview.unsaved_seconds)} of unsaved work.",
            "Approve and preempt",
            "Cancel",
        )
    value = button_value(escalation)
    approve = button("Approve", APPROVE_ACTION, value, style="primary", confirm=confirm)
    deny = button("Deny", DENY_ACTION, value, style="danger")
    return [
        header("Priority escalation request"),
        section(approvers_line(approvers)),
        *_facts(escalation, level_names),
        actions(f"escalation:{escalation.escalation_id}", [approve, deny]),
    ]


def _decider(escalation: Escalation) -> str:
    """Who decided, as a mention (quotagov by its name)."""
    decider = escalation.decided_by
    if decider and decider != QUOTAGOV_ACTOR:
        return mention(decider)
    return QUOTAGOV_ACTOR


def _outcome_line(escalation: Escalation) -> str:
    """One mrkdwn line for the escalation's status, naming who decided and when."""
    by = _decider(escalation)
    at = f" at {_when(escalation.decided_at)}" if escalation.decided_at else ""
    status = escalation.status
    if status is EscalationStatus.APPLIED:
        return (
            f":white_check_mark: *Approved* by {by}{at}; applied: schedulingPriority is now "
            f"{escalation.requested_priority}."
        )
    if status is EscalationStatus.APPROVED:
        return f":hourglass_flowing_sand: *Approved* by {by}{at}; applying the new priority…"
    if status is EscalationStatus.APPLY_FAILED:
        return (
            f":warning: *Approved* by {by}{at}, but UpdateServiceJob failed: "
            f"`{escape_and_fit(escalation.error or 'unknown error', 500)}`. It will be retried."
        )
    if status is EscalationStatus.SUPERSEDED:
        return (
            f":fast_forward: *Approved* by {by}{at}, but not applied: Batch already runs "
            f"the job at schedulingPriority {escalation.superseded_priority}, at or above "
            f"the requested {escalation.requested_priority}. Nothing was changed."
        )
    if status is EscalationStatus.DENIED:
        why = f" Not applied: `{escape_and_fit(escalation.error, 500)}`" if escalation.error else ""
        return f":no_entry: *Denied* by {by}{at}.{why}"
    if status is EscalationStatus.EXPIRED:
        return f":hourglass: *Expired* at {_when(escalation.expires_at)} without a decision."
    return "Waiting for a decision."


#: The outcome as the card's header says it, by status.
_OUTCOME_HEADERS = {
    EscalationStatus.APPLIED: "Priority escalation approved and applied",
    EscalationStatus.APPROVED: "Priority escalation approved, applying",
    EscalationStatus.APPLY_FAILED: "Priority escalation approved, apply failed",
    EscalationStatus.SUPERSEDED: "Priority escalation approved, nothing to change",
    EscalationStatus.DENIED: "Priority escalation denied",
    EscalationStatus.EXPIRED: "Priority escalation expired",
}


def outcome_text(escalation: Escalation) -> str:
    """Notification fallback text of the updated message (the decider as a mention)."""
    by = f" by {_decider(escalation)}" if escalation.decided_by else ""
    return fallback_text(
        f"Priority escalation for {escape_and_fit(escalation.job_name, 128)}: "
        f"{escalation.status.value}{by}"
    )


def outcome_blocks(escalation: Escalation, level_names: dict[int, str]) -> list[Block]:
    """Blocks of the message once decided: a header and first section saying the
    outcome and who decided, then the facts; no buttons."""
    return [
        header(_OUTCOME_HEADERS.get(escalation.status, "Priority escalation request")),
        section(_outcome_line(escalation)),
        *_facts(escalation, level_names),
    ]
