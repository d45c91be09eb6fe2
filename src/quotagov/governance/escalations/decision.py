"""The decision use case: an approver's click on Approve or Deny in Slack.

- A decision comes from a Slack user who is an approver of the share (the share's
  ``approvers`` plus the team's ``approvers``; :func:`approvers_of`) and is not the
  requester (four-eyes); a click on a request without ``requester_slack_id`` is
  refused whoever clicks (:func:`decider_refusal`). A refused click changes nothing
  and is audited ``EscalationDecisionRefused``.
- PENDING moves to APPROVED or DENIED by a conditional write, so duplicate clicks
  change nothing (``already_decided``): :func:`record_decision`, the verification
  and record step. Then :func:`settle`: APPROVED is applied
  (:func:`~.applying.apply_approved`), DENIED frees the job's lock, and the Slack
  message shows the outcome. With a hand-off (``deps.handoff``, the Slack function)
  :func:`decide` stops after recording and sends the escalation id to the apply
  function, which calls :func:`settle`; so the click is answered without waiting for
  Batch.
- A click after ``expiresAt`` expires the request instead.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

from quotagov.governance.escalation_records import Escalation, EscalationStatus
from quotagov.governance.escalations.applying import apply_approved
from quotagov.governance.escalations.context import EscalationDeps
from quotagov.governance.escalations.housekeeping import expire
from quotagov.governance.escalations.job_lock import free_job
from quotagov.governance.escalations.messages import update_message
from quotagov.governance.handoff import escalation_message
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.ports.handoff import HandoffError
from quotagov.policy.models import Policy

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DecisionResult:
    """What a click did.

    Attributes:
        outcome: ``approved``, ``denied``, ``already_decided``, ``expired``,
            ``refused`` or ``unknown``.
        escalation: the escalation after the click (None when unknown).
        notice: a sentence for the clicker (shown to them only), e.g. why a click
            was refused.
    """

    outcome: str
    escalation: Escalation | None
    notice: str


def approvers_of(policy: Policy, escalation: Escalation) -> frozenset[str]:
    """Slack user ids who may decide ``escalation``: the approvers of its quota share
    plus those of its team (either may be missing from the policy: none from it)."""
    approvers: set[str] = set()
    with contextlib.suppress(KeyError):
        approvers.update(policy.share(escalation.quota_share_name).approvers)
    team = policy.teams.get(escalation.team)
    if team is not None:
        approvers.update(team.approvers)
    return frozenset(approvers)


def decider_refusal(policy: Policy, escalation: Escalation, user_id: str) -> str | None:
    """Why Slack user ``user_id`` may not decide ``escalation`` (four-eyes, approvers),
    or None when they may."""
    if not escalation.requester_slack_id:
        return (
            "four-eyes: the request has no requester Slack user id, "
            "so the approver cannot be checked against the requester"
        )
    if user_id == escalation.requester_slack_id:
        return "four-eyes: you cannot decide your own request"
    if user_id not in approvers_of(policy, escalation):
        return f"you are not an approver of quota share {escalation.quota_share_name!r}"
    return None


def decide(
    deps: EscalationDeps, escalation_id: str, *, approve: bool, user_id: str
) -> DecisionResult:
    """Slack user ``user_id``'s click on Approve (``approve=True``) or Deny.

    :func:`record_decision`, then (unless it was refused, a repeat or expired)
    :func:`settle` here, or with ``deps.handoff`` the hand-off to the apply function.

    Safe to call any number of times for the same click: only the call that moves
    PENDING to APPROVED/DENIED acts; the others report ``already_decided``.
    """
    result = record_decision(deps, escalation_id, approve=approve, user_id=user_id)
    if result.outcome not in ("approved", "denied") or result.escalation is None:
        return result
    decided = result.escalation
    if deps.handoff is None:
        settled = settle(deps, decided)
        return DecisionResult(result.outcome, settled, _notice(settled, approve))
    if not approve:
        free_job(deps, decided)  # a DynamoDB delete, no Batch call
    try:
        deps.handoff.send(escalation_message(decided.escalation_id))
    except HandoffError as error:
        # The decision is stored: an approval still APPROVED after its claim lease is
        # taken over by the scheduled retry run of the apply function.
        logger.warning("escalation %s recorded, hand-off failed: %s", decided.escalation_id, error)
        return DecisionResult(
            result.outcome, decided, "Your decision is recorded; it will be applied shortly."
        )
    return result


def record_decision(
    deps: EscalationDeps, escalation_id: str, *, approve: bool, user_id: str
) -> DecisionResult:
    """Check the click and record it: the verification/record step, no Batch call.

    Unknown, already decided, expired (moved to EXPIRED here) and refused clicks
    (four-eyes, not an approver: audited ``EscalationDecisionRefused``) change nothing
    else; an allowed one moves PENDING to APPROVED or DENIED with a conditional write
    and is audited (``EscalationApproved`` / ``EscalationDenied``).

    Returns:
        The :class:`DecisionResult`; ``outcome`` ``approved``/``denied`` when this call
        made the move (the escalation not yet applied nor its message updated).
    """
    escalation = deps.repository.get(escalation_id) if escalation_id else None
    if escalation is None:
        return DecisionResult("unknown", None, "This escalation request does not exist.")
    if escalation.status is not EscalationStatus.PENDING:
        return DecisionResult("already_decided", escalation, already_notice(escalation))
    now = deps.clock.now()
    if now >= escalation.expires_at:
        expired = expire(deps, escalation, now)
        current = expired or deps.repository.get(escalation_id) or escalation
        return DecisionResult("expired", current, "This request has expired; nothing was changed.")
    why = decider_refusal(deps.policy, escalation, user_id)
    if why is not None:
        return _refuse_click(deps, escalation, user_id, "approve" if approve else "deny", why)
    return _decide(deps, escalation, approve=approve, user_id=user_id, now=now)


def _decide(
    deps: EscalationDeps, escalation: Escalation, *, approve: bool, user_id: str, now: float
) -> DecisionResult:
    """PENDING -> APPROVED or DENIED, audited (not yet applied nor shown)."""
    escalation_id = escalation.escalation_id
    status = EscalationStatus.APPROVED if approve else EscalationStatus.DENIED
    decided = deps.repository.transition(
        escalation_id,
        EscalationStatus.PENDING,
        {"status": status, "decided_by": user_id, "decided_at": now}
        | ({"claimed_at": now} if approve else {}),
    )
    if decided is None:
        current = deps.repository.get(escalation_id) or escalation
        return DecisionResult("already_decided", current, already_notice(current))
    deps.record(
        "EscalationApproved" if approve else "EscalationDenied",
        user_id,
        escalation_id,
        f"{escalation_id}:{status.value.lower()}",
        jobId=decided.batch_job_id,
        requester=decided.requester,
        level=decided.requested_level,
        schedulingPriority={
            "before": decided.current_priority,
            "after": decided.requested_priority,
        },
    )
    return DecisionResult("approved" if approve else "denied", decided, _notice(decided, approve))


def settle(deps: EscalationDeps, decided: Escalation) -> Escalation:
    """Act on a recorded decision: apply an APPROVED escalation in Batch
    (:func:`~.applying.apply_approved`: APPLIED, SUPERSEDED or APPLY_FAILED), free the
    job of a DENIED one, then show the outcome in the Slack message.

    Any other status (already applied, superseded, failed, expired: a redelivered
    hand-off) only refreshes the message; nothing is sent to Batch.

    Returns:
        The escalation after.
    """
    if decided.status is EscalationStatus.APPROVED:
        decided = apply_approved(deps, decided)
    elif decided.status is EscalationStatus.DENIED:
        free_job(deps, decided)
    update_message(deps, decided)
    return decided


def _notice(decided: Escalation, approve: bool) -> str:
    """What the clicker is told after their decision was stored."""
    if decided.status is EscalationStatus.SUPERSEDED:
        return (
            f"Approved; Batch already runs the job at schedulingPriority "
            f"{decided.superseded_priority}, so nothing was changed."
        )
    if approve:
        return f"Approved; {decided.status.value}."
    return "Denied; the priority stays as it was."


def _refuse_click(
    deps: EscalationDeps, escalation: Escalation, user_id: str, verb: str, why: str
) -> DecisionResult:
    """Audit a refused click (``EscalationDecisionRefused``) and tell the clicker why."""
    deps.record(
        "EscalationDecisionRefused",
        user_id,
        escalation.escalation_id,
        f"{escalation.escalation_id}:refused:{user_id}:{verb}",
        refusal=why,
        requester=escalation.requester,
    )
    return DecisionResult("refused", escalation, f"You cannot {verb} this request: {why}.")


def already_notice(escalation: Escalation) -> str:
    """The notice for a click on a request that is no longer PENDING."""
    by = (
        f" by <@{escalation.decided_by}>"
        if escalation.decided_by not in (None, QUOTAGOV_ACTOR)
        else ""
    )
    return f"This request is already {escalation.status.value}{by}; nothing was changed."
