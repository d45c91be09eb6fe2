"""Routing: the policy decides a submission's quota share, priority and preemption retries.

Pure rules, no I/O. Given the policy and a :class:`RoutingInput` (what routing reads of
one submission, and who submits it), :func:`route` returns either a :class:`Routing`
(``quotaShareName``, ``schedulingPriority``, ``preemptionRetriesBeforeTermination``) or
every reason the submission is refused. Each reason starts with the request field it is
about (``serviceRequestPayload.ResourceConfig.InstanceCount``, ``priorityLevel``, ...).

A :class:`RoutingInput` has one constructor per source, so each caller routes the same
facts the same way:

* :meth:`RoutingInput.from_request`: a ``POST /jobs`` body (``receive_submission``);
* :meth:`RoutingInput.from_record`: a stored :class:`~quotagov.governance.model.job.JobRecord`,
  for the submit worker's re-check against the policy as it is now, and (``successor=True``)
  for the successor a disposition submits (its target share; its escalated level kept);
* :meth:`RoutingInput.from_workload_row`: a what-if workload job
  (``quotagov_tools.whatif``), which has no SageMaker request at all.

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

import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from quotagov.batch_semantics import max_admissible_instances
from quotagov.governance.access import team_member
from quotagov.governance.errors import ForbiddenError
from quotagov.governance.submission.request import MAX_CHECKPOINT_INTERVAL_SECONDS
from quotagov.policy.models import Policy, QuotaShare, Team, WorkloadClass
from quotagov.policy.roles import role_allowed

if TYPE_CHECKING:
    from quotagov.governance.model.job import JobRecord
    from quotagov.governance.submission.request import SubmissionRequest


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


@dataclass(frozen=True, slots=True)
class RoutingInput:
    """Everything :func:`route` reads of one submission, whatever it came from.

    Build it with one of the three constructors (:meth:`from_request`,
    :meth:`from_record`, :meth:`from_workload_row`), never field by field in a caller.

    Attributes:
        principal: who submits (IAM ARN or JWT ``sub``); must be a member of ``team``.
        team: the policy team submitted for.
        workloadClass: the policy workload class.
        priorityLevel: the policy priority level name.
        quotaShareName: the share asked for; None = the first share of the class that
            can hold the job.
        instanceType: ``ResourceConfig.InstanceType`` (one SageMaker instance type).
        instanceCount: ``ResourceConfig.InstanceCount`` (instances, >= 1).
        roleArn: ``serviceRequestPayload.RoleArn``, the execution role passed to SageMaker.
        checkpoints: True when the job writes checkpoints (``CheckpointConfig.S3Uri``).
        checkpointIntervalSeconds: the declared checkpoint interval, seconds; None = none
            declared.
        retryAttempts: ``retryStrategy.attempts`` (Batch attempts), None = not set.
        attemptDurationSeconds: ``timeoutConfig.attemptDurationSeconds``, None = not set.
        tagKeys: the submitter's own service-job tag keys.
        escalatedLevelAllowed: True when a level of the team's ``approvalLevels`` is
            allowed as well as its ``directLevels``: a successor keeps the level an
            approved escalation gave its predecessor. False for a new submission.
    """

    principal: str
    team: str
    workloadClass: str
    priorityLevel: str
    quotaShareName: str | None
    instanceType: str
    instanceCount: int
    roleArn: str
    checkpoints: bool
    checkpointIntervalSeconds: int | None
    retryAttempts: int | None = None
    attemptDurationSeconds: int | None = None
    tagKeys: tuple[str, ...] = ()
    escalatedLevelAllowed: bool = False

    @classmethod
    def from_request(cls, request: SubmissionRequest, principal: str) -> RoutingInput:
        """A ``POST /jobs`` submission (already schema-checked) by ``principal``."""
        payload = request.serviceRequestPayload
        resources = payload.ResourceConfig
        return cls(
            principal=principal,
            team=request.team,
            workloadClass=request.workloadClass,
            priorityLevel=request.priorityLevel,
            quotaShareName=request.quotaShareName,
            instanceType=resources.InstanceType,
            instanceCount=resources.InstanceCount,
            roleArn=payload.RoleArn,
            checkpoints=payload.checkpoints,
            checkpointIntervalSeconds=request.checkpointIntervalSeconds,
            retryAttempts=request.retryStrategy.attempts if request.retryStrategy else None,
            attemptDurationSeconds=(
                request.timeoutConfig.attemptDurationSeconds if request.timeoutConfig else None
            ),
            tagKeys=tuple(request.tags or ()),
        )

    @classmethod
    def from_record(cls, record: JobRecord, *, successor: bool = False) -> RoutingInput:
        """A stored job record, routed as its submitter asked (``requestedQuotaShareName``,
        a direct level), by the policy as it is now.

        The instance type and count, role and checkpoint configuration are read from the
        stored ``serviceRequestPayload`` (what ``SubmitServiceJob`` sends), the rest
        from the record's attributes.

        Args:
            record: the record (``QUEUED`` for the submit worker's re-check).
            successor: the record is the successor a ``resubmit``/``reclassify``
                disposition creates: routed to its ``quotaShareName`` (the
                disposition's target share, not the share first asked for), and a level
                of the team's ``approvalLevels`` is allowed (the predecessor may hold
                one from an approved escalation).

        Raises:
            ValueError: the stored payload is not a JSON object with a
                ``ResourceConfig`` holding a string ``InstanceType`` and an integer
                ``InstanceCount``; the message names the field.
        """
        payload = _stored_payload(record.serviceRequestPayload)
        resources = payload.get("ResourceConfig")
        if not isinstance(resources, dict):
            raise ValueError("serviceRequestPayload.ResourceConfig: missing or not an object")
        instance_type, count = resources.get("InstanceType"), resources.get("InstanceCount")
        if not isinstance(instance_type, str):
            raise ValueError("serviceRequestPayload.ResourceConfig.InstanceType: not a string")
        if not isinstance(count, int) or isinstance(count, bool):
            raise ValueError("serviceRequestPayload.ResourceConfig.InstanceCount: not an integer")
        role = payload.get("RoleArn")
        checkpoint = payload.get("CheckpointConfig")
        return cls(
            principal=record.principal,
            team=record.team,
            workloadClass=record.workloadClass,
            priorityLevel=record.priorityLevel,
            quotaShareName=record.quotaShareName if successor else record.requestedQuotaShareName,
            instanceType=instance_type,
            instanceCount=count,
            roleArn=role if isinstance(role, str) else "",
            checkpoints=isinstance(checkpoint, dict) and bool(checkpoint.get("S3Uri")),
            checkpointIntervalSeconds=record.checkpointIntervalSeconds,
            retryAttempts=_whole_member(record.retryStrategy, "retryStrategy", "attempts"),
            attemptDurationSeconds=_whole_member(
                record.timeoutConfig, "timeoutConfig", "attemptDurationSeconds"
            ),
            tagKeys=tuple(record.tags or ()),
            escalatedLevelAllowed=successor,
        )

    @classmethod
    def from_workload_row(
        cls,
        *,
        principal: str,
        team: str,
        workload_class: str,
        priority_level: str,
        quota_share_name: str | None,
        instance_type: str,
        instance_count: int,
        role_arn: str,
        checkpoint_interval_seconds: float | None,
    ) -> RoutingInput:
        """A what-if workload job (``quotagov_tools.whatif.workload.WorkloadJob``): no
        SageMaker request, only what routing reads.

        A job with a checkpoint interval writes checkpoints; the interval (seconds, may
        be fractional) is rounded to whole seconds within 1 s to
        :data:`~quotagov.governance.submission.request.MAX_CHECKPOINT_INTERVAL_SECONDS`,
        the bounds a submission may declare.
        ``principal`` and ``role_arn`` are whom the what-if submits as and the role it
        names (the team's first member, a role the policy binds).
        """
        interval = (
            max(1, min(MAX_CHECKPOINT_INTERVAL_SECONDS, round(checkpoint_interval_seconds)))
            if checkpoint_interval_seconds is not None
            else None
        )
        return cls(
            principal=principal,
            team=team,
            workloadClass=workload_class,
            priorityLevel=priority_level,
            quotaShareName=quota_share_name,
            instanceType=instance_type,
            instanceCount=instance_count,
            roleArn=role_arn,
            checkpoints=interval is not None,
            checkpointIntervalSeconds=interval,
        )


def _stored_payload(text: str) -> dict[str, Any]:
    """A stored ``serviceRequestPayload`` (JSON text) as a dict.

    Raises:
        ValueError: not JSON, or not a JSON object.
    """
    try:
        payload = json.loads(text) if text else None
    except ValueError as exc:
        raise ValueError(f"serviceRequestPayload: not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise ValueError("serviceRequestPayload: not a JSON object")
    return payload


def _whole_member(settings: Mapping[str, Any] | None, path: str, name: str) -> int | None:
    """``settings[name]`` when it is an integer (a stored ``retryStrategy`` or
    ``timeoutConfig``); None when unset.

    Raises:
        ValueError: set to something else than an integer.
    """
    if not settings or settings.get(name) is None:
        return None
    value = settings[name]
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{path}.{name}: {value!r} is not an integer")
    return value


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
    job: RoutingInput,
    workload_class: WorkloadClass,
    environment: Mapping[str, int] | None = None,
) -> list[str]:
    """Why ``job`` cannot run in ``share`` (empty when it can).

    ``environment``: the service environment's instances per instance type
    (``DescribeServiceEnvironments``; None when unknown): a job needing more instances
    of its type than that can never be admitted
    (:func:`~quotagov.batch_semantics.max_admissible_instances`).
    """
    faults: list[str] = []
    name = share.quotaShareName
    if share.state != "ENABLED":
        faults.append(f"quotaShareName: share {name!r} is {share.state} and accepts no new jobs")
    if (
        share.preemptionConfiguration.inSharePreemption == "ENABLED"
        and not job.checkpoints
        and not workload_class.checkpointRequired
    ):
        # With a validated policy the class rule below catches this first; kept so a
        # share whose preemption was switched on later still protects such jobs.
        faults.append(
            f"quotaShareName: the job does not checkpoint but share {name!r} has in-share "
            "preemption ENABLED: a higher-priority job of the share could stop it and all "
            "its work would be lost"
        )
    cap = max_instances(share, job.instanceType)
    share_exceeded = False
    if cap == 0:
        faults.append(
            f"serviceRequestPayload.ResourceConfig.InstanceType: share {name!r} has no "
            f"capacity limit for {job.instanceType}"
        )
    elif cap is not None and job.instanceCount > cap:
        share_exceeded = True
        faults.append(
            f"serviceRequestPayload.ResourceConfig.InstanceCount: {job.instanceCount} "
            f"instances of {job.instanceType} exceed what share {name!r} can ever hold "
            f"({cap}: maxCapacity {share.limit_for(job.instanceType)}, strategy "
            f"{share.resourceSharingConfiguration.strategy})"
        )
    if environment is not None and cap != 0 and not share_exceeded:
        available = environment.get(job.instanceType, 0)
        if job.instanceCount > available:
            faults.append(
                f"serviceRequestPayload.ResourceConfig.InstanceCount: {job.instanceCount} "
                f"instances of {job.instanceType} exceed what the job queue's service "
                f"environment has ({available}, DescribeServiceEnvironments): Batch would "
                "hold the job RUNNABLE forever"
            )
    return faults


def _class_faults(
    job: RoutingInput, team: Team, policy: Policy
) -> tuple[WorkloadClass | None, list[str]]:
    name, team_name = job.workloadClass, job.team
    workload_class = policy.workloadClasses.get(name)
    if workload_class is None:
        return None, [f"workloadClass: unknown workload class {name!r}"]
    if name not in team.classes:
        return None, [
            f"workloadClass: team {team_name!r} may not use class {name!r} "
            f"(allowed: {', '.join(team.classes)})"
        ]
    faults: list[str] = []
    if job.instanceType not in workload_class.instanceTypes:
        faults.append(
            f"serviceRequestPayload.ResourceConfig.InstanceType: class {name!r} may not use "
            f"{job.instanceType} (allowed: {', '.join(workload_class.instanceTypes)})"
        )
    if job.instanceCount > workload_class.maxInstanceCount:
        faults.append(
            f"serviceRequestPayload.ResourceConfig.InstanceCount: {job.instanceCount} "
            f"exceeds class {name!r} maximum of {workload_class.maxInstanceCount}"
        )
    faults += _role_faults(job.roleArn, name, workload_class, team_name, team)
    faults += batch_settings_faults(job, name, workload_class)
    if workload_class.checkpointRequired:
        if not job.checkpoints:
            faults.append(
                f"serviceRequestPayload.CheckpointConfig: class {name!r} requires "
                "checkpointing (its jobs can be preempted and must resume), but the request "
                "has no CheckpointConfig.S3Uri"
            )
        if job.checkpointIntervalSeconds is None:
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
    job: RoutingInput, class_name: str, workload_class: WorkloadClass
) -> list[str]:
    """Faults of the Batch-level settings against the class's bounds and reserved tags.

    ``retryStrategy.attempts`` at most ``maxRetryAttempts``;
    ``timeoutConfig.attemptDurationSeconds`` at most ``maxAttemptDurationSeconds`` (when
    the class sets one); no tag key starting with a :data:`RESERVED_TAG_PREFIXES` entry
    (compared without case).
    """
    faults: list[str] = []
    attempts = job.retryAttempts
    if attempts is not None and attempts > workload_class.maxRetryAttempts:
        faults.append(
            f"retryStrategy.attempts: {attempts} exceeds class {class_name!r} maximum "
            f"of {workload_class.maxRetryAttempts}"
        )
    duration, longest = job.attemptDurationSeconds, workload_class.maxAttemptDurationSeconds
    if duration is not None and longest is not None and duration > longest:
        faults.append(
            f"timeoutConfig.attemptDurationSeconds: {duration} s "
            f"exceeds class {class_name!r} maximum of {longest} s"
        )
    for key in job.tagKeys:
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


def _level_faults(job: RoutingInput, team: Team, policy: Policy) -> list[str]:
    name, team_name = job.priorityLevel, job.team
    try:
        policy.level(name)
    except KeyError:
        return [f"priorityLevel: unknown priority level {name!r}"]
    if name in team.directLevels:
        return []
    if name in team.approvalLevels and job.escalatedLevelAllowed:
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


#: The last policy fingerprinted and its fingerprint (a policy object is reused
#: while its cache lasts, so the JSON is hashed once per loaded policy).
_fingerprinted: tuple[Policy, str] | None = None
_fingerprint_lock = threading.Lock()


def policy_fingerprint(policy: Policy) -> str:
    """What a routing was decided under: 16 hex characters of the SHA-256 of the
    policy's JSON (keys sorted).

    Two policies with the same fingerprint route every input alike (:func:`route` reads
    nothing but the policy, the input and the environment's capacity), so a submission
    accepted under a fingerprint equal to the current policy's need not be routed again
    (:func:`quotagov.governance.submission.to_batch.submit_to_batch`).
    """
    global _fingerprinted
    with _fingerprint_lock:
        if _fingerprinted is not None and _fingerprinted[0] is policy:
            return _fingerprinted[1]
    text = json.dumps(policy.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    with _fingerprint_lock:
        _fingerprinted = (policy, digest)
    return digest


def route(
    policy: Policy,
    job: RoutingInput,
    environment: Mapping[str, int] | None = None,
) -> RoutingDecision:
    """Decide share, priority and preemption retries for ``job`` (submitted by
    ``job.principal``).

    The one routing rule: ``POST /jobs``, the submit worker's re-check, a disposition's
    successor and the what-if call it, each with its :class:`RoutingInput` constructor.
    ``environment``: the service environment's instances per instance type, when known
    (see :func:`share_faults`).

    Returns:
        A :class:`RoutingDecision` holding the routing, or every refusal reason.

    Raises:
        NotATeamMemberError: the principal may not submit for the team (checked first).
    """
    team = authorize(policy, job.team, job.principal)
    workload_class, reasons = _class_faults(job, team, policy)
    # A job the class itself refuses is not also checked against each share (the
    # share faults would repeat the class faults).
    check_shares = not reasons
    reasons += _level_faults(job, team, policy)
    if workload_class is None:
        return RoutingDecision(None, reasons)

    share: QuotaShare | None = None
    if job.quotaShareName is not None:
        if job.quotaShareName not in workload_class.shares:
            reasons.append(
                f"quotaShareName: class {job.workloadClass!r} may not use share "
                f"{job.quotaShareName!r} (allowed: {', '.join(workload_class.shares)})"
            )
        else:
            share = _known_share(policy, job.quotaShareName, reasons)
            if share is not None and check_shares:
                reasons += share_faults(share, job, workload_class, environment)
    elif check_shares:
        candidates: list[str] = []
        for name in workload_class.shares:
            candidate = _known_share(policy, name, candidates)
            if candidate is None:
                continue
            faults = share_faults(candidate, job, workload_class, environment)
            if not faults:
                share = candidate
                break
            candidates += faults
        if share is None:
            reasons += candidates or ["quotaShareName: the class lists no share"]
    if reasons or share is None:
        return RoutingDecision(None, reasons)

    member = team_member(policy, job.team, job.principal)
    return RoutingDecision(
        Routing(
            quotaShareName=share.quotaShareName,
            schedulingPriority=policy.level(job.priorityLevel).schedulingPriority,
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
