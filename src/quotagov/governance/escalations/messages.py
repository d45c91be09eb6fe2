"""The escalation's Slack message (its "card"): where it is posted, and showing the
outcome in it until it does.

The blocks themselves are built in :mod:`quotagov.governance.slack.escalations`
(:func:`request_message` builds the request's before anything is stored).

A ``chat.update`` that still fails after slack_sdk's own retries (HTTP 429 is retried
after ``Retry-After``, :mod:`quotagov.adapters.slack`) leaves a pending card update
(:meth:`~quotagov.governance.ports.EscalationRepository.note_card_update_failed`); the
scheduled housekeeping run retries it with the escalation's state at that time
(:func:`retry_card_updates`) until the card shows it, and parks it after
:data:`~.context.MAX_CARD_UPDATE_ATTEMPTS` failures (metric ``CardUpdatesParked``,
alarmed). A decided card never keeps live Approve/Deny buttons for longer than that.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from quotagov.governance.escalations.authority import approvers_of
from quotagov.governance.escalations.context import MAX_CARD_UPDATE_ATTEMPTS, EscalationDeps
from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.ports import CardUpdate, ChatError, PostedMessage
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


@dataclass(frozen=True)
class CardMessage:
    """A card's fallback ``text`` and Block Kit ``blocks``, built and within Slack's limits."""

    text: str
    blocks: list[dict[str, Any]]


def request_message(deps: EscalationDeps, escalation: Escalation) -> CardMessage:
    """The request card of a PENDING ``escalation``: built before anything is stored, so
    a message that could not be built leaves nothing behind.

    Raises:
        ValueError: the card cannot be built (an escalation id longer than a button
            value may be).
    """
    return CardMessage(
        request_text(escalation),
        request_blocks(escalation, level_names(deps.policy), approvers_of(deps.policy, escalation)),
    )


def card_message(deps: EscalationDeps, escalation: Escalation) -> CardMessage:
    """The card showing ``escalation``'s state: the request (with its buttons) while
    PENDING, else the outcome with no buttons."""
    if escalation.status is EscalationStatus.PENDING:
        return request_message(deps, escalation)
    return CardMessage(
        outcome_text(escalation), outcome_blocks(escalation, level_names(deps.policy))
    )


def update_message(deps: EscalationDeps, escalation: Escalation) -> bool:
    """Show ``escalation``'s state in its Slack message (``chat.update``); a PENDING
    request keeps its buttons (its preview was recomputed and awaits confirmation).

    Returns False (and logs) when there is no message or Slack refused; a refusal is
    kept as a pending card update, retried by :func:`retry_card_updates`. The decision
    itself is already stored, so this never undoes anything.
    """
    if not escalation.channel or not escalation.ts:
        return False
    message = card_message(deps, escalation)
    try:
        deps.chat.update(
            PostedMessage(escalation.channel, escalation.ts), message.text, message.blocks
        )
    except ChatError as error:
        logger.warning(
            "could not update the Slack message of %s: %s; the scheduled run retries it",
            escalation.escalation_id,
            error.error,
        )
        deps.repository.note_card_update_failed(
            escalation.escalation_id, error.error, deps.clock.now()
        )
        return False
    return True


@dataclass(frozen=True)
class CardRetries:
    """Outcome of one :func:`retry_card_updates` run (escalation ids)."""

    updated: list[str]
    failed: list[str]
    parked: list[str]


def retry_card_updates(deps: EscalationDeps) -> CardRetries:
    """Retry every pending card update with the escalation's state now.

    A card shown is forgotten (:meth:`card_updated`); one that fails again counts one
    more attempt, and at :data:`~.context.MAX_CARD_UPDATE_ATTEMPTS` is parked (logged
    as an error; the caller counts ``CardUpdatesParked``). An update whose escalation
    or message is gone is forgotten.
    """
    done = CardRetries([], [], [])
    for pending in deps.repository.card_updates_due():
        _retry_card(deps, pending, done)
    return done


def _retry_card(deps: EscalationDeps, pending: CardUpdate, done: CardRetries) -> None:
    escalation = deps.repository.get(pending.escalation_id)
    if escalation is None or not escalation.channel or not escalation.ts:
        deps.repository.card_updated(pending.escalation_id)
        return
    message = card_message(deps, escalation)
    try:
        deps.chat.update(
            PostedMessage(escalation.channel, escalation.ts), message.text, message.blocks
        )
    except ChatError as error:
        after = deps.repository.note_card_update_failed(
            pending.escalation_id, error.error, deps.clock.now()
        )
        if after.attempts >= MAX_CARD_UPDATE_ATTEMPTS:
            deps.repository.park_card_update(pending.escalation_id)
            logger.error(
                "Slack message of %s parked after %d failed updates (last: %s); it may "
                "still show an earlier state",
                pending.escalation_id,
                after.attempts,
                error.error,
            )
            done.parked.append(pending.escalation_id)
        else:
            done.failed.append(pending.escalation_id)
        return
    deps.repository.card_updated(pending.escalation_id)
    done.updated.append(pending.escalation_id)
