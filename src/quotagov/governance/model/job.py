"""The job record: one item per submission in ``JobsTable``, shared by every use case.

A record is created when a submission arrives (``POST /jobs`` or a message on the
submission queue) and follows the submission through routing (``QUEUED``, ``REFUSED``),
``SubmitServiceJob`` (``SUBMITTED``, ``FAILED``) and, later, the job-state handler
(Batch status, attempts, preemptions) and dispositions (resubmission chain).

Attribute names are camelCase, as stored in DynamoDB (``docs/architecture.md``,
``JobsTable``: partition key ``pk`` = submission id, GSI ``byBatchJobId``).
:class:`JobRecord` declares every attribute quotagov writes on a job item, grouped in
sub-models where a use case writes them together: :class:`BatchState` (the
job-state handler's ``jobState`` map), :class:`Disposition` (the ``disposition``
map) and :class:`Failure` (what a ``FAILED`` record failed of, :class:`FailureKind`).

Old items: a ``FAILED`` item written before ``failureKind`` existed carries the
boolean ``enqueueFailed`` or ``staleFailed`` (or neither); :meth:`JobRecord.from_item`
reads those as the matching :class:`FailureKind`, and every write of a failure
removes them (:func:`failure_changes`).

Unknown attributes (written by a newer version of quotagov during a rolling deploy)
are ignored when an item is read, never lost: every write of an existing item is a
partial ``UpdateItem`` that leaves attributes it does not name as they are. The
``disposition`` map is the exception (it is written whole), so :class:`Disposition`
keeps keys it does not know.

The storage port :class:`~quotagov.governance.ports.jobs.JobsRepository` is
implemented by :class:`quotagov.adapters.dynamodb_jobs.DynamoDBJobsRepository`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: A number as read back from DynamoDB: int when integral, else float
#: (:func:`quotagov.adapters.dynamodb_values.from_dynamo`), so a record writes back
#: exactly the value it read.
Number = int | float


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


class FailureKind(StrEnum):
    """Which of the three ways a submission ends ``FAILED`` (stored as ``failureKind``).

    * ``not-submittable``: the submit worker failed it: Batch answered
      ``SubmitServiceJob`` with a ``ClientException``, the policy as it is now refuses
      it, or the stored request is no longer usable. Final; the owner is told.
    * ``enqueue-refused``: ``POST /jobs`` stored it but the submission queue refused
      its message (the API answered 503); the same request sent again moves it back to
      ``QUEUED``. The owner is not told (the caller got the 503).
    * ``stuck-queued``: the reconciler gave up on it after it stayed ``QUEUED`` through
      every re-queue. Should a message still in flight reach Batch, the record becomes
      ``SUBMITTED`` (it must name the service job).
    """

    NOT_SUBMITTABLE = "not-submittable"
    ENQUEUE_REFUSED = "enqueue-refused"
    STUCK_QUEUED = "stuck-queued"


#: Attributes of items written before ``failureKind``: boolean markers of two kinds.
LEGACY_FAILURE_FLAGS: Mapping[str, FailureKind] = {
    "enqueueFailed": FailureKind.ENQUEUE_REFUSED,
    "staleFailed": FailureKind.STUCK_QUEUED,
}


def failure_changes(kind: FailureKind | None) -> dict[str, Any]:
    """The attribute changes that record ``kind`` (None: no failure) on a job item:
    ``failureKind`` set (or removed) and the old-shape markers removed, so an item
    never holds two answers.

    For :meth:`~quotagov.governance.ports.jobs.JobsRepository.update_if`: a None
    value removes the attribute.
    """
    changes: dict[str, Any] = {"failureKind": kind}
    changes.update(dict.fromkeys(LEGACY_FAILURE_FLAGS))
    return changes


class Failure(BaseModel):
    """Why a ``FAILED`` record failed: its :class:`FailureKind` and ``reasons``."""

    model_config = ConfigDict(frozen=True)

    kind: FailureKind
    reasons: tuple[str, ...] = ()


class PreemptionItem(BaseModel):
    """One preemption in :attr:`BatchState.preemptions` (written by
    :class:`quotagov.governance.job_state.summary.PreemptionRecord`).

    Attributes:
        trainingJobArn: the preempted attempt's SageMaker training job.
        startedAt, stoppedAt: the attempt's run, epoch milliseconds.
        runSeconds, lostWorkSeconds, lostInstanceSeconds: seconds (instance-seconds).
        kind: ``in-share``, ``cross-share`` or ``unattributed``.
    """

    model_config = ConfigDict(extra="ignore")

    trainingJobArn: str | None = None
    startedAt: int | None = None
    stoppedAt: int | None = None
    runSeconds: Number | None = None
    lostWorkSeconds: Number | None = None
    lostInstanceSeconds: Number | None = None
    kind: str = "unattributed"


class BatchState(BaseModel):
    """The Batch side of a job as the job-state handler last folded it: the stored
    ``jobState`` map (written whole by
    :meth:`quotagov.governance.job_state.summary.JobStateSummary.to_item`).

    Attributes:
        status, statusReason: the service job's status (``SUBMITTED`` ...
            ``SUCCEEDED``/``FAILED``) and Batch's reason.
        attemptCount, preemptionCount, unattributedPreemptions: counts (>= 0).
        preemptions: the known preempted attempts, oldest first.
        waitingSeconds, runningSeconds, lostInstanceSeconds,
            submissionToFirstStartSeconds: seconds (instance-seconds).
        firstStartedAt, asOf: epoch milliseconds (first start; the last event the
            figures hold for).
    """

    model_config = ConfigDict(extra="ignore")

    status: str
    statusReason: str | None = None
    attemptCount: int = 0
    preemptionCount: int = 0
    preemptions: list[PreemptionItem] = Field(default_factory=list)
    unattributedPreemptions: int = 0
    waitingSeconds: Number | None = None
    runningSeconds: Number = 0
    lostInstanceSeconds: Number = 0
    firstStartedAt: int | None = None
    submissionToFirstStartSeconds: Number | None = None
    asOf: int = 0


class PostedMessageItem(BaseModel):
    """A Slack message quotagov posted: ``channel`` id and ``ts``."""

    channel: str
    ts: str


class Disposition(BaseModel):
    """The stored ``disposition`` map: what happens to a job whose retries ran out or
    that thrashes (the use case's view with its moves:
    :class:`quotagov.governance.dispositions.record.DispositionRecord`).

    Keys are those ``DispositionRecord.to_item`` writes; times are epoch seconds;
    ``status``/``trigger``/``choice``/``choices`` hold the values of that module's
    enums. The map is written whole, so keys this version does not know are kept.
    """

    model_config = ConfigDict(extra="allow")

    status: str
    trigger: str
    policyAction: str | None = None
    owner: str | None = None
    openedAt: Number | None = None
    preemptionCount: int | None = None
    preemptionRetriesBeforeTermination: int | None = None
    reason: str | None = None
    choices: list[str] | None = None
    choice: str | None = None
    decidedBy: str | None = None
    decidedAt: Number | None = None
    decisionSource: str | None = None
    successorId: str | None = None
    targetShare: str | None = None
    leaseUntil: Number | None = None
    message: PostedMessageItem | None = None
    terminateRequestedAt: Number | None = None
    terminatedAt: Number | None = None
    closedAt: Number | None = None
    successorBatchJobId: str | None = None
    lastError: str | None = None

    def to_item(self) -> dict[str, Any]:
        """The stored map (unset keys left out, unknown keys kept)."""
        return self.model_dump(mode="json", exclude_none=True)


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
        routedUnder: the :func:`~quotagov.governance.routing.policy_fingerprint` of the
            policy ``POST /jobs`` routed it under (covered by the proof); the worker
            routes again only when the policy it holds has another fingerprint (None:
            always routed again, as a successor or a record from older code is).
        failureKind: the :class:`FailureKind` of a ``FAILED`` record (None otherwise);
            read with :attr:`failure`.
        messageId, claimedPrincipal: a queue message stored ``REFUSED`` because it
            was no reference to a stored submission: its SQS ``messageId`` and the
            ``principal`` its attributes claimed (believed by nobody).
        requeueCount, requeuedAt: how often the reconciler (or ``quotagov redrive``)
            sent a stuck ``QUEUED`` submission again, and when last (epoch seconds).
        jobState: the Batch side, :class:`BatchState` (job-state handler).
        jobStateFacts: every fact the job-state handler folded in (the map
            :class:`quotagov.governance.job_state.fold.JobTracking` writes and reads;
            its shape belongs to that module).
        jobStateVersion: optimistic-locking counter of ``jobState``/``jobStateFacts``
            (None: never written).
        disposition: the :class:`Disposition` of a job whose retries ran out or that
            thrashes (None: none opened).
        dispositionToken: the write token of the last ``disposition`` write (a random
            hex string, new for every write): how a write whose answer was lost is told
            from another writer's.
    """

    model_config = ConfigDict(extra="ignore", validate_assignment=False)

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
    routedUnder: str | None = None
    failureKind: FailureKind | None = None
    messageId: str | None = None
    claimedPrincipal: str | None = None
    requeueCount: int | None = None
    requeuedAt: int | None = None
    jobState: BatchState | None = None
    jobStateFacts: dict[str, Any] | None = None
    jobStateVersion: int | None = None
    disposition: Disposition | None = None
    dispositionToken: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _read_old_failure_shape(cls, data: Any) -> Any:
        """An item written before ``failureKind``: its ``enqueueFailed``/``staleFailed``
        marker (or, on a ``FAILED`` item, neither) gives the kind."""
        if not isinstance(data, Mapping) or data.get("failureKind") is not None:
            return data
        if str(data.get("state", "")) != SubmissionState.FAILED:
            return data
        kind = next(
            (k for flag, k in LEGACY_FAILURE_FLAGS.items() if data.get(flag) is True),
            FailureKind.NOT_SUBMITTABLE,
        )
        return {**data, "failureKind": kind}

    @property
    def failure(self) -> Failure | None:
        """Why the record is ``FAILED`` (None in any other state)."""
        if self.state is not SubmissionState.FAILED:
            return None
        return Failure(
            kind=self.failureKind or FailureKind.NOT_SUBMITTABLE, reasons=tuple(self.reasons)
        )

    @property
    def requeues(self) -> int:
        """How often the reconciler queued this submission again (0 when never)."""
        return self.requeueCount or 0

    @property
    def job_state_version(self) -> int:
        """``jobStateVersion``, 0 when the job state was never written."""
        return self.jobStateVersion or 0

    @property
    def submission_id(self) -> str:
        """The submission id (same as :attr:`pk`)."""
        return self.pk

    def to_item(self) -> dict[str, Any]:
        """The record as a plain dict of its attributes, None values left out (also
        inside sub-models); :meth:`from_item` reads it back equal."""
        return self.model_dump(mode="json", exclude_none=True)

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> JobRecord:
        """Build a record from a stored item (plain Python values, numbers as int/float).

        Accepts the old item shape (``enqueueFailed``/``staleFailed`` instead of
        ``failureKind``); attributes the record does not declare are ignored.

        Raises:
            pydantic.ValidationError: an attribute has the wrong type or a required
                one (``pk``, ``state``) is missing; the error names it.
        """
        return cls.model_validate(dict(item))
