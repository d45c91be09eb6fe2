"""Block Kit builders for escalation requests and their outcomes.

The request message carries the job, requester, reason, current and requested
priority, the impact preview and Approve / Deny buttons; Approve asks for
confirmation when approval would preempt running jobs. Limits from Block Kit
(Slack, "Button element",
https://docs.slack.dev/reference/block-kit/block-elements/button-element, and
"Confirmation dialog object",
https://docs.slack.dev/reference/block-kit/composition-objects/confirmation-dialog-object):
button text <= 75 chars, value <= 2000, confirm title <= 100, confirm text <= 300,
section text <= 3000.

Action ids: :data:`APPROVE_ACTION` and :data:`DENY_ACTION`, both starting with
:data:`ACTION_PREFIX` (the Slack interactions handler dispatches on that prefix);
the button ``value`` is the escalation id.
"""

from __future__ import annotations

from datetime import UTC, datetime

from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.model.impact_preview import ImpactPreview
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.slack.blocks import (
    Block,
    actions,
    button,
    clip,
    escape,
    format_seconds,
    header,
    section,
)

ACTION_PREFIX = "escalation_"
APPROVE_ACTION = "escalation_approve"
DENY_ACTION = "escalation_deny"

_MAX_REASON = 1000
#: A preview lists at most this many victims by name (the rest as a count), which keeps
#: the section within Block Kit's 3000 characters with both previews shown.
MAX_LISTED_VICTIMS = 8


def _when(epoch_seconds: float) -> str:
    """A Slack date token for ``epoch_seconds`` (the reader's time zone), with a UTC
    fallback text."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(epoch_seconds)}^{{date_short_pretty}} {{time}}|{moment}>"


def _who(escalation: Escalation) -> str:
    """The requester as a Slack mention, else their principal in code style."""
    if escalation.requester_slack_id:
        return f"<@{escalation.requester_slack_id}>"
    return f"`{escape(escalation.requester)}`"


def preview_text(preview: ImpactPreview | None) -> str:
    """The impact preview as mrkdwn: the summary plus one line per preempted job."""
    if preview is None:
        return "_No impact preview._"
    lines = [escape(clip(preview.summary, 400))]
    for job in preview.preempted[:MAX_LISTED_VICTIMS]:
        kind = "in-share" if job.kind == "IN_SHARE" else "cross-share"
        lines.append(
            f"• *{escape(job.job_name)}* (`{job.job_id}`, {escape(job.quota_share_name)}, "
            f"{kind} preemption): {format_seconds(job.unsaved_seconds)} of unsaved work"
        )
    rest = preview.preempted[MAX_LISTED_VICTIMS:]
    if rest:
        unsaved = format_seconds(sum(j.unsaved_seconds for j in rest))
        lines.append(f"• and {len(rest)} more job(s) with {unsaved} of unsaved work in all")
    return "\n".join(lines)


def _facts(escalation: Escalation, level_names: dict[int, str]) -> list[Block]:
    """The blocks both messages share: job, requester, share, expiry, priorities,
    reason (clipped to 1000 characters) and the impact preview."""
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
        section(f"*Reason*\n>{escape(clip(escalation.reason, _MAX_REASON))}"),
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


def request_text(escalation: Escalation) -> str:
    """Notification fallback text of the request message."""
    return (
        f"Priority escalation for {escalation.job_name}: {escalation.current_priority} -> "
        f"{escalation.requested_priority} ({escalation.requested_level}), "
        f"requested by {escalation.requester_slack_id or escalation.requester}"
    )


def request_blocks(escalation: Escalation, level_names: dict[int, str]) -> list[Block]:
    """Blocks of the request message with Approve / Deny buttons.

    Args:
        escalation: the PENDING request (its ``preview`` decides the confirm dialog).
        level_names: ``schedulingPriority`` -> level name, to name the current level.
    """
    preview = escalation.preview
    confirm = None
    if preview is not None and preview.would_preempt:
        # the dialog allows 300 characters: two names (each at most 80), then a count
        names = ", ".join(clip(job.job_name, 80) for job in preview.preempted[:2])
        more = len(preview.preempted) - 2
        names += f" and {more} more" if more > 0 else ""
        confirm = (
            "Preempt running jobs?",
            f"Approving stops {escape(names)} and loses "
            f"{format_seconds(preview.unsaved_seconds)} of unsaved work.",
            "Approve and preempt",
            "Cancel",
        )
    approve = button(
        "Approve", APPROVE_ACTION, escalation.escalation_id, style="primary", confirm=confirm
    )
    deny = button("Deny", DENY_ACTION, escalation.escalation_id, style="danger")
    return [
        header("Priority escalation request"),
        *_facts(escalation, level_names),
        actions(f"escalation:{escalation.escalation_id}"[:255], [approve, deny]),
    ]


def _outcome_line(escalation: Escalation) -> str:
    """One mrkdwn line for the escalation's status, naming who decided and when."""
    decider = escalation.decided_by
    by = f"<@{decider}>" if decider and decider != QUOTAGOV_ACTOR else QUOTAGOV_ACTOR
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
            f"`{escape(escalation.error or 'unknown error')}`. It will be retried."
        )
    if status is EscalationStatus.SUPERSEDED:
        return (
            f":fast_forward: *Approved* by {by}{at}, but not applied: Batch already runs "
            f"the job at schedulingPriority {escalation.superseded_priority}, at or above "
            f"the requested {escalation.requested_priority}. Nothing was changed."
        )
    if status is EscalationStatus.DENIED:
        why = f" Not applied: `{escape(clip(escalation.error, 500))}`" if escalation.error else ""
        return f":no_entry: *Denied* by {by}{at}.{why}"
    if status is EscalationStatus.EXPIRED:
        return f":hourglass: *Expired* at {_when(escalation.expires_at)} without a decision."
    return "Waiting for a decision."


def outcome_text(escalation: Escalation) -> str:
    """Notification fallback text of the updated message."""
    return f"Priority escalation for {escalation.job_name}: {escalation.status.value}" + (
        f" by {escalation.decided_by}" if escalation.decided_by else ""
    )


def outcome_blocks(escalation: Escalation, level_names: dict[int, str]) -> list[Block]:
    """Blocks of the message once decided: the facts, no buttons, the outcome and decider."""
    return [
        header("Priority escalation request"),
        *_facts(escalation, level_names),
        section(_outcome_line(escalation)),
    ]
