"""Priority escalations: request, impact preview, decision in Slack, application, expiry.

Rules (design.md, "Priority-escalation approvals in Slack"; issue 6):

- A request names a job, a policy priority level and a reason. It is refused (HTTP
  422, with the reason) when the reason is empty, the job is not quotagov's or is
  terminal (SUCCEEDED/FAILED), the level is unknown, not higher than the job's
  current ``schedulingPriority``, or not one of the team's ``directLevels`` /
  ``approvalLevels``, or when the team's escalation budget for the period is spent.
  A caller who is not a member of the job's team is refused with 403. A level that
  needs approval is refused (422) when the requester's policy member entry has no
  ``slackUserId``: four-eyes could not tell the requester from an approver.
- A level in the team's ``directLevels`` is applied at once with ``UpdateServiceJob``
  (status APPLIED, ``direct``), audited, and uses no budget: the team may set it
  itself.
- Any other level is stored PENDING with ``expiresAt = now + escalationExpirySeconds``
  after taking one unit of the team's ``escalationBudget`` (a fixed window of
  ``periodSeconds`` aligned to the epoch: the counter for a request at time ``t`` is
  ``floor(t / periodSeconds)``). The request is posted to the quota share's
  ``approvalChannel`` (else ``APPROVAL_CHANNEL``) with its impact preview.
- A decision comes from a Slack user who is an approver of the share (the share's
  ``approvers`` plus the team's ``approvers``) and is not the requester (four-eyes);
  a click on a request without ``requester_slack_id`` is refused whoever clicks.
  PENDING moves to APPROVED or DENIED by a conditional write, so duplicates change
  nothing. APPROVED then calls ``UpdateServiceJob``: APPLIED, or APPLY_FAILED with
  the error; :meth:`Escalations.retry_failed` retries those (up to
  :data:`MAX_APPLY_ATTEMPTS` attempts in all).
- A job has at most one open escalation (PENDING, APPROVED or APPLY_FAILED): a request
  that needs approval while another is open is refused (422, naming the open one),
  without taking budget or posting to Slack. The lock is taken in the same
  transaction as the PENDING record and the budget unit, and freed when the
  escalation closes (DENIED, EXPIRED, APPLIED, SUPERSEDED); a lock left behind by an
  invocation that died after closing is freed by the next request.
- Applying never lowers a priority: the job is described first, and when Batch already
  runs it at or above the requested priority ``UpdateServiceJob`` is not called and
  the escalation becomes SUPERSEDED (audited as ``EscalationSuperseded``).
- :meth:`Escalations.expire_due` moves PENDING requests past ``expiresAt`` to EXPIRED.
- Every request (accepted or refused), decision, refusal of a click, application
  and expiry is recorded through the :class:`~quotagov.governance.ports.AuditSink`.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quotagov.batch_semantics import is_terminal
from quotagov.clock import Clock
from quotagov.governance.access import team_member
from quotagov.governance.escalation_records import (
    FINAL_STATUSES,
    Escalation,
    EscalationStatus,
)
from quotagov.governance.escalations.errors import (
    EscalationForbiddenError,
    EscalationPolicyRefusedError,
    EscalationRefusedError,
    EscalationUnavailableError,
    audited_status,
)
from quotagov.governance.ports import (
    AuditSink,
    BatchError,
    BatchNotFoundError,
    BatchPort,
    ChatError,
    ChatNotifier,
    ControllerDecision,
    PostedMessage,
)
from quotagov.governance.ports.escalations import (
    BudgetSpentError,
    EscalationRepository,
    GovernedJob,
    GovernedJobs,
    ImpactPreviewer,
    OpenEscalationError,
)
from quotagov.governance.slack.escalations import (
    outcome_blocks,
    outcome_text,
    request_blocks,
    request_text,
)
from quotagov.policy.models import Policy

logger = logging.getLogger(__name__)

#: How many apply attempts (``DescribeServiceJob``, then ``UpdateServiceJob`` unless
#: Batch already has the priority) an approved escalation gets before it stays
#: APPLY_FAILED for a person to look at.
MAX_APPLY_ATTEMPTS = 5

#: Batch statuses after which a job never runs again (spec/scenario-format.md).

#: An APPROVED request claimed longer ago than this (seconds, measured from
#: ``claimed_at``) whose ``UpdateServiceJob`` never finished belongs to an invocation
#: that died (Lambda's longest timeout is 900 s); :meth:`Escalations.retry_failed` takes it over.
STALE_APPROVAL_SECONDS = 900

#: Who is recorded as deciding when quotagov itself acts (expiry, direct levels).
QUOTAGOV = "quotagov"


# -- results ---------------------------------------------------------------------


@dataclass(frozen=True)
class EscalationRequest:
    """``POST /jobs/{jobId}/escalations``: ``{"level": ..., "reason": ...}`` by ``requester``."""

    job_id: str
    level: str
    reason: str
    requester: str


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


# -- the use case ------------------------------------------------------------------


class Escalations:
    """The escalation use case. All collaborators are ports; nothing here talks to AWS.

    Args:
        policy: the governance policy.
        jobs: quotagov's job records.
        batch: the Batch port (``DescribeServiceJob``, ``UpdateServiceJob``).
        repository: escalation storage.
        chat: Slack messages.
        audit: the audit log.
        clock: time source (epoch seconds).
        previewer: computes the impact preview.
        default_channel: ``APPROVAL_CHANNEL``, for shares without ``approvalChannel``.
        new_id: makes escalation ids.
    """

    def __init__(
        self,
        *,
        policy: Policy,
        jobs: GovernedJobs,
        batch: BatchPort,
        repository: EscalationRepository,
        chat: ChatNotifier,
        audit: AuditSink,
        clock: Clock,
        previewer: ImpactPreviewer,
        default_channel: str = "",
        new_id: Callable[[], str] = lambda: f"esc-{uuid.uuid4().hex}",
    ) -> None:
        self.policy = policy
        self.jobs = jobs
        self.batch = batch
        self.repository = repository
        self.chat = chat
        self.audit = audit
        self.clock = clock
        self.previewer = previewer
        self.default_channel = default_channel
        self.new_id = new_id

    # -- helpers -------------------------------------------------------------------

    @property
    def level_names(self) -> dict[int, str]:
        """``schedulingPriority`` -> priority level name."""
        return {level.schedulingPriority: level.name for level in self.policy.priorityLevels}

    def approvers_of(self, escalation: Escalation) -> frozenset[str]:
        """Slack user ids who may decide ``escalation``: share approvers plus team approvers."""
        approvers: set[str] = set()
        with contextlib.suppress(KeyError):
            approvers.update(self.policy.share(escalation.quota_share_name).approvers)
        team = self.policy.teams.get(escalation.team)
        if team is not None:
            approvers.update(team.approvers)
        return frozenset(approvers)

    def _record(
        self, action: str, actor: str, resource: str, decision_id: str, **details: Any
    ) -> None:
        self.audit.record_decision(
            ControllerDecision(
                action=action,
                actor=actor,
                job_queue=self.policy.jobQueue,
                resource=resource,
                decision_id=decision_id,
                details=details,
            )
        )

    def _refuse(
        self, request: EscalationRequest, refusal: str | EscalationRefusedError
    ) -> EscalationRefusedError:
        """Record the refusal of ``request`` (``EscalationRefused``) and return it as an
        error (a reason alone is an :class:`EscalationPolicyRefusedError`)."""
        error = EscalationPolicyRefusedError(refusal) if isinstance(refusal, str) else refusal
        self._record(
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

    # -- request ---------------------------------------------------------------------

    def request(self, request: EscalationRequest) -> Escalation:
        """Check, then apply at once (direct level) or store PENDING and ask in Slack.

        Returns:
            The stored escalation: APPLIED (direct) or PENDING with ``channel``/``ts``.

        Raises:
            EscalationPolicyRefusedError: for the rule violations listed in the module
                docstring.
            EscalationForbiddenError: when the caller is not in the job's team.
            EscalationUnavailableError: when Batch or Slack cannot be reached (nothing
                is left changed).
        """
        reason = request.reason.strip()
        if not reason:
            raise self._refuse(request, "reason: must not be empty")
        job = self.jobs.find(request.job_id)
        if job is None or job.batch_job_id is None:
            raise self._refuse(
                request, f"jobId: {request.job_id!r} is not a job submitted by quotagov"
            )
        team = self.policy.teams.get(job.team)
        if team is None:
            raise self._refuse(
                request, f"team: {job.team!r} of job {request.job_id!r} is not in the policy"
            )
        if job.quota_share_name not in {s.quotaShareName for s in self.policy.quotaShares}:
            raise self._refuse(
                request, f"quotaShareName: share {job.quota_share_name!r} is not in the policy"
            )
        member = team_member(self.policy, job.team, request.requester)
        if member is None:
            raise self._refuse(
                request, EscalationForbiddenError(f"caller is not a member of team {job.team!r}")
            )
        try:
            level = self.policy.level(request.level)
        except KeyError:
            raise self._refuse(
                request, f"level: unknown priority level {request.level!r}"
            ) from None
        description = self._describe(request, job)
        status = str(description.get("status", ""))
        if is_terminal(status):
            raise self._refuse(
                request, f"jobId: job {job.job_name!r} is {status}; it will not run again"
            )
        if not _same_queue(str(description.get("jobQueue", "")), self.policy.jobQueue):
            raise self._refuse(
                request, f"jobId: job {job.job_name!r} is not in the governed job queue"
            )
        current = int(description.get("schedulingPriority") or 0)
        if level.schedulingPriority <= current:
            raise self._refuse(
                request,
                f"level: {level.name!r} (schedulingPriority {level.schedulingPriority}) is not "
                f"higher than the job's current schedulingPriority {current}",
            )
        direct = level.name in team.directLevels
        if not direct and level.name not in team.approvalLevels:
            raise self._refuse(
                request, f"level: team {job.team!r} may not request level {level.name!r}"
            )
        if not direct and not member.slackUserId:
            raise self._refuse(
                request,
                f"teams.{job.team}.members: {request.requester} has no slackUserId, "
                "so approvers cannot be checked against the requester",
            )

        now = self.clock.now()
        escalation = Escalation(
            escalation_id=self.new_id(),
            job_id=job.job_id,
            batch_job_id=job.batch_job_id,
            job_name=job.job_name,
            job_queue=self.policy.jobQueue,
            team=job.team,
            quota_share_name=job.quota_share_name,
            requester=request.requester,
            requester_slack_id=member.slackUserId,
            reason=reason,
            current_priority=current,
            requested_level=level.name,
            requested_priority=level.schedulingPriority,
            status=EscalationStatus.PENDING,
            created_at=now,
            expires_at=now + self.policy.escalationExpirySeconds,
            direct=direct,
        )
        if direct:
            return self._apply_direct(escalation)
        return self._ask(
            escalation, team.escalationBudget.count, team.escalationBudget.periodSeconds
        )

    def _describe(self, request: EscalationRequest, job: GovernedJob) -> dict[str, Any]:
        assert job.batch_job_id is not None
        try:
            return self.batch.describe_service_job(jobId=job.batch_job_id)
        except BatchNotFoundError:
            raise self._refuse(
                request, f"jobId: Batch does not know job {job.batch_job_id!r}"
            ) from None
        except BatchError as error:
            raise self._refuse(
                request, EscalationUnavailableError(f"Batch is unavailable, try again: {error}")
            ) from None

    def _apply_direct(self, escalation: Escalation) -> Escalation:
        try:
            self.batch.update_service_job(
                jobId=escalation.batch_job_id, schedulingPriority=escalation.requested_priority
            )
        except BatchError as error:
            request = EscalationRequest(
                escalation.job_id,
                escalation.requested_level,
                escalation.reason,
                escalation.requester,
            )
            kind = (
                EscalationPolicyRefusedError
                if error.code == "ClientException"
                else EscalationUnavailableError
            )
            raise self._refuse(request, kind(f"UpdateServiceJob failed: {error}")) from None
        now = self.clock.now()
        applied = escalation.with_changes(
            status=EscalationStatus.APPLIED,
            decided_by=QUOTAGOV,
            decided_at=now,
            applied_at=now,
            apply_attempts=1,
            expires_at=now,
        )
        self.repository.put_new(applied)
        self._note_priority(applied)
        self._record(
            "EscalationApplied",
            escalation.requester,
            escalation.escalation_id,
            f"{escalation.escalation_id}:applied",
            jobId=escalation.batch_job_id,
            direct=True,
            level=escalation.requested_level,
            reason=escalation.reason,
            schedulingPriority={
                "before": escalation.current_priority,
                "after": escalation.requested_priority,
            },
        )
        return applied

    def _ask(self, escalation: Escalation, budget: int, period_seconds: int) -> Escalation:
        request = EscalationRequest(
            escalation.job_id, escalation.requested_level, escalation.reason, escalation.requester
        )
        job = self.jobs.find(escalation.job_id)
        assert job is not None
        try:
            description = self.batch.describe_service_job(jobId=escalation.batch_job_id)
            preview = self.previewer.preview(job, description, escalation.requested_priority)
        except BatchError as error:
            raise self._refuse(
                request,
                EscalationUnavailableError(f"Batch is unavailable for the impact preview: {error}"),
            ) from None
        escalation = escalation.with_changes(preview=preview)
        period = int(escalation.created_at // period_seconds)
        budget_key = f"budget#{escalation.team}#{period * period_seconds}"
        try:
            self._create_pending(request, escalation, budget_key, budget)
        except BudgetSpentError:
            raise self._refuse(
                request,
                f"escalation budget of team {escalation.team!r} is spent: "
                f"{budget} per {period_seconds} s",
            ) from None
        self._record(
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
        channel = self._channel_for(escalation)
        try:
            posted = self.chat.post(
                channel, request_text(escalation), request_blocks(escalation, self.level_names)
            )
        except ChatError as error:
            self.repository.refund_budget(budget_key)
            withdrawn = self.repository.transition(
                escalation.escalation_id,
                EscalationStatus.PENDING,
                {
                    "status": EscalationStatus.EXPIRED,
                    "decided_by": QUOTAGOV,
                    "decided_at": self.clock.now(),
                    "error": f"Slack: {error.error}",
                },
            )
            if withdrawn is not None:
                self._free_job(withdrawn)
            self._record(
                "EscalationWithdrawn",
                QUOTAGOV,
                escalation.escalation_id,
                f"{escalation.escalation_id}:withdrawn",
                slackError=error.error,
                channel=channel,
            )
            raise EscalationUnavailableError(
                f"could not post the approval request to Slack ({error.error}); "
                "nothing was changed and no budget was used"
            ) from None
        self.repository.set_message(escalation.escalation_id, posted.channel, posted.ts)
        return escalation.with_changes(channel=posted.channel, ts=posted.ts)

    def _create_pending(
        self, request: EscalationRequest, escalation: Escalation, budget_key: str, budget: int
    ) -> None:
        """``create_pending``, refusing when the job has an open escalation.

        A lock whose holder is closed (or gone) was left by an invocation that died
        between closing it and freeing the lock: it is freed (conditionally on that
        holder) and the write tried once more.

        Raises:
            EscalationRefusedError: 422 naming the open escalation.
            BudgetSpentError: from the repository.
        """
        for _ in range(2):
            try:
                self.repository.create_pending(
                    escalation, budget_key=budget_key, budget_limit=budget
                )
                return
            except OpenEscalationError as held:
                holder = self.repository.get(held.escalation_id) if held.escalation_id else None
                if holder is not None and not _closed(holder):
                    raise self._refuse(
                        request,
                        f"jobId: job {escalation.job_name!r} already has an open escalation "
                        f"{holder.escalation_id} (level {holder.requested_level!r}, "
                        f"{holder.status.value}); wait until it is closed",
                    ) from None
                self.repository.release_job(escalation.job_id, held.escalation_id)
        raise self._refuse(
            request,
            f"jobId: job {escalation.job_name!r} already has an open escalation; "
            "wait until it is closed",
        )

    def _give_up(self, exhausted: Escalation) -> None:
        """An APPLY_FAILED request with no attempts left stays APPLY_FAILED for the
        record, frees its job for a new request, and is audited once
        (``EscalationAbandoned``). Safe to call on every run: only the run that frees the
        lock records it."""
        try:
            freed = self.repository.release_job(exhausted.job_id, exhausted.escalation_id)
        except Exception:  # retried by the next run
            logger.exception("could not free the lock of job %s", exhausted.job_id)
            return
        if freed:
            self._record(
                "EscalationAbandoned",
                QUOTAGOV,
                exhausted.escalation_id,
                f"{exhausted.escalation_id}:abandoned",
                jobId=exhausted.batch_job_id,
                attempts=exhausted.apply_attempts,
                error=exhausted.error,
            )

    def _free_job(self, closed: Escalation) -> None:
        """Free the job's lock held by ``closed`` (now DENIED, EXPIRED, APPLIED or
        SUPERSEDED). A failure is logged only: the next request frees a lock whose
        holder is closed."""
        try:
            self.repository.release_job(closed.job_id, closed.escalation_id)
        except Exception:  # the lock is cleared by the next request for the job
            logger.exception("could not free the open-escalation lock of job %s", closed.job_id)

    def _channel_for(self, escalation: Escalation) -> str:
        share = self.policy.share(escalation.quota_share_name)
        return share.approvalChannel or self.default_channel

    # -- decision ------------------------------------------------------------------------

    def decide(self, escalation_id: str, *, approve: bool, user_id: str) -> DecisionResult:
        """A Slack user's click on Approve (``approve=True``) or Deny.

        Safe to call any number of times for the same click: only the call that moves
        PENDING to APPROVED/DENIED acts; the others report ``already_decided``.
        """
        escalation = self.repository.get(escalation_id) if escalation_id else None
        if escalation is None:
            return DecisionResult("unknown", None, "This escalation request does not exist.")
        if escalation.status is not EscalationStatus.PENDING:
            return DecisionResult("already_decided", escalation, _already(escalation))
        now = self.clock.now()
        if now >= escalation.expires_at:
            expired = self._expire(escalation, now)
            current = expired or self.repository.get(escalation_id) or escalation
            return DecisionResult(
                "expired", current, "This request has expired; nothing was changed."
            )
        verb = "approve" if approve else "deny"
        if not escalation.requester_slack_id:
            return self._refuse_click(
                escalation,
                user_id,
                verb,
                "four-eyes: the request has no requester Slack user id, "
                "so the approver cannot be checked against the requester",
            )
        if user_id == escalation.requester_slack_id:
            return self._refuse_click(
                escalation, user_id, verb, "four-eyes: you cannot decide your own request"
            )
        if user_id not in self.approvers_of(escalation):
            return self._refuse_click(
                escalation,
                user_id,
                verb,
                f"you are not an approver of quota share {escalation.quota_share_name!r}",
            )
        status = EscalationStatus.APPROVED if approve else EscalationStatus.DENIED
        decided = self.repository.transition(
            escalation_id,
            EscalationStatus.PENDING,
            {"status": status, "decided_by": user_id, "decided_at": now}
            | ({"claimed_at": now} if approve else {}),
        )
        if decided is None:
            current = self.repository.get(escalation_id) or escalation
            return DecisionResult("already_decided", current, _already(current))
        self._record(
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
        if approve:
            decided = self._apply(decided)
        else:
            self._free_job(decided)
        self.update_message(decided)
        notice = (
            f"Approved; Batch already runs the job at schedulingPriority "
            f"{decided.superseded_priority}, so nothing was changed."
            if decided.status is EscalationStatus.SUPERSEDED
            else f"Approved; {decided.status.value}."
            if approve
            else "Denied; the priority stays as it was."
        )
        return DecisionResult("approved" if approve else "denied", decided, notice)

    def _refuse_click(
        self, escalation: Escalation, user_id: str, verb: str, why: str
    ) -> DecisionResult:
        self._record(
            "EscalationDecisionRefused",
            user_id,
            escalation.escalation_id,
            f"{escalation.escalation_id}:refused:{user_id}:{verb}",
            refusal=why,
            requester=escalation.requester,
        )
        return DecisionResult("refused", escalation, f"You cannot {verb} this request: {why}.")

    def _apply(self, approved: Escalation) -> Escalation:
        """Apply an APPROVED escalation: APPLIED, SUPERSEDED or APPLY_FAILED.

        ``DescribeServiceJob`` first: when Batch already runs the job at or above the
        requested priority (another escalation, a direct level or a change outside
        quotagov raised it since the request), ``UpdateServiceJob`` is not called,
        since it would lower or keep the priority, and the escalation is SUPERSEDED;
        except when an earlier attempt of this request may have reached Batch and the
        job runs at exactly the requested priority: that is this request, APPLIED.
        Otherwise ``UpdateServiceJob``. A Batch error in either call is APPLY_FAILED
        (one apply attempt) for :meth:`retry_failed`.
        """
        attempts = approved.apply_attempts + 1
        # A failed or interrupted earlier attempt may have reached Batch (a lost reply, a
        # dead invocation): finding exactly the requested priority then is its doing.
        tried_before = approved.apply_attempts > 0 or approved.error is not None
        try:
            description = self.batch.describe_service_job(jobId=approved.batch_job_id)
            running = int(description.get("schedulingPriority") or 0)
            if running < approved.requested_priority:
                self.batch.update_service_job(
                    jobId=approved.batch_job_id, schedulingPriority=approved.requested_priority
                )
        except BatchError as error:
            failed = self.repository.transition(
                approved.escalation_id,
                EscalationStatus.APPROVED,
                {
                    "status": EscalationStatus.APPLY_FAILED,
                    "error": str(error),
                    "apply_attempts": attempts,
                },
            )
            self._record(
                "EscalationApplyFailed",
                QUOTAGOV,
                approved.escalation_id,
                f"{approved.escalation_id}:apply-failed:{attempts}",
                jobId=approved.batch_job_id,
                error=str(error),
                errorCode=error.code,
                attempt=attempts,
            )
            return failed or approved
        if running > approved.requested_priority or (
            running == approved.requested_priority and not tried_before
        ):
            return self._supersede(approved, running, attempts)
        applied = self.repository.transition(
            approved.escalation_id,
            EscalationStatus.APPROVED,
            {
                "status": EscalationStatus.APPLIED,
                "applied_at": self.clock.now(),
                "error": None,
                "apply_attempts": attempts,
            },
        )
        if applied is not None:
            self._note_priority(applied)
            self._free_job(applied)
        self._record(
            "EscalationApplied",
            approved.decided_by or QUOTAGOV,
            approved.escalation_id,
            f"{approved.escalation_id}:applied",
            jobId=approved.batch_job_id,
            direct=False,
            approvedBy=approved.decided_by,
            requester=approved.requester,
            schedulingPriority={
                "before": approved.current_priority,
                "after": approved.requested_priority,
            },
            attempt=attempts,
        )
        return applied or approved

    def _supersede(self, approved: Escalation, running: int, attempts: int) -> Escalation:
        """APPROVED -> SUPERSEDED: Batch already runs the job at ``running`` (0-9999),
        at or above the requested priority; nothing is sent to Batch."""
        superseded = self.repository.transition(
            approved.escalation_id,
            EscalationStatus.APPROVED,
            {
                "status": EscalationStatus.SUPERSEDED,
                "superseded_priority": running,
                "error": None,
                "apply_attempts": attempts,
            },
        )
        if superseded is not None:
            self._free_job(superseded)
        self._record(
            "EscalationSuperseded",
            approved.decided_by or QUOTAGOV,
            approved.escalation_id,
            f"{approved.escalation_id}:superseded",
            jobId=approved.batch_job_id,
            approvedBy=approved.decided_by,
            requester=approved.requester,
            level=approved.requested_level,
            schedulingPriority={"current": running, "requested": approved.requested_priority},
            attempt=attempts,
        )
        return superseded or approved

    def _note_priority(self, applied: Escalation) -> None:
        """Keep the job's record in step with Batch after an APPLIED escalation."""
        try:
            self.jobs.record_priority(
                applied.job_id, applied.requested_level, applied.requested_priority
            )
        except Exception:  # Batch holds the priority; the record is only a view of it
            logger.exception("could not note the new priority on job %s", applied.job_id)

    def update_message(self, escalation: Escalation) -> bool:
        """Show ``escalation``'s outcome in its Slack message (``chat.update``).

        Returns False (and logs) when there is no message or Slack refused; the
        decision itself is already stored, so this never undoes anything.
        """
        if not escalation.channel or not escalation.ts:
            return False
        try:
            self.chat.update(
                PostedMessage(escalation.channel, escalation.ts),
                outcome_text(escalation),
                outcome_blocks(escalation, self.level_names),
            )
        except ChatError as error:
            logger.warning(
                "could not update the Slack message of %s: %s",
                escalation.escalation_id,
                error.error,
            )
            return False
        return True

    # -- scheduled work -------------------------------------------------------------------

    def _expire(self, escalation: Escalation, now: float) -> Escalation | None:
        expired = self.repository.transition(
            escalation.escalation_id,
            EscalationStatus.PENDING,
            {"status": EscalationStatus.EXPIRED, "decided_by": QUOTAGOV, "decided_at": now},
        )
        if expired is None:
            return None
        self._free_job(expired)
        self._record(
            "EscalationExpired",
            QUOTAGOV,
            escalation.escalation_id,
            f"{escalation.escalation_id}:expired",
            jobId=escalation.batch_job_id,
            requester=escalation.requester,
            expiresAt=escalation.expires_at,
        )
        self.update_message(expired)
        return expired

    def expire_due(self) -> list[Escalation]:
        """Move every PENDING request past its expiry to EXPIRED; returns those moved."""
        now = self.clock.now()
        moved = []
        for escalation in self.repository.due_for_expiry(now):
            expired = self._expire(escalation, now)
            if expired is not None:
                moved.append(expired)
        return moved

    def retry_failed(self) -> list[Escalation]:
        """Call ``UpdateServiceJob`` again for APPLY_FAILED requests with attempts left.

        Each retry first claims the request (APPLY_FAILED -> APPROVED, conditional),
        so concurrent runs never call Batch twice for the same request. An APPROVED
        request claimed more than :data:`STALE_APPROVAL_SECONDS` ago (its invocation
        died before recording the outcome) is first marked APPLY_FAILED, then retried.
        The claim time is ``claimed_at``, written by the approval and by every claim
        (``decided_at`` only for records from before ``claimed_at`` existed), and the
        age test is part of the conditional write, so a run never takes over a request
        that an overlapping run has just claimed.

        Returns:
            The requests this run retried, after their ``UpdateServiceJob`` outcome.
        """
        now = self.clock.now()
        cutoff = now - STALE_APPROVAL_SECONDS
        for stuck in self.repository.with_status(EscalationStatus.APPROVED):
            claim = stuck.claimed_at if stuck.claimed_at is not None else stuck.decided_at
            if claim is not None and claim < cutoff:
                self.repository.release_stale_claim(
                    stuck.escalation_id,
                    cutoff,
                    "interrupted before UpdateServiceJob was recorded",
                )
        done = []
        for failed in self.repository.with_status(EscalationStatus.APPLY_FAILED):
            if failed.apply_attempts >= MAX_APPLY_ATTEMPTS:
                self._give_up(failed)
                continue
            claimed = self.repository.transition(
                failed.escalation_id,
                EscalationStatus.APPLY_FAILED,
                {"status": EscalationStatus.APPROVED, "claimed_at": self.clock.now()},
            )
            if claimed is None:
                continue
            result = self._apply(claimed)
            self.update_message(result)
            done.append(result)
        return done


def _closed(escalation: Escalation) -> bool:
    """Final, or APPLY_FAILED with no attempts left (no run will retry it)."""
    if escalation.status in FINAL_STATUSES:
        return True
    return (
        escalation.status is EscalationStatus.APPLY_FAILED
        and escalation.apply_attempts >= MAX_APPLY_ATTEMPTS
    )


def _already(escalation: Escalation) -> str:
    by = f" by <@{escalation.decided_by}>" if escalation.decided_by not in (None, QUOTAGOV) else ""
    return f"This request is already {escalation.status.value}{by}; nothing was changed."


def _same_queue(a: str, b: str) -> bool:
    """Whether two job-queue references (name or ARN) name the same queue."""
    return a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1]
