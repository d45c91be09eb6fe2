"""Routing: the policy decides a submission's quota share, priority and preemption retries.

Pure rules, no I/O. Given the policy, a :class:`SubmissionRequest` and the caller's
principal, :func:`route` returns either a :class:`Routing` (``quotaShareName``,
``schedulingPriority``, ``preemptionRetriesBeforeTermination``) or every reason the
submission is refused. Each reason starts with the request field it is about.

Where the rules come from:

* membership, classes, levels: the policy (``docs/design.md``, "Submission and routing");
  a level in ``approvalLevels`` only is reached by an escalation, never at submission.
* checkpointing: a class with ``checkpointRequired`` needs ``CheckpointConfig.S3Uri`` and
  a declared ``checkpointIntervalSeconds``; a job that does not checkpoint may not run
  in a share with in-share preemption (Batch "Preemption" page: a higher-priority job of
  the same share can stop it, and it would lose all its work).
* share capacity: a share must be ``ENABLED`` (Batch rejects new jobs in a ``DISABLED``
  share) and able to hold the job at all: ``InstanceCount`` within the share's
  ``maxCapacity`` for the instance type plus what ``borrowLimit`` lets it borrow
  (``LEND_AND_BORROW`` only; -1 = no cap). Otherwise Batch would leave the job RUNNABLE
  with ``MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED`` (AWS Batch User Guide, "Jobs
  stuck in RUNNABLE due to misconfiguration",
  https://docs.aws.amazon.com/batch/latest/userguide/sm_job_stuck_in_runnable_misconfiguration.html).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from quotagov.batch_semantics import max_admissible_instances
from quotagov.governance.access import team_member
from quotagov.governance.errors import ForbiddenError
from quotagov.governance.submission.request import SubmissionRequest
from quotagov.policy.models import Policy, QuotaShare, Team, WorkloadClass
from quotagov.policy.roles import role_allowed


class NotATeamMemberError(ForbiddenError):
    """The caller may not submit for the team: unknown team, or not one of its members.

    A :class:`~quotagov.governance.errors.ForbiddenError` (the API answers it with the
    one error table, ``quotagov.handlers.api_errors``). The rule is
    :func:`quotagov.governance.access.team_member`.

    The message says which: ``team: no team 'x' in the governance policy (teams: a, b)``
    when the policy has no such team (team names are not secret: the policy lists them
    for every member), else ``team: <principal> is not a member of team 'x' ...``.

    Attributes:
        principal: the caller.
        team: the team named in the request.
        known_team: whether the policy has that team.
    """

    def __init__(
        self, principal: str, team: str, *, known_team: bool = True, teams: tuple[str, ...] = ()
    ) -> None:
        if known_team:
            message = (
                f"team: {principal or '(anonymous)'} is not a member of team {team!r} "
                "and may not submit for it"
            )
        else:
            listed = f" (teams: {', '.join(teams)})" if teams else ""
            message = f"team: no team {team!r} in the governance policy{listed}"
        super().__init__(message)
        self.principal = principal
        self.team = team
        self.known_team = known_team


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
        raise NotATeamMemberError(
            principal,
            team_name,
            known_team=team_name in policy.teams,
            teams=tuple(sorted(policy.teams)),
        )
    return policy.teams[team_name]


def max_instances(share: QuotaShare, instance_type: str) -> int | None:
    """Most instances of ``instance_type`` a job in ``share`` can ever get; None = no cap.

    ``maxCapacity`` plus, for ``LEND_AND_BORROW``, ``borrowLimit`` percent of it
    (-1 or unset = unlimited borrowing). 0 when the share has no limit for the type.
    """
    sharing = share.resourceSharingConfiguration
    borrow_limit = (
        -1 if sharing.borrowLimit is None or sharing.borrowLimit < 0 else sharing.borrowLimit
    )
    if sharing.strategy == "LEND_AND_BORROW" and borrow_limit == -1:
        return None if share.limit_for(instance_type) is not None else 0
    return max_admissible_instances(
        None, share.limit_for(instance_type), sharing.strategy, borrow_limit
    )


def share_faults(
    share: QuotaShare,
    request: SubmissionRequest,
    workload_class: WorkloadClass,
    environment: Mapping[str, int] | None = None,
) -> list[str]:
    """Why ``request`` cannot run in ``share`` (empty when it can).

    ``environment``: the service environment's instances per instance type
    (``DescribeServiceEnvironments``; None when unknown): a job needing more instances
    of its type than that can never be admitted
    (:func:`~quotagov.batch_semantics.max_admissible_instances`).
    """
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
    share_exceeded = False
    if cap == 0:
        faults.append(
            f"serviceRequestPayload.ResourceConfig.InstanceType: share {name!r} has no "
            f"capacity limit for {resources.InstanceType}"
        )
    elif cap is not None and resources.InstanceCount > cap:
        share_exceeded = True
        faults.append(
            f"serviceRequestPayload.ResourceConfig.InstanceCount: {resources.InstanceCount} "
            f"instances of {resources.InstanceType} exceed what share {name!r} can ever hold "
            f"({cap}: maxCapacity {share.limit_for(resources.InstanceType)}, strategy "
            f"{share.resourceSharingConfiguration.strategy})"
        )
    if environment is not None and cap != 0 and not share_exceeded:
        available = environment.get(resources.InstanceType, 0)
        if resources.InstanceCount > available:
            faults.append(
                f"serviceRequestPayload.ResourceConfig.InstanceCount: {resources.InstanceCount} "
                f"instances of {resources.InstanceType} exceed what the job queue's service "
                f"environment has ({available}, DescribeServiceEnvironments): Batch would "
                "hold the job RUNNABLE forever"
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
    faults += batch_settings_faults(request, name, workload_class)
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


#: Tag-key prefixes a submission may not set: ``quotagov:`` tags name the submission,
#: team, class and level on the service job (the job-state handler and ``history
#: export`` trust them), ``aws:`` is reserved by AWS (tagging best practices,
#: https://docs.aws.amazon.com/tag-editor/latest/userguide/best-practices-and-strats.html).
RESERVED_TAG_PREFIXES = ("quotagov:", "aws:")


def batch_settings_faults(
    request: SubmissionRequest, class_name: str, workload_class: WorkloadClass
) -> list[str]:
    """Faults of the Batch-level settings against the class's bounds and reserved tags.

    ``retryStrategy.attempts`` at most ``maxRetryAttempts``;
    ``timeoutConfig.attemptDurationSeconds`` at most ``maxAttemptDurationSeconds`` (when
    the class sets one); no tag key starting with a :data:`RESERVED_TAG_PREFIXES` entry
    (compared without case).
    """
    faults: list[str] = []
    retry = request.retryStrategy
    if retry is not None and retry.attempts > workload_class.maxRetryAttempts:
        faults.append(
            f"retryStrategy.attempts: {retry.attempts} exceeds class {class_name!r} maximum "
            f"of {workload_class.maxRetryAttempts}"
        )
    timeout, longest = request.timeoutConfig, workload_class.maxAttemptDurationSeconds
    if timeout is not None and longest is not None and timeout.attemptDurationSeconds > longest:
        faults.append(
            f"timeoutConfig.attemptDurationSeconds: {timeout.attemptDurationSeconds} s "
            f"exceeds class {class_name!r} maximum of {longest} s"
        )
    for key in request.tags or {}:
        if key.lower().startswith(RESERVED_TAG_PREFIXES):
            faults.append(
                f"tags.{key}: tag keys starting with "
                f"{' or '.join(RESERVED_TAG_PREFIXES)} are reserved"
            )
    return faults


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


def route(
    policy: Policy,
    request: SubmissionRequest,
    principal: str,
    environment: Mapping[str, int] | None = None,
) -> RoutingDecision:
    """Decide share, priority and preemption retries for ``request`` by ``principal``.

    ``environment``: the service environment's instances per instance type, when known
    (see :func:`share_faults`).

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
                reasons += share_faults(share, request, workload_class, environment)
    elif check_shares:
        candidates: list[str] = []
        for name in workload_class.shares:
            candidate = _known_share(policy, name, candidates)
            if candidate is None:
                continue
            faults = share_faults(candidate, request, workload_class, environment)
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
