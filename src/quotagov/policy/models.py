"""The governance policy: pydantic models of the YAML document the platform team keeps in git.

Field names of quota shares follow ``CreateQuotaShare`` (botocore ``batch`` model), so a
share block can be sent to Batch unchanged (see ``QuotaShare.to_create_request``); the
shapes inside a share (capacity limits, sharing, preemption) are
:mod:`quotagov.batch_shapes`, shared with the scenario format.
Limits come from the AWS Batch service quotas page: at most 20 quota shares per job
queue, 1 to 5 capacity limits per share, ``schedulingPriority`` 0-9999,
``borrowLimit`` >= -1 and only with ``LEND_AND_BORROW``.

Cross-reference rules (unknown shares, classes, levels, the checkpoint rule) live in
:mod:`quotagov.policy.validation`, which reports every fault with its path.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from quotagov.batch_shapes import CapacityLimit as CapacityLimit
from quotagov.batch_shapes import PreemptionConfiguration as PreemptionConfiguration
from quotagov.batch_shapes import ShareStrategy
from quotagov.batch_shapes import Switch as Switch

MAX_SHARES_PER_QUEUE = 20
MAX_CAPACITY_LIMITS_PER_SHARE = 5
MIN_SCHEDULING_PRIORITY = 0
MAX_SCHEDULING_PRIORITY = 9999

Strategy = ShareStrategy
DispositionAction = Literal["resubmit", "reclassify", "ask-owner"]

_NAME = r"^[A-Za-z0-9_-]{1,128}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ResourceSharingConfiguration(_Model):
    """``{strategy, borrowLimit}``; ``borrowLimit`` is a percentage of each limit, -1 = no cap
    (None: not sent to Batch)."""

    strategy: Strategy
    borrowLimit: int | None = Field(default=None, ge=-1)


class QuotaShare(_Model):
    """A quota share of the governed job queue, plus who approves escalations in it.

    Attributes:
        approvers: Slack user ids allowed to approve priority escalations in this share.
        approvalChannel: Slack channel id where escalation requests are posted
            (falls back to the deployment's ``APPROVAL_CHANNEL``).
    """

    quotaShareName: str = Field(pattern=_NAME)
    capacityLimits: list[CapacityLimit] = Field(min_length=1)
    resourceSharingConfiguration: ResourceSharingConfiguration
    preemptionConfiguration: PreemptionConfiguration
    state: Switch = "ENABLED"
    approvers: list[str] = Field(default_factory=list)
    approvalChannel: str | None = None

    def limit_for(self, instance_type: str) -> int | None:
        """The share's ``maxCapacity`` for ``instance_type``, or None if it has no limit for it."""
        for limit in self.capacityLimits:
            if limit.capacityUnit == instance_type:
                return limit.maxCapacity
        return None

    def to_create_request(self, job_queue: str) -> dict[str, Any]:
        """The ``CreateQuotaShare`` request for this share on ``job_queue``."""
        return {
            "quotaShareName": self.quotaShareName,
            "jobQueue": job_queue,
            **self.batch_configuration(),
        }

    def batch_configuration(self) -> dict[str, Any]:
        """The Batch-side configuration (capacity limits, sharing, preemption, state)."""
        sharing: dict[str, Any] = {"strategy": self.resourceSharingConfiguration.strategy}
        if self.resourceSharingConfiguration.borrowLimit is not None:
            sharing["borrowLimit"] = self.resourceSharingConfiguration.borrowLimit
        return {
            "capacityLimits": [limit.model_dump() for limit in self.capacityLimits],
            "resourceSharingConfiguration": sharing,
            "preemptionConfiguration": self.preemptionConfiguration.model_dump(),
            "state": self.state,
        }


class PriorityLevel(_Model):
    """A named level of urgency mapped to a Batch ``schedulingPriority`` (0-9999)."""

    name: str = Field(pattern=_NAME)
    schedulingPriority: int
    description: str = ""


class Disposition(_Model):
    """What happens when a job of a class exhausts its preemption retries.

    Attributes:
        action: ``resubmit`` (same share, same payload), ``reclassify`` (the next share
            in the class's ``shares`` list) or ``ask-owner`` (Slack buttons).
        maxResubmits: how many successors one original job may get (>= 0).
    """

    action: DispositionAction
    maxResubmits: int = Field(default=1, ge=0)


class ThrashGuard(_Model):
    """Reclassify a job preempted ``preemptions`` times within ``windowSeconds`` seconds."""

    preemptions: int = Field(ge=1)
    windowSeconds: int = Field(ge=1)


class WorkloadClass(_Model):
    """How well a kind of job tolerates interruption, and where it may run.

    Attributes:
        checkpointRequired: jobs must carry a ``CheckpointConfig`` in their payload.
        shares: quota shares the class may use, in order of preference.
        preemptionRetriesBeforeTermination: sent to Batch; None = unlimited.
        onRetriesExhausted: the disposition (used by the job-state handler).
        thrashGuard: optional early reclassification.
        instanceTypes: instance types the class may request.
        maxInstanceCount: largest ``ResourceConfig.InstanceCount`` allowed.
        executionRoles: SageMaker execution roles (IAM role ARNs, ``*`` as wildcard)
            the class's jobs may name in ``RoleArn``, besides their team's
            (:mod:`quotagov.policy.roles`).
        maxRetryAttempts: the largest ``retryStrategy.attempts`` a submission may ask
            Batch for (1-10, Batch's range; default 3). Each attempt is a new placement
            into ``RUNNABLE`` on the class's shares.
        maxAttemptDurationSeconds: the largest ``timeoutConfig.attemptDurationSeconds``
            a submission may set (seconds; None: any).
    """

    checkpointRequired: bool
    shares: list[str] = Field(min_length=1)
    preemptionRetriesBeforeTermination: int | None = Field(default=None, ge=0)
    onRetriesExhausted: Disposition = Disposition(action="ask-owner")
    thrashGuard: ThrashGuard | None = None
    instanceTypes: list[str] = Field(min_length=1)
    maxInstanceCount: int = Field(default=1, ge=1)
    executionRoles: list[str] = Field(default_factory=list)
    maxRetryAttempts: int = Field(default=3, ge=1, le=10)
    maxAttemptDurationSeconds: int | None = Field(default=None, ge=1)
    description: str = ""


class EscalationBudget(_Model):
    """At most ``count`` escalation requests per ``periodSeconds`` seconds for a team."""

    count: int = Field(ge=0)
    periodSeconds: int = Field(ge=1)


class Member(_Model):
    """A researcher: the IAM/JWT principal they call the API as, and their Slack user id."""

    principal: str = Field(min_length=1)
    slackUserId: str | None = None


class OwnerNotifications(_Model):
    """Direct messages to a job's owner (``docs/design.md``, "People and operators are told").

    Attributes:
        enabled: False opts the whole team out of owner messages (the events are still
            recorded in the job record and the audit log).
        digestWindowSeconds: a job preempted again within this many seconds of the
            first preemption its owner was told about gets that message updated into a
            digest ("preempted 3 times in 40 min") instead of a new message (>= 60).
    """

    enabled: bool = True
    digestWindowSeconds: int = Field(default=3600, ge=60)


class Team(_Model):
    """A team sharing the queue.

    Attributes:
        members: who may submit for the team.
        classes: workload classes the team may use.
        directLevels: priority levels the team may set itself (at submission, or by an
            escalation that needs no approval).
        approvalLevels: levels the team may request by escalation, approved in Slack.
        approvers: Slack user ids who may approve this team's escalations, in addition
            to the share's approvers.
        escalationBudget: how many escalations the team may request per period.
        notifications: the owner messages of the team's jobs (opt-out, digest window).
        executionRoles: SageMaker execution roles (IAM role ARNs, ``*`` as wildcard)
            the team's jobs may name in ``RoleArn`` (:mod:`quotagov.policy.roles`); a
            role bound to neither the team nor the job's class is refused.
    """

    members: list[Member] = Field(default_factory=list)
    classes: list[str] = Field(min_length=1)
    directLevels: list[str] = Field(min_length=1)
    approvalLevels: list[str] = Field(default_factory=list)
    approvers: list[str] = Field(default_factory=list)
    escalationBudget: EscalationBudget = EscalationBudget(count=3, periodSeconds=604800)
    notifications: OwnerNotifications = OwnerNotifications()
    executionRoles: list[str] = Field(default_factory=list)


class Policy(_Model):
    """The whole governance policy (``quotagov policy validate`` checks it).

    Attributes:
        jobQueue: the governed quota-management job queue (ARN or name).
        quotaShares: at most 20, names unique.
        priorityLevels: named levels, ``schedulingPriority`` within 0-9999.
        workloadClasses: by name.
        teams: by name.
        escalationExpirySeconds: how long a PENDING escalation waits for a decision.
    """

    version: Literal[1] = 1
    jobQueue: str = Field(min_length=1)
    quotaShares: list[QuotaShare] = Field(min_length=1)
    priorityLevels: list[PriorityLevel] = Field(min_length=1)
    workloadClasses: dict[str, WorkloadClass] = Field(min_length=1)
    teams: dict[str, Team] = Field(min_length=1)
    escalationExpirySeconds: int = Field(default=3600, ge=60)

    def share(self, name: str) -> QuotaShare:
        """The quota share called ``name``.

        Raises:
            KeyError: when the policy has no such share.
        """
        for share in self.quotaShares:
            if share.quotaShareName == name:
                return share
        raise KeyError(f"unknown quota share {name!r}")

    def level(self, name: str) -> PriorityLevel:
        """The priority level called ``name``.

        Raises:
            KeyError: when the policy has no such level.
        """
        for level in self.priorityLevels:
            if level.name == name:
                return level
        raise KeyError(f"unknown priority level {name!r}")

    def team_of(self, principal: str) -> list[str]:
        """Names of the teams ``principal`` is a member of (sorted)."""
        return sorted(
            name
            for name, team in self.teams.items()
            if any(m.principal == principal for m in team.members)
        )
