"""The escalation's Slack message: where it is posted, and showing the outcome in it.

The blocks themselves are built in :mod:`quotagov.governance.slack.escalations`.
"""

from __future__ import annotations

import logging

from quotagov.governance.escalations.context import EscalationDeps
from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.ports import ChatError, PostedMessage
from quotagov.governance.slack.escalations import (
    outcome_blocks,
    outcome_text,
    request_blocks,
    request_text,
)
from quotagov.policy.models import Policy

logger = logging.getLogger(__name__)


def level_names(policy: Policy) -> dict[int, str]:
    """``schedulingPriority`` -> priority level name (to name a job's current level)."""
    return {level.schedulingPriority: level.name for level in policy.priorityLevels}


def channel_for(deps: EscalationDeps, escalation: Escalation) -> str:
    """The quota share's ``approvalChannel``, else ``APPROVAL_CHANNEL``.

    Raises:
        KeyError: when the escalation's share is not in the policy.
    """
    share = deps.policy.share(escalation.quota_share_name)
    return share.approvalChannel or deps.default_channel


def update_message(deps: EscalationDeps, escalation: Escalation) -> bool:
    """Show ``escalation``'s outcome in its Slack message (``chat.update``); a PENDING
    request keeps its buttons (its preview was recomputed and awaits confirmation).

    Returns False (and logs) when there is no message or Slack refused; the decision
    itself is already stored, so this never undoes anything.
    """
    if not escalation.channel or not escalation.ts:
        return False
    pending = escalation.status is EscalationStatus.PENDING
    text = request_text(escalation) if pending else outcome_text(escalation)
    names = level_names(deps.policy)
    blocks = request_blocks(escalation, names) if pending else outcome_blocks(escalation, names)
    try:
        deps.chat.update(PostedMessage(escalation.channel, escalation.ts), text, blocks)
    except ChatError as error:
        logger.warning(
            "could not update the Slack message of %s: %s",
            escalation.escalation_id,
            error.error,
        )
        return False
    return True
