"""The decision use case: an approver's click on Approve or Deny in Slack.

- A decision comes from a Slack user who is an approver of the share (the share's
  ``approvers`` plus the team's ``approvers``; :func:`~.authority.approvers_of`) and is not the
  requester (four-eyes); a click on a request without ``requester_slack_id`` is
  refused whoever clicks (:func:`~.authority.decider_refusal`). A refused click changes nothing
  and is audited ``EscalationDecisionRefused``.
- PENDING moves to APPROVED or DENIED by a conditional write, so duplicate clicks
  change nothing (``already_decided``): :func:`record_decision`, the verification
  and record step. :func:`decide` then frees a DENIED request's job and sends the
  escalation id through the hand-off (``deps.handoff``, required) to the apply
  function, which calls :func:`settle`: APPROVED is applied
  (:func:`~.applying.apply_approved`), and the Slack message shows the outcome. So the
  click is answered without waiting for Batch, and the outcome appears on the card,
  not in the clicker's answer.
- A click after ``expiresAt`` expires the request instead.
- An Approve click names the preview round its card showed (``shown_round``, from the
  button value: :func:`~quotagov.governance.slack.escalations.button_value`); when that
  is not the request's current round (the card is older than a reopening with a new
  impact, or the click is replayed), nothing changes and the clicker is told to look at
  the current message (``stale``), so nobody confirms an impact they did not see.
- Before an approval is applied, :func:`settle` recomputes the impact preview
  (:func:`~.preview_check.recheck_before_apply`); when the victims or their unsaved
  work changed materially (:mod:`.recheck`), nothing is applied: the request goes back
  to PENDING with the new preview, the message shows it next to the old one, and the
  next Approve click confirms it (recomputed again). Audited
  ``EscalationPreviewChanged``. The recompute reads Batch, so it runs in the apply
  function, after the click was answered: the card, not the clicker's answer, says so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from quotagov.governance.apply_messages import escalation_message
from quotagov.governance.escalations.applying import apply_approved, refuse_apply
from quotagov.governance.escalations.authority import approval_refusal, decider_refusal
from quotagov.governance.escalations.context import EscalationDeps, handoff_of
from quotagov.governance.escalations.housekeeping import expire
from quotagov.governance.escalations.job_lock import free_job
from quotagov.governance.escalations.messages import update_message
from quotagov.governance.escalations.preview_check import recheck_before_apply
from quotagov.governance.escalations.proof import prove, unproven
from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.ports.handoff import HandoffError
from quotagov.governance.slack.escalations import preview_round

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DecisionResult:
    """What a click did.

    Attributes:
        outcome: ``approved`` or ``denied`` (recorded and handed to the apply
            function, which settles it), ``already_decided``, ``expired``,
            ``refused``, ``stale`` (an Approve click on a preview round that is not
            the current one: nothing changed) or ``unknown``.
        escalation: the escalation after the click (None when unknown).
        notice: a sentence for the clicker (shown to them only), e.g. why a click
            was refused.
    """

    outcome: str
    escalation: Escalation | None
    notice: str


def decide(
    deps: EscalationDeps,
    escalation_id: str,
    *,
    approve: bool,
    user_id: str,
    shown_round: int | None = None,
) -> DecisionResult:
    """Slack user ``user_id``'s click on Approve (``approve=True``) or Deny, on a card
    that showed the preview round ``shown_round`` (epoch ms; None: the card named none).

    :func:`record_decision`, then (unless it was refused, a repeat or expired) the
    hand-off to the apply function, which settles it (:func:`settle`); a DENIED
    request's job is freed first (a DynamoDB delete, no Batch call).

    Safe to call any number of times for the same click: only the call that moves
    PENDING to APPROVED/DENIED acts; the others report ``already_decided``.

    Raises:
        MissingHandoffError: ``deps`` has no hand-off (a function that only settles
            decisions); checked before anything is read or stored.
    """
    handoff = handoff_of(deps)
    result = record_decision(
        deps, escalation_id, approve=approve, user_id=user_id, shown_round=shown_round
    )
    if result.outcome not in ("approved", "denied") or result.escalation is None:
        return result
    decided = result.escalation
    if not approve:
        free_job(deps, decided)  # a DynamoDB delete, no Batch call
    try:
        handoff.send(escalation_message(decided.escalation_id, decision_round(decided)))
    except HandoffError as error:
        # The decision is stored: an approval still APPROVED after its claim lease is
        # taken over by the scheduled retry run of the apply function.
        logger.warning("escalation %s recorded, hand-off failed: %s", decided.escalation_id, error)
        return DecisionResult(
            result.outcome, decided, "Your decision is recorded; it will be applied shortly."
        )
    return result


def record_decision(
    deps: EscalationDeps,
    escalation_id: str,
    *,
    approve: bool,
    user_id: str,
    shown_round: int | None = None,
) -> DecisionResult:
    """Check the click and record it: the verification/record step, no Batch call.

    ``shown_round`` is the preview round (epoch ms) the clicked card showed. An Approve
    whose round is not the request's current one
    (:func:`~quotagov.governance.slack.escalations.preview_round`) is ``stale``: nothing
    is changed, the clicker is told why. Unknown, already decided, expired (moved to
    EXPIRED here) and refused clicks
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
    current_round = preview_round(escalation)
    if approve and current_round is not None and shown_round != current_round:
        logger.warning(
            "escalation %s: Approve on preview round %s, current round %s; nothing changed",
            escalation_id,
            shown_round,
            current_round,
        )
        return DecisionResult("stale", escalation, _STALE_NOTICE)
    return _decide(deps, escalation, approve=approve, user_id=user_id, now=now)


def _decide(
    deps: EscalationDeps, escalation: Escalation, *, approve: bool, user_id: str, now: float
) -> DecisionResult:
    """PENDING -> APPROVED or DENIED, audited (not yet applied nor shown)."""
    escalation_id = escalation.escalation_id
    status = EscalationStatus.APPROVED if approve else EscalationStatus.DENIED
    proof = prove(deps, escalation.with_changes(decided_by=user_id, decided_at=now))
    decided = deps.repository.transition_if_status(
        escalation_id,
        EscalationStatus.PENDING,
        {"status": status, "decided_by": user_id, "decided_at": now, "decision_proof": proof}
        | ({"claimed_at": now} if approve else {}),
    )
    if decided is None:
        current = deps.repository.get(escalation_id) or escalation
        return DecisionResult("already_decided", current, already_notice(current))
    deps.record(
        "EscalationApproved" if approve else "EscalationDenied",
        user_id,
        escalation_id,
        # a request reopened by a changed preview is decided again: a new round, a new id
        f"{escalation_id}:{status.value.lower()}"
        + (f":{decision_round(escalation)!r}" if escalation.previous_preview is not None else ""),
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

    An APPROVED request whose decision proof does not verify (:mod:`.proof`) is left
    as it is, audited, never applied. One that does is checked against the policy and
    the job's record (:func:`~.authority.approval_refusal`: the item may have been
    written by another role): one that lacks the policy's authority is DENIED by
    quotagov, unapplied. Then (not a direct level) it is rechecked
    (:func:`~.preview_check.recheck_before_apply`): when its impact changed materially
    it is reopened (PENDING) and returned unapplied.

    Returns:
        The escalation after.

    Raises:
        BatchError: the recompute could not read Batch (nothing stored; retry).
    """
    if decided.status is EscalationStatus.APPROVED:
        if unproven(deps, decided):  # written outside quotagov: audited, left as is
            return decided
        why = approval_refusal(deps.policy, deps.jobs.find(decided.job_id), decided)
        if why is not None:
            decided = refuse_apply(deps, decided, why)
        elif not decided.direct:
            reopened = recheck_before_apply(deps, decided)
            if reopened is not None:
                return reopened
            decided = deps.repository.get(decided.escalation_id) or decided
        if decided.status is EscalationStatus.APPROVED:
            decided = apply_approved(deps, decided)
    elif decided.status is EscalationStatus.DENIED:
        free_job(deps, decided)
    update_message(deps, decided)
    return decided


def decision_round(escalation: Escalation) -> float | None:
    """The decision round of ``escalation``: when the preview its approver saw was
    computed (epoch seconds), None without a preview. A request reopened by a changed
    preview (:func:`~.preview_check.recheck_before_apply`) carries a newer preview, so
    each approval round has its own audit id and hand-off idempotency key."""
    return escalation.preview.computed_at if escalation.preview is not None else None


#: What the clicker of an Approve on an out-of-date preview round is told.
_STALE_NOTICE = (
    "Nothing was changed: this button belongs to an impact preview that is no longer "
    "current (the request was reopened with new numbers). Read the current message and "
    "click Approve there to confirm what it shows."
)


def _notice(decided: Escalation, approve: bool) -> str:
    """What the clicker is told after their decision was stored (the outcome of an
    approval is shown on the card once the apply function settled it)."""
    if approve:
        return "Approved; it is applied shortly and the message shows the outcome."
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
