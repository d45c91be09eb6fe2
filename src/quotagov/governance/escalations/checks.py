"""An escalation request, and the checks it must pass before anything is stored.

The checks run in this order; the first that fails refuses the request (rules in
``docs/design.md``, "Priority-escalation approvals in Slack"; the messages name the field):

1. ``reason`` is not empty (after stripping blanks).
2. ``jobId`` names a job quotagov submitted to Batch (a submission id or a Batch job
   id; :class:`~quotagov.governance.ports.GovernedJobs`) and the caller is a member of
   its team (:func:`quotagov.governance.access.team_member`). Authorization before
   existence: both faults get the same refusal, so a caller outside the team cannot
   tell another team's job from no job.
3. The job's team and quota share are in the policy.
4. (with 2) the caller's member entry, for the checks below.
5. ``level`` is a policy priority level.
6. Batch knows the job (``DescribeServiceJob``; a Batch outage is
   :class:`~.errors.EscalationUnavailableError`), it is not terminal
   (:func:`quotagov.batch_semantics.is_terminal`) and it is in the governed queue.
7. The level is higher than the job's current ``schedulingPriority`` and is one of the
   team's ``directLevels`` or ``approvalLevels``.
8. For an approval level, the requester's member entry has a ``slackUserId``:
   four-eyes could not tell the requester from an approver otherwise.

Every other refusal is an :class:`~.errors.EscalationPolicyRefusedError`. The checks
record nothing; the request use case audits the refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quotagov.batch_semantics import is_terminal, same_queue
from quotagov.governance.access import team_member
from quotagov.governance.escalations.context import EscalationDeps
from quotagov.governance.escalations.errors import (
    EscalationPolicyRefusedError,
    EscalationUnavailableError,
)
from quotagov.governance.ports import BatchError, BatchNotFoundError
from quotagov.governance.ports.escalations import GovernedJob
from quotagov.policy.models import Member, Policy, PriorityLevel, Team


@dataclass(frozen=True)
class EscalationRequest:
    """``POST /jobs/{jobId}/escalations``: ``{"level": ..., "reason": ...}`` by ``requester``.

    Attributes:
        job_id: quotagov's submission id or the Batch service job id.
        level: a policy priority level name.
        reason: why, as given (checked non-empty after stripping).
        requester: the caller's IAM principal ARN.
    """

    job_id: str
    level: str
    reason: str
    requester: str


@dataclass(frozen=True)
class CheckedRequest:
    """What the checks established about a request that passed them.

    Attributes:
        job: the governed job (``job.batch_job_id`` is set, == ``batch_job_id``).
        batch_job_id: its Batch service job id.
        team: the job's team in the policy.
        member: the requester's member entry in that team.
        level: the requested priority level.
        reason: the reason, stripped.
        current_priority: the job's ``schedulingPriority`` in Batch now (0-9999).
        direct: True when the level is one of the team's ``directLevels``.
    """

    job: GovernedJob
    batch_job_id: str
    team: Team
    member: Member
    level: PriorityLevel
    reason: str
    current_priority: int
    direct: bool


def check_request(deps: EscalationDeps, request: EscalationRequest) -> CheckedRequest:
    """Run the checks of the module docstring, in order.

    Raises:
        EscalationPolicyRefusedError: a rule refuses the request.
        EscalationUnavailableError: Batch could not be read.
    """
    reason = request.reason.strip()
    if not reason:
        raise EscalationPolicyRefusedError("reason: must not be empty")
    job, batch_job_id = _governed_job(deps, request)
    member = team_member(deps.policy, job.team, request.requester)
    if member is None:
        raise _not_a_governed_job(request)
    team = _team_and_share(deps.policy, job, request)
    try:
        level = deps.policy.level(request.level)
    except KeyError:
        raise EscalationPolicyRefusedError(
            f"level: unknown priority level {request.level!r}"
        ) from None
    description = _describe(deps, batch_job_id)
    _check_job_in_batch(deps.policy, job, description)
    current = int(description.get("schedulingPriority") or 0)
    direct = _check_level(job, team, level, current)
    if not direct and not member.slackUserId:
        raise EscalationPolicyRefusedError(
            f"teams.{job.team}.members: {request.requester} has no slackUserId, "
            "so approvers cannot be checked against the requester"
        )
    return CheckedRequest(job, batch_job_id, team, member, level, reason, current, direct)


def _governed_job(deps: EscalationDeps, request: EscalationRequest) -> tuple[GovernedJob, str]:
    """The governed job ``request.job_id`` names and its Batch job id (check 2)."""
    job = deps.jobs.find(request.job_id)
    if job is None or job.batch_job_id is None:
        raise _not_a_governed_job(request)
    return job, job.batch_job_id


def _not_a_governed_job(request: EscalationRequest) -> EscalationPolicyRefusedError:
    """The one refusal for an unknown job and for a job of a team the caller is not in."""
    return EscalationPolicyRefusedError(
        f"jobId: {request.job_id!r} is not a job submitted by quotagov that you may escalate"
    )


def _team_and_share(policy: Policy, job: GovernedJob, request: EscalationRequest) -> Team:
    """The job's team; its team and quota share must be in the policy (check 3)."""
    team = policy.teams.get(job.team)
    if team is None:
        raise EscalationPolicyRefusedError(
            f"team: {job.team!r} of job {request.job_id!r} is not in the policy"
        )
    if job.quota_share_name not in {s.quotaShareName for s in policy.quotaShares}:
        raise EscalationPolicyRefusedError(
            f"quotaShareName: share {job.quota_share_name!r} is not in the policy"
        )
    return team


def _describe(deps: EscalationDeps, batch_job_id: str) -> dict[str, Any]:
    """``DescribeServiceJob`` of the job (check 6)."""
    try:
        return deps.batch.describe_service_job(jobId=batch_job_id)
    except BatchNotFoundError:
        raise EscalationPolicyRefusedError(
            f"jobId: Batch does not know job {batch_job_id!r}"
        ) from None
    except BatchError as error:
        raise EscalationUnavailableError(f"Batch is unavailable, try again: {error}") from None


def _check_job_in_batch(policy: Policy, job: GovernedJob, description: Mapping[str, Any]) -> None:
    """The job will run again and is in the governed queue (check 6)."""
    status = str(description.get("status", ""))
    if is_terminal(status):
        raise EscalationPolicyRefusedError(
            f"jobId: job {job.job_name!r} is {status}; it will not run again"
        )
    if not same_queue(str(description.get("jobQueue", "")), policy.jobQueue):
        raise EscalationPolicyRefusedError(
            f"jobId: job {job.job_name!r} is not in the governed job queue"
        )


def _check_level(job: GovernedJob, team: Team, level: PriorityLevel, current: int) -> bool:
    """The level raises the priority and is open to the team (check 7); whether it is
    one of the team's ``directLevels``."""
    if level.schedulingPriority <= current:
        raise EscalationPolicyRefusedError(
            f"level: {level.name!r} (schedulingPriority {level.schedulingPriority}) is not "
            f"higher than the job's current schedulingPriority {current}"
        )
    direct = level.name in team.directLevels
    if not direct and level.name not in team.approvalLevels:
        raise EscalationPolicyRefusedError(
            f"level: team {job.team!r} may not request level {level.name!r}"
        )
    return direct
