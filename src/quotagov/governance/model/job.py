"""The job record: one item per submission in ``JobsTable``, shared by every use case.

A record is created when a submission arrives (``POST /jobs`` or a message on the
submission queue) and follows the submission through routing (``QUEUED``, ``REFUSED``),
``SubmitServiceJob`` (``SUBMITTED``, ``FAILED``) and, later, the job-state handler
(Batch status, attempts, preemptions) and dispositions (resubmission chain).

Attribute names are camelCase, as stored in DynamoDB (``docs/architecture.md``,
``JobsTable``: partition key ``pk`` = submission id, GSI ``byBatchJobId``). The model
accepts attributes it does not declare (``extra="allow"``), so helpers that add fields
(job-state, escalations) can read and write records written before their fields
existed, and older code keeps fields it does not know about when it saves a record.

The storage port :class:`JobsRepository` is implemented by
:class:`quotagov.adapters.dynamodb_jobs.DynamoDBJobsRepository`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class SubmissionState(StrEnum):
    """Where a submission stands in quotagov (not the Batch job status).

    * ``QUEUED``: accepted by the policy, waiting on the submission queue for
      ``SubmitServiceJob``.
    * ``SUBMITTED``: Batch accepted the service job (``batchJobId`` is set).
    * ``REFUSED``: the policy or the caller's rights refused it (``reasons``).
    * ``FAILED``: it can never be submitted (invalid after a policy change, Batch
      ``ClientException``, the message was malformed); ``reasons`` says why.
    """

    QUEUED = "QUEUED"
    SUBMITTED = "SUBMITTED"
    REFUSED = "REFUSED"
    FAILED = "FAILED"


#: States a submission never leaves through the submission path.
FINAL_SUBMISSION_STATES = frozenset(
    {SubmissionState.SUBMITTED, SubmissionState.REFUSED, SubmissionState.FAILED}
)

#: Length limit of ``SubmitServiceJob.clientToken`` (botocore ``batch`` model: 1-64).
MAX_CLIENT_TOKEN_LENGTH = 64


def client_token_for(submission_id: str, resubmit_count: int = 0) -> str:
    """The deterministic ``clientToken`` of a submission: ``qg-`` + 40 hex characters.

    The same submission (and resubmission number) always gets the same token, so a
    repeated ``SubmitServiceJob`` after a crash or a redelivered message is recognised
    by Batch as the same request (``SubmitServiceJob`` API reference, ``clientToken``:
    1-64 characters).
    """
    digest = hashlib.sha256(f"{submission_id}#{resubmit_count}".encode()).hexdigest()
    return f"qg-{digest[:40]}"


class JobRecord(BaseModel):
    """One submission and the service job it became (a ``JobsTable`` item).

    Attributes:
        pk: the submission id (partition key).
        state: the :class:`SubmissionState`.
        team, workloadClass, priorityLevel: as requested (names in the policy).
        jobName: the Batch ``jobName`` (1-128 letters, digits, ``-``, ``_``).
        principal: the submitter's IAM ARN or JWT subject, from the request context
            (never from the body) or the queue message's ``principal`` attribute.
        ownerSlackUserId: the submitter's Slack user id from the policy's team members.
        quotaShareName, schedulingPriority (0-9999), preemptionRetriesBeforeTermination:
            decided by the policy; ``preemptionRetriesBeforeTermination`` None = unlimited.
        checkpointIntervalSeconds: how often the job writes a checkpoint, declared by the
            researcher (seconds); required for classes with ``checkpointRequired``, used
            to estimate lost work on preemption.
        serviceRequestPayload: the SageMaker ``CreateTrainingJob`` request as a JSON
            string, exactly as sent to Batch (reused by resubmissions).
        instanceType, instanceCount: ``ResourceConfig.InstanceType``/``InstanceCount``
            of the payload (the capacity unit and quantity the job consumes).
        clientToken: the deterministic ``SubmitServiceJob`` token (see
            :func:`client_token_for`).
        reasons: why the submission was refused or failed (empty otherwise).
        batchJobId, batchJobArn: set once Batch accepted the service job.
        createdAt, updatedAt: epoch seconds.
        version: optimistic-locking counter, incremented by every repository write.
        source: ``api`` or ``sqs`` (how the submission arrived).
        requestedQuotaShareName: the share the submitter asked for (None = any of the
            class's shares); routing is re-checked with it before ``SubmitServiceJob``.
        clientRequestId: the submitter's idempotency key, when given.
        submittedAt: when Batch accepted the service job (epoch seconds).
        predecessorId: the submission this one resubmits (None for an original).
        originalId: the first submission of the chain (None for an original).
        successorIds: submissions that resubmit this one, oldest first.
        resubmitCount: how many times the chain was resubmitted before this one.
        retryStrategy, timeoutConfig: the ``SubmitServiceJob`` members the submitter set
            (Batch's shapes: ``{attempts, evaluateOnExit}``, ``{attemptDurationSeconds}``),
            sent with every submission of the chain; None when not set.
        tags: the submitter's own service-job tags (quotagov adds its own beside them).
        submissionProof: ``{"v", "sender", "mac"}``, the KMS MAC of the function that
            accepted the submission (:mod:`quotagov.governance.submission.proof`); the
            worker submits, and the reconciler re-queues, only records it verifies.
    """

    model_config = ConfigDict(extra="allow", validate_assignment=False)

    pk: str = Field(min_length=1)
    state: SubmissionState
    team: str = ""
    workloadClass: str = ""
    priorityLevel: str = ""
    jobName: str = ""
    principal: str = ""
    ownerSlackUserId: str | None = None
    quotaShareName: str | None = None
    schedulingPriority: int | None = None
    preemptionRetriesBeforeTermination: int | None = None
    checkpointIntervalSeconds: int | None = None
    serviceRequestPayload: str = ""
    instanceType: str = ""
    instanceCount: int = 0
    clientToken: str = ""
    reasons: list[str] = Field(default_factory=list)
    batchJobId: str | None = None
    batchJobArn: str | None = None
    createdAt: int = 0
    updatedAt: int = 0
    version: int = 0
    source: str = "api"
    requestedQuotaShareName: str | None = None
    clientRequestId: str | None = None
    submittedAt: int | None = None
    predecessorId: str | None = None
    originalId: str | None = None
    successorIds: list[str] = Field(default_factory=list)
    resubmitCount: int = 0
    retryStrategy: dict[str, Any] | None = None
    timeoutConfig: dict[str, Any] | None = None
    tags: dict[str, str] | None = None
    submissionProof: dict[str, Any] | None = None

    @property
    def submission_id(self) -> str:
        """The submission id (same as :attr:`pk`)."""
        return self.pk

    def to_item(self) -> dict[str, Any]:
        """The record as a plain dict of its attributes, None values left out."""
        return {k: v for k, v in self.model_dump(mode="json").items() if v is not None}

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> JobRecord:
        """Build a record from a stored item (plain Python values, numbers as int/float)."""
        return cls.model_validate(dict(item))
