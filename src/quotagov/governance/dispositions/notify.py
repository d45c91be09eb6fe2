"""Telling a job's owner in Slack: the question, the abandonment, the decision.

Slack is best effort here: the decision always stays possible on the API
(``POST /jobs/{jobId}/disposition``), so a failed or impossible post is logged and
the use case carries on. The messages themselves are built by
:mod:`quotagov.governance.slack.dispositions`. The owner is reached by Slack user id
(:func:`~.rules.owner_slack_id`), else in the platform channel.
"""

from __future__ import annotations

import logging

from quotagov.governance.dispositions.deps import DispositionDeps
from quotagov.governance.dispositions.outcome import DispositionOutcome
from quotagov.governance.dispositions.record import DispositionRecord, DispositionStatus
from quotagov.governance.model.job import JobRecord
from quotagov.governance.owners import owner_slack_id
from quotagov.governance.ports import ChatError, PostedMessage
from quotagov.governance.slack import dispositions as messages

logger = logging.getLogger(__name__)


def ask_owner(
    job: JobRecord, disposition: DispositionRecord, deps: DispositionDeps
) -> PostedMessage | None:
    """Post the question with one button per offered choice; where it landed, or None
    (no chat, no channel, or Slack refused)."""
    channel = owner_slack_id(job, deps.policy) or deps.platform_channel
    if deps.chat is None or not channel:
        logger.warning("no Slack channel for job %s; decision stays on the API", job.pk)
        return None
    text = messages.ask_text(job.pk, job.workloadClass, job.quotaShareName, disposition.reason)
    blocks = messages.ask_blocks(job.pk, text, [c.value for c in disposition.offered])
    try:
        return deps.chat.post(channel, text, blocks)
    except ChatError as error:
        logger.warning("could not ask the owner of %s in Slack: %s", job.pk, error)
        return None


def tell_abandoned(job: JobRecord, disposition: DispositionRecord, deps: DispositionDeps) -> None:
    """Tell the owner that the job was abandoned and why (no buttons)."""
    channel = owner_slack_id(job, deps.policy) or deps.platform_channel
    if deps.chat is None or not channel:
        return
    text = messages.abandoned_text(job.pk, disposition.reason)
    try:
        deps.chat.post(channel, text, messages.notice_blocks(text))
    except ChatError as error:
        logger.warning("could not tell the owner of %s in Slack: %s", job.pk, error)


def update_question(
    disposition: DispositionRecord, outcome: DispositionOutcome, deps: DispositionDeps
) -> None:
    """Replace the question by the decision (and, when submitting the successor failed,
    the chosen button again so the owner can finish it)."""
    message = disposition.message
    if deps.chat is None or message is None:
        return
    applied = outcome.status is DispositionStatus.APPLIED
    text = messages.decision_text(
        decided_by=disposition.decided_by,
        choice=disposition.choice.value if disposition.choice else None,
        target_share=disposition.target_share,
        submitted_successor=outcome.successor_id if applied else None,
        error=outcome.error,
    )
    retry = disposition.choice.value if outcome.error and disposition.choice else None
    try:
        deps.chat.update(message, text, messages.decision_blocks(outcome.job_id, text, retry))
    except ChatError as error:
        logger.warning("could not update the disposition message: %s", error)
