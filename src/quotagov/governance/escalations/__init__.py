"""Priority escalations: request, impact preview, decision in Slack, application, expiry.

Rules: ``docs/design.md``, "Priority-escalation approvals in Slack". The public
surface is this package: :class:`Escalations` (the facade the handlers call), its
input :class:`EscalationRequest` and result :class:`DecisionResult`, the refusals
(:class:`EscalationRefusedError` and its kinds), and :class:`JobRecordLookup` (the
governed-jobs adapter the composition root builds it with). Each step lives in its
own module:

- :mod:`.checks`: the request and the checks it must pass (reason, job, team,
  membership, level, the job's state in Batch, four-eyes precondition).
- :mod:`.requesting`: a checked request for a direct level (no budget) is handed to
  the apply function; any other is stored PENDING
  with one unit of the team's budget and posted to Slack with its impact preview;
  refusals are audited there.
- :mod:`.decision`: an approver's click: four-eyes, then PENDING -> APPROVED or
  DENIED by a conditional write, so duplicate clicks change nothing.
- :mod:`.applying`: ``UpdateServiceJob`` (never lowering a priority: SUPERSEDED when
  Batch already runs the job at or above the requested one), or APPLY_FAILED.
- :mod:`.housekeeping`: the scheduled run: expiry of PENDING requests past
  ``expiresAt``, retries of APPLY_FAILED ones (up to :data:`MAX_APPLY_ATTEMPTS`),
  and takeover of APPROVED ones whose claim lease (``claimedAt`` +
  :data:`STALE_APPROVAL_SECONDS`) has lapsed.
- :mod:`.job_lock`: at most one open escalation (PENDING, APPROVED or APPLY_FAILED)
  per job.
- :mod:`.messages`: the Slack message's channel and its outcome update.
- :mod:`.errors`: the refusals, by kind (:mod:`quotagov.governance.errors`).
- :mod:`.context`: the collaborators every step receives and the audit record.

Every request (accepted or refused), decision, refusal of a click, application and
expiry is recorded through the :class:`~quotagov.governance.ports.AuditSink`.

Example::

    escalations = Escalations(policy=..., jobs=JobRecordLookup(records), batch=...,
                              repository=..., chat=..., audit=..., clock=...,
                              previewer=..., default_channel="#approvals")
    try:
        escalation = escalations.request(
            EscalationRequest("sub-1", "high", "deadline on Friday", principal)
        )
    except EscalationRefusedError as refused:
        print(refused.reason)
"""

from quotagov.governance.escalations.checks import EscalationRequest
from quotagov.governance.escalations.context import MAX_APPLY_ATTEMPTS, STALE_APPROVAL_SECONDS
from quotagov.governance.escalations.decision import DecisionResult
from quotagov.governance.escalations.errors import (
    EscalationForbiddenError,
    EscalationPolicyRefusedError,
    EscalationRefusedError,
    EscalationUnavailableError,
)
from quotagov.governance.escalations.job_lookup import JobRecordLookup
from quotagov.governance.escalations.service import Escalations

__all__ = [
    "MAX_APPLY_ATTEMPTS",
    "STALE_APPROVAL_SECONDS",
    "DecisionResult",
    "EscalationForbiddenError",
    "EscalationPolicyRefusedError",
    "EscalationRefusedError",
    "EscalationRequest",
    "EscalationUnavailableError",
    "Escalations",
    "JobRecordLookup",
]
