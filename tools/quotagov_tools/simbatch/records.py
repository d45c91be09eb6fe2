"""State records of the simulated Batch: job queues, quota shares, service jobs, attempts.

These are what the simulated Batch remembers about each resource, in the API's units
(epoch milliseconds for times, instances for capacities). The wire shapes built from
them live in :mod:`quotagov_tools.simbatch.responses`; the rules that change them
in :mod:`quotagov_tools.simbatch.models` and the operation modules it names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from quotagov.batch_semantics import HOLDING_STATUSES, is_terminal
from quotagov.scheduler import Engine, Options
from quotagov_tools.simbatch.payload import TrainingRequest


@dataclass(slots=True)
class Attempt:
    """One placement of a job on SageMaker: one training job with its own ARN.

    Attributes:
        training_job_arn: ``arn:aws:sagemaker:<region>:<account>:training-job/AWSBatch...``.
        scheduled_at: when the attempt was handed to SageMaker (SCHEDULED), epoch ms.
        started_at: when it became RUNNING, epoch ms (None if it never did).
        stopped_at: when it ended (preempted, completed, terminated), epoch ms.
        status_reason: why it ended.
    """

    training_job_arn: str
    scheduled_at: int
    started_at: int | None = None
    stopped_at: int | None = None
    status_reason: str | None = None


@dataclass(slots=True)
class QuotaShareRecord:
    """A quota share of a job queue, as ``CreateQuotaShare``/``UpdateQuotaShare`` left it.

    Attributes:
        name: ``quotaShareName``.
        arn: ``arn:aws:batch:<region>:<account>:job-queue/<queue>/quota-share/<name>``.
        queue_name: the job queue it belongs to.
        capacity_limits: ``[{capacityUnit, maxCapacity}]`` (API shape).
        resource_sharing: ``{strategy, borrowLimit?}`` (API shape).
        preemption: ``{inSharePreemption}`` (API shape).
        state: ``ENABLED`` or ``DISABLED``.
        tags: the share's tags.
        deleted: set by ``DeleteQuotaShare``; a deleted share is gone from the API.
    """

    name: str
    arn: str
    queue_name: str
    capacity_limits: list[dict[str, Any]]
    resource_sharing: dict[str, Any]
    preemption: dict[str, Any]
    state: str = "ENABLED"
    tags: dict[str, str] = field(default_factory=dict)
    deleted: bool = False

    def limit(self, instance_type: str) -> int | None:
        """``maxCapacity`` for ``instance_type``; None when the share has no limit for it."""
        for entry in self.capacity_limits:
            if entry["capacityUnit"] == instance_type:
                return int(entry["maxCapacity"])
        return None


@dataclass(slots=True)
class ServiceJob:
    """One service job of the simulated Batch.

    Attributes:
        job_id: UUID4 string; the engine knows the job under this id.
        job_name: ``jobName`` as submitted (not unique).
        job_arn: ``arn:aws:batch:<region>:<account>:service-job/<jobId>``.
        queue_name: the job queue's name.
        queue_arn: the job queue's ARN (``jobQueue`` in responses).
        request: the ``SubmitServiceJob`` request as received (without ``clientToken``).
        training: what was read from the payload and hints.
        seq: submission order across the whole simulated Batch (tie-break, newest first).
        created_at: when it was submitted, epoch ms.
        scheduling_priority: ``schedulingPriority`` (0-9999, higher first), as updated.
        quota_share_name: its quota share.
        status: the API status.
        status_reason: the API ``statusReason`` (None: none shown).
        misconfiguration: the ``MISCONFIGURATION:...`` statusReason while the job can
            never start with the current limits; None otherwise.
        scheduled_at: when it was last handed to SageMaker (SCHEDULED), epoch ms.
        started_at: when it first became RUNNING, epoch ms.
        stopped_at: when it finished, epoch ms.
        runnable_since: when the job last became RUNNABLE, epoch ms.
        attempts: every attempt, oldest first.
        preempted_attempts: every preempted attempt, most recent first.
        is_terminated: set by ``TerminateServiceJob`` (and ``DeleteQuotaShare``).
    """

    job_id: str
    job_name: str
    job_arn: str
    queue_name: str
    queue_arn: str
    request: dict[str, Any]
    training: TrainingRequest
    seq: int
    created_at: int
    scheduling_priority: int
    quota_share_name: str
    status: str = "SUBMITTED"
    status_reason: str | None = None
    misconfiguration: str | None = None
    scheduled_at: int | None = None
    started_at: int | None = None
    stopped_at: int | None = None
    runnable_since: int | None = None
    attempts: list[Attempt] = field(default_factory=list)
    preempted_attempts: list[Attempt] = field(default_factory=list)
    is_terminated: bool = False

    @property
    def preemption_retries(self) -> int | None:
        """``preemptionConfiguration.preemptionRetriesBeforeTermination`` (None: unlimited)."""
        retries: int | None = self.request.get("preemptionConfiguration", {}).get(
            "preemptionRetriesBeforeTermination"
        )
        return retries

    @property
    def holding(self) -> bool:
        """True while the job holds its instances (SCHEDULED, STARTING or RUNNING)."""
        return self.status in HOLDING_STATUSES

    @property
    def terminal(self) -> bool:
        """True once SUCCEEDED or FAILED."""
        return is_terminal(self.status)


@dataclass(slots=True)
class JobQueueState:
    """One quota-management job queue with its service environment and engine.

    Attributes:
        name: job queue name.
        arn: ``arn:aws:batch:<region>:<account>:job-queue/<name>``.
        capacity: the service environment's instances per instance type.
        options: the engine's options (startupSeconds, queueing).
        shares: quota shares by name, in creation order (deleted ones kept, flagged).
        engine: built at the first submission; None before.
    """

    name: str
    arn: str
    capacity: dict[str, int]
    options: Options
    shares: dict[str, QuotaShareRecord] = field(default_factory=dict)
    engine: Engine | None = None

    def live_shares(self) -> list[QuotaShareRecord]:
        """The quota shares not deleted, in creation order."""
        return [s for s in self.shares.values() if not s.deleted]
