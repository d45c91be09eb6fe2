"""The request use case: a checked request is accepted without approval or asked for in Slack.

- A level in the team's ``directLevels`` needs no approval and uses no budget: the
  team may set it itself (:func:`~.applying.hand_off_direct`): it is stored APPROVED,
  audited, and handed to the apply function, which alone calls ``UpdateServiceJob``.
- Any other level gets an impact preview and its Slack request card is built (within
  Slack's limits by construction, :mod:`quotagov.governance.slack.blocks`; built
  BEFORE anything is stored, so a card that cannot be built changes nothing: no
  PENDING request, no budget unit, no job lock), then it is stored PENDING with
  ``expiresAt = now + escalationExpirySeconds`` after taking one unit of the team's
  ``escalationBudget`` and the job's lock (:func:`~.job_lock.open_pending`), and is
  posted to the quota share's ``approvalChannel`` (else ``APPROVAL_CHANNEL``). When
  Slack cannot be reached the request is withdrawn (EXPIRED, budget refunded, lock
  freed) and refused as unavailable.

The budget is a fixed window of ``periodSeconds`` aligned to the epoch: the counter of
a request at time ``t`` is ``budget#<team>#<start>`` with
``start = floor(t / periodSeconds) * periodSeconds`` (:func:`budget_key`).

Every refusal except the Slack withdrawal (audited ``EscalationWithdrawn``) is
audited once, here, as ``EscalationRefused``.
"""

from __future__ import annotations

import uuid

from quotagov.governance.escalations.applying import hand_off_direct
from quotagov.governance.escalations.checks import (
    CheckedRequest,
    EscalationRequest,
    check_request,
)
from quotagov.governance.escalations.context import EscalationDeps
from quotagov.governance.escalations.errors import (
    EscalationPolicyRefusedError,
    EscalationRefusedError,
    EscalationUnavailableError,
    audited_status,
)
from quotagov.governance.escalations.job_lock import free_job, open_pending
from quotagov.governance.escalations.messages import CardMessage, channel_for, request_message
from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.ports import BatchError, ChatError
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.ports.escalations import BudgetSpentError


def request_escalation(deps: EscalationDeps, request: EscalationRequest) -> Escalation:
    """Check ``request``, then hand it to the apply function (direct level) or store it
    PENDING and ask in Slack.

    Returns:
        The stored escalation: APPROVED (direct, handed off) or PENDING with
        ``channel``/``ts``.

    Raises:
        EscalationPolicyRefusedError: a rule refuses it (see :mod:`.checks`), the
            budget is spent, or the job has an open escalation.
        (A caller outside the job's team gets the refusal of an unknown job.)
        EscalationUnavailableError: Batch or Slack could not be reached (nothing is
            left changed).
        MissingHandoffError: a direct level in a function without a hand-off.
    """
    try:
        checked = check_request(deps, request)
    except EscalationRefusedError as error:
        raise refuse(deps, request, error) from None
    escalation = new_escalation(deps, request, checked)
    budget = checked.team.escalationBudget
    try:
        if checked.direct:
            return hand_off_direct(deps, escalation)
        pending, key, card = hold_pending(
            deps, checked, escalation, budget.count, budget.periodSeconds
        )
    except EscalationRefusedError as error:
        raise refuse(deps, request_of(escalation), error) from None
    return ask(deps, pending, key, card)


def refuse(
    deps: EscalationDeps, request: EscalationRequest, error: EscalationRefusedError
) -> EscalationRefusedError:
    """Audit the refusal of ``request`` (``EscalationRefused``); returns ``error``."""
    deps.record(
        "EscalationRefused",
        request.requester,
        request.job_id,
        f"escalation-refused:{uuid.uuid4().hex}",
        level=request.level,
        reason=request.reason,
        refusal=error.reason,
        statusCode=audited_status(error),
    )
    return error


def request_of(escalation: Escalation) -> EscalationRequest:
    """The request as the escalation records it (quotagov's job id, the stripped
    reason): what a refusal after the checks is audited with."""
    return EscalationRequest(
        escalation.job_id, escalation.requested_level, escalation.reason, escalation.requester
    )


def new_escalation(
    deps: EscalationDeps, request: EscalationRequest, checked: CheckedRequest
) -> Escalation:
    """The PENDING escalation of a checked request, created now, expiring after the
    policy's ``escalationExpirySeconds``."""
    now = deps.clock.now()
    job, level = checked.job, checked.level
    return Escalation(
        escalation_id=deps.new_id(),
        job_id=job.job_id,
        batch_job_id=checked.batch_job_id,
        job_name=job.job_name,
        job_queue=deps.policy.jobQueue,
        team=job.team,
        quota_share_name=job.quota_share_name,
        requester=request.requester,
        requester_slack_id=checked.member.slackUserId,
        reason=checked.reason,
        current_priority=checked.current_priority,
        requested_level=level.name,
        requested_priority=level.schedulingPriority,
        status=EscalationStatus.PENDING,
        created_at=now,
        expires_at=now + deps.policy.escalationExpirySeconds,
        direct=checked.direct,
    )


def budget_key(team: str, at: float, period_seconds: int) -> str:
    """The budget counter of ``team`` for a request at ``at`` (epoch seconds):
    ``budget#<team>#<start of the period>``, periods aligned to the epoch."""
    period = int(at // period_seconds)
    return f"budget#{team}#{period * period_seconds}"


def hold_pending(
    deps: EscalationDeps,
    checked: CheckedRequest,
    escalation: Escalation,
    budget: int,
    period_seconds: int,
) -> tuple[Escalation, str, CardMessage]:
    """Compute the impact preview and build the request card, then store
    ``escalation`` PENDING with one budget unit and the job's lock, and audit
    ``EscalationRequested``.

    Returns:
        The stored escalation (with its preview), its budget key and its card.

    Raises:
        EscalationUnavailableError: Batch could not be read for the preview.
        EscalationPolicyRefusedError: the budget is spent, the job has an open
            escalation, or the card cannot be built (nothing was stored).
    """
    try:
        description = deps.batch.describe_service_job(jobId=escalation.batch_job_id)
        preview = deps.previewer.preview(checked.job, description, escalation.requested_priority)
    except BatchError as error:
        raise EscalationUnavailableError(
            f"Batch is unavailable for the impact preview: {error}"
        ) from None
    escalation = escalation.with_changes(preview=preview)
    try:
        card = request_message(deps, escalation)
    except ValueError as error:
        raise EscalationPolicyRefusedError(
            f"the approval request cannot be shown in Slack ({error}); nothing was stored"
        ) from None
    key = budget_key(escalation.team, escalation.created_at, period_seconds)
    try:
        open_pending(deps, escalation, key, budget)
    except BudgetSpentError:
        raise EscalationPolicyRefusedError(
            f"escalation budget of team {escalation.team!r} is spent: "
            f"{budget} per {period_seconds} s"
        ) from None
    deps.record(
        "EscalationRequested",
        escalation.requester,
        escalation.escalation_id,
        f"{escalation.escalation_id}:requested",
        jobId=escalation.batch_job_id,
        level=escalation.requested_level,
        reason=escalation.reason,
        schedulingPriority={
            "before": escalation.current_priority,
            "after": escalation.requested_priority,
        },
        preview=preview.to_dict(),
        expiresAt=escalation.expires_at,
    )
    return escalation, key, card


def ask(deps: EscalationDeps, pending: Escalation, key: str, card: CardMessage) -> Escalation:
    """Post the PENDING request's ``card`` (built before it was stored) to its approval
    channel and record where.

    Returns:
        ``pending`` with ``channel`` and ``ts``.

    Raises:
        EscalationUnavailableError: Slack refused the post; the request was
            withdrawn (:func:`withdraw`), so nothing is left changed.
    """
    channel = channel_for(deps, pending)
    try:
        posted = deps.chat.post(channel, card.text, card.blocks)
    except ChatError as error:
        withdraw(deps, pending, key, channel, error)
        raise EscalationUnavailableError(
            f"could not post the approval request to Slack ({error.error}); "
            "nothing was changed and no budget was used"
        ) from None
    deps.repository.set_message(pending.escalation_id, posted.channel, posted.ts)
    return pending.with_changes(channel=posted.channel, ts=posted.ts)


def withdraw(
    deps: EscalationDeps, pending: Escalation, key: str, channel: str, error: ChatError
) -> None:
    """Undo a request Slack would not take: refund the budget unit ``key``, move it
    PENDING -> EXPIRED with the Slack error, free the job, audit ``EscalationWithdrawn``."""
    deps.repository.refund_budget(key)
    withdrawn = deps.repository.transition_if_status(
        pending.escalation_id,
        EscalationStatus.PENDING,
        {
            "status": EscalationStatus.EXPIRED,
            "decided_by": QUOTAGOV_ACTOR,
            "decided_at": deps.clock.now(),
            "error": f"Slack: {error.error}",
        },
    )
    if withdrawn is not None:
        free_job(deps, withdrawn)
    deps.record(
        "EscalationWithdrawn",
        QUOTAGOV_ACTOR,
        pending.escalation_id,
        f"{pending.escalation_id}:withdrawn",
        slackError=error.error,
        channel=channel,
    )
