"""Routing: the policy decides a submission's quota share, priority and preemption retries.

Pure rules, no I/O. Given the policy, a :class:`SubmissionRequest` and the caller's
principal, :func:`route` returns either a :class:`Routing` (``quotaShareName``,
``schedulingPriority``, ``preemptionRetriesBeforeTermination``) or every reason the
submission is refused. Each reason starts with the request field it is about.

Where the rules come from:

* membership, classes, levels: the policy (``design.md``, "Submission and routing");
  a level in ``approvalLevels`` only is reached by an escalation, never at submission.
* checkpointing: a class with ``checkpointRequired`` needs ``CheckpointConfig.S3Uri`` and
  a declared ``checkpointIntervalSeconds``; a job that does not checkpoint may not run
  in a share with in-share preemption (Batch "Preemption" page: a higher-priority job of
  the same share can stop it, and it would lose all its work).
* share capacity: a share must be ``ENABLED`` (Batch rejects new jobs in a ``DISABLED``
  share) and able to hold the job at all: ``InstanceCount`` within the share's
  ``maxCapacity`` for the instance type plus what ``borrowLimit`` lets it borrow
  (``LEND_AND_BORROW`` only; -1 = no cap). Otherwise Batch would leave the job RUNNABLE
  with ``MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED`` (reference facts 1.4, 1.7).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from quotagov.governance.access import team_member
from quotagov.governance.errors import ForbiddenError
from quotagov.governance.submission_request import SubmissionRequest
from quotagov.policy.models import Policy, QuotaShare, Team, WorkloadClass
from quotagov.policy.roles import role_allowed


class NotATeamMemberError(ForbiddenError):
    """The caller may not submit for the team: unknown team, or not one of its members.

    A :class:`~quotagov.governance.errors.ForbiddenError` (the API answers it with the
    one error table, ``quotagov.handlers.api_errors``). The rule is
    :func:`quotagov.governance.access.team_member`.

    Attributes:
        principal: the caller.
        team: the team named in the request.
    """

    def __init__(self, principal: str, team: str) -> None:
        super().__init__(
            f"team: {principal or '(anonymous)'} is not a member of team {team!r} "
            "and may not submit for it"
        )
        self.principal = principal
        self.team = team


@dataclass(frozen=True)
class Routing:
    """Where and how an accepted submission goes to Batch.

    Attributes:
        quotaShareName: the quota share.
        schedulingPriority: 0-9999, from the priority level.
        preemptionRetriesBeforeTermination: from the workload class; None = unlimited.
        ownerSlackUserId: the submitter's Slack user id, when the policy knows it.
    """

    quotaShareName: str
    schedulingPriority: int
    preemptionRetriesBeforeTermination: int | None
    ownerSlackUserId: str | None


@dataclass(frozen=True)
class RoutingDecision:
    """The outcome of :func:`route`: a routing, or the reasons for refusing."""

    routing: Routing | None
    reasons: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        """True when the submission may go to Batch."""
        return self.routing is not None and not self.reasons


def authorize(policy: Policy, team_name: str, principal: str) -> Team:
    """The team, when ``principal`` is one of its members (``access.team_member``).

    Raises:
        NotATeamMemberError: unknown team, an empty principal, or a principal not
            listed in the team's members.
    """
    if team_member(policy, team_name, principal) is None:
        raise NotATeamMemberError(principal, team_name)
    return policy.teams[team_name]


def max_instances(share: QuotaShare, instance_type: str) -> int | None:
    """Most instances of ``instance_type`` a job in ``share`` can ever get; None = no cap.

    ``maxCapacity`` plus, for ``LEND_AND_BORROW``, ``borrowLimit`` percent of it
    (-1 or unset = unlimited borrowing). 0 when the share has no limit for the type.
    """
    own = share.limit_for(instance_type)
    if own is None:
        return 0
    sharing = share.resourceSharingConfiguration
    if sharing.strategy != "LEND_AND_BORROW":
        return own
    if sharing.borrowLimit is None or sharing.borrowLimit < 0:
        return None
    return own + own * sharing.borrowLimit // 100


def share_faults(
    share: QuotaShare, request: SubmissionRequest, workload_class: WorkloadClass
) -> list[str]:
    """Why ``request`` cannot run in ``share`` (empty when it can)."""
    faults: list[str] = []
    name = share.quotaShareName
    resources = request.serviceRequestPayload.ResourceConfig
    if share.state != "ENABLED":
        faults.append(f"quotaShareName: share {name!r} is {share.state} and accepts no new jobs")
    if (
        share.preemptionConfiguration.inSharePreemption == "ENABLED"
        and not request.serviceRequestPayload.checkpoints
        and not workload_class.checkpointRequired
    ):
        # With a validated policy the class rule below catches this first; kept so a
        # share whose preemption was switched on later still protects such jobs.
        faults.append(
            f"quotaShareName: the job does not checkpoint but share {name!r} has in-share "
            "preemption ENABLED: a higher-priority job of the share could stop it and all "
            "its work would be lost"
        )
    cap = max_instances(share, resources.InstanceType)
    if cap == 0:
        faults.append(
            f"serviceRequestPayload.ResourceConfig.InstanceType: share {name!r} has no "
            f"capacity limit for {resources.InstanceType}"
        )
    elif cap is not None and resources.InstanceCount > cap:
        faults.append(
            f"serviceRequestPayload.ResourceConfig.InstanceCount: {resources.InstanceCount} "
            f"instances of {resources.InstanceType} exceed what share {name!r} can ever hold "
            f"({cap}: maxCapacity {share.limit_for(resources.InstanceType)}, strategy "
            f"{share.resourceSharingConfiguration.strategy})"
        )
    return faults


def _class_faults(
    request: SubmissionRequest, team_name: str, team: Team, policy: Policy
) -> tuple[WorkloadClass | None, list[str]]:
    name = request.workloadClass
    workload_class = policy.workloadClasses.get(name)
    if workload_class is None:
        return None, [f"workloadClass: unknown workload class {name!r}"]
    if name not in team.classes:
        return None, [
            f"workloadClass: team {team_name!r} may not use class {name!r} "
            f"(allowed: {', '.join(team.classes)})"
        ]
    faults: list[str] = []
    payload = request.serviceRequestPayload
    resources = payload.ResourceConfig
    if resources.InstanceType not in workload_class.instanceTypes:
        faults.append(
            f"serviceRequestPayload.ResourceConfig.InstanceType: class {name!r} may not use "
            f"{resources.InstanceType} (allowed: {', '.join(workload_class.instanceTypes)})"
        )
    if resources.InstanceCount > workload_class.maxInstanceCount:
        faults.append(
            f"serviceRequestPayload.ResourceConfig.InstanceCount: {resources.InstanceCount} "
            f"exceeds class {name!r} maximum of {workload_class.maxInstanceCount}"
        )
    faults += _role_faults(payload.RoleArn, name, workload_class, team_name, team)
    if workload_class.checkpointRequired:
        if not payload.checkpoints:
            faults.append(
                f"serviceRequestPayload.CheckpointConfig: class {name!r} requires "
                "checkpointing (its jobs can be preempted and must resume), but the request "
                "has no CheckpointConfig.S3Uri"
            )
        if request.checkpointIntervalSeconds is None:
            faults.append(
                f"checkpointIntervalSeconds: class {name!r} requires checkpointing; declare "
                "how often the job writes a checkpoint, in seconds"
            )
    return workload_class, faults


def _role_faults(
    role_arn: str, class_name: str, workload_class: WorkloadClass, team_name: str, team: Team
) -> list[str]:
    """``RoleArn`` must be bound to the team or the class (:mod:`quotagov.policy.roles`)."""
    bound = [*team.executionRoles, *workload_class.executionRoles]
    if role_allowed(role_arn, bound):
        return []
    allowed = ", ".join(bound) if bound else "none are bound"
    return [
        f"serviceRequestPayload.RoleArn: execution role {role_arn!r} is not bound to team "
        f"{team_name!r} or class {class_name!r} in the policy (allowed: {allowed})"
    ]


def _level_faults(
    request: SubmissionRequest, team_name: str, team: Team, policy: Policy
) -> list[str]:
    name = request.priorityLevel
    try:
        policy.level(name)
    except KeyError:
        return [f"priorityLevel: unknown priority level {name!r}"]
    if name in team.directLevels:
        return []
    if name in team.approvalLevels:
        return [
            f"priorityLevel: level {name!r} needs an approved escalation; submit at one of "
            f"{', '.join(team.directLevels)} and request {name!r} with "
            "POST /jobs/{jobId}/escalations"
        ]
    return [
        f"priorityLevel: team {team_name!r} may not use level {name!r} "
        f"(direct levels: {', '.join(team.directLevels)})"
    ]


def route(policy: Policy, request: SubmissionRequest, principal: str) -> RoutingDecision:
    """Decide share, priority and preemption retries for ``request`` by ``principal``.

    Returns:
        A :class:`RoutingDecision` holding the routing, or every refusal reason.

    Raises:
        NotATeamMemberError: the principal may not submit for the team (checked first).
    """
    team = authorize(policy, request.team, principal)
    workload_class, reasons = _class_faults(request, request.team, team, policy)
    # A job the class itself refuses is not also checked against each share (the
    # share faults would repeat the class faults).
    check_shares = not reasons
    reasons += _level_faults(request, request.team, team, policy)
    if workload_class is None:
        return RoutingDecision(None, reasons)

    share: QuotaShare | None = None
    if request.quotaShareName is not None:
        if request.quotaShareName not in workload_class.shares:
            reasons.append(
                f"quotaShareName: class {request.workloadClass!r} may not use share "
                f"{request.quotaShareName!r} (allowed: {', '.join(workload_class.shares)})"
            )
        else:
            share = _known_share(policy, request.quotaShareName, reasons)
            if share is not None and check_shares:
                reasons += share_faults(share, request, workload_class)
    elif check_shares:
        candidates: list[str] = []
        for name in workload_class.shares:
            candidate = _known_share(policy, name, candidates)
            if candidate is None:
                continue
            faults = share_faults(candidate, request, workload_class)
            if not faults:
                share = candidate
                break
            candidates += faults
        if share is None:
            reasons += candidates or ["quotaShareName: the class lists no share"]
    if reasons or share is None:
        return RoutingDecision(None, reasons)

    member = team_member(policy, request.team, principal)
    return RoutingDecision(
        Routing(
            quotaShareName=share.quotaShareName,
            schedulingPriority=policy.level(request.priorityLevel).schedulingPriority,
            preemptionRetriesBeforeTermination=workload_class.preemptionRetriesBeforeTermination,
            ownerSlackUserId=member.slackUserId if member else None,
        )
    )


def _known_share(policy: Policy, name: str, reasons: list[str]) -> QuotaShare | None:
    try:
        return policy.share(name)
    except KeyError:
        reasons.append(f"quotaShareName: share {name!r} is not in the policy")
        return None
