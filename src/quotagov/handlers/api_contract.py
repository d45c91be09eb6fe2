"""The REST API's answers as models: what every route documents in ``docs/openapi.json``.

Each route passes ``responses=responses(...)`` to its Powertools route decorator, so the
OpenAPI document generated from the resolvers (:mod:`quotagov.handlers.openapi`) lists
the status codes the route really answers, with their bodies and examples. Error
bodies are all :class:`ErrorAnswer` (:mod:`quotagov.handlers.api_errors` writes them).

The success models are closed (``additionalProperties: false``): the routes that answer
a view (``GET /jobs``, ``GET /jobs/{jobId}``, the escalation answers) validate it with
its model before sending, so an undocumented member fails there and never reaches a
caller. Instants are ISO 8601 UTC (:data:`Instant`, :mod:`quotagov.api_times`);
durations are seconds in members named ``...Seconds``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from quotagov.governance.submission.request import RetryStrategy, TimeoutConfig


class Fault(BaseModel):
    """One input fault: the field path and what is wrong with it."""

    path: str = Field(
        description="field path from the body root (`serviceRequestPayload.ResourceConfig."
        "InstanceCount`), `(body)` for the body as a whole, `headers.Content-Type`, `path.jobId`"
    )
    fault: str = Field(description="what is wrong, in words")


class ErrorAnswer(BaseModel):
    """Every error answer: a message, for input faults (400, 415) each fault by path,
    and the facts the caller needs to act (e.g. ``submissionId``)."""

    model_config = ConfigDict(extra="allow")

    message: str
    faults: list[Fault] | None = Field(default=None, description="400 and 415 only")


class IdempotencyMismatch(ErrorAnswer):
    """409 for a ``clientRequestId`` reused with a different request."""

    clientRequestId: str
    field: str = Field(description="the first member that differs, as a body path")
    submissionId: str = Field(description="the submission the key belongs to")


class SubmissionAccepted(BaseModel):
    """202: the submission is stored and queued for the submit worker (or already sent)."""

    model_config = ConfigDict(extra="forbid")

    submissionId: str
    state: Literal["QUEUED", "SUBMITTED"]
    quotaShareName: str | None
    schedulingPriority: int | None = Field(description="0-9999")
    preemptionRetriesBeforeTermination: int | None = Field(description="null: unlimited")
    batchJobId: str | None = Field(description="set once the worker submitted it")


class SubmissionRefused(BaseModel):
    """422: the policy refused the submission (stored ``REFUSED``), or a retry of one that
    failed for good (``FAILED``)."""

    model_config = ConfigDict(extra="forbid")

    submissionId: str
    state: Literal["REFUSED", "FAILED"]
    reasons: list[str] = Field(description="every reason, each starting with the field")


#: An instant as the API answers it (:mod:`quotagov.api_times`): ISO 8601 UTC with ``Z``.
Instant = Annotated[
    str,
    Field(
        pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$",
        json_schema_extra={"format": "date-time"},
        examples=["2026-12-03T15:20:52Z"],
    ),
]

_CLOSED = ConfigDict(extra="forbid")


class LinkDisposition(BaseModel):
    """The disposition of one chain link, in short."""

    model_config = _CLOSED

    status: str
    trigger: str | None = None
    choice: str | None = None
    decidedBy: str | None = None
    targetShare: str | None = None


class ChainLink(BaseModel):
    """One submission of a resubmission chain (``chain.links``, original first)."""

    model_config = _CLOSED

    submissionId: str
    state: str
    quotaShareName: str | None = None
    batchJobId: str | None = None
    status: str | None = Field(default=None, description="Batch status from the job state")
    preemptionCount: int = 0
    resubmitCount: int = 0
    disposition: LinkDisposition | None = None


class Chain(BaseModel):
    """The resubmission chain a submission belongs to."""

    model_config = _CLOSED

    predecessorId: str | None = Field(description="the submission this one resubmits")
    originalId: str | None = Field(description="the first submission of the chain")
    successorIds: list[str] = Field(description="submissions that resubmit this one, oldest first")
    resubmitCount: int = Field(description="resubmissions of the chain before this one")
    links: list[ChainLink] | None = Field(
        default=None, description="every submission of the chain, original first"
    )


class FrontOfShare(BaseModel):
    """The first RUNNABLE job of the job's quota share (``GetJobQueueSnapshot``)."""

    model_config = _CLOSED

    atFront: bool
    jobArn: str | None
    earliestTimeAtPosition: Instant | None = Field(
        description="since when that job is first of its share"
    )


class WaitPosition(BaseModel):
    """Place among the first 100 RUNNABLE jobs (null when not among them)."""

    model_config = _CLOSED

    queue: int | None
    share: int | None
    queueLength: int | None


class Borrower(BaseModel):
    """A job running on capacity the waiting job's share lent out."""

    model_config = _CLOSED

    jobId: str
    jobName: str
    quotaShareName: str
    instanceType: str
    instances: int


class WaitReason(BaseModel):
    """Why it waits: a stable ``code`` and the same in words (``CAPACITY_LENT_OUT``
    also names the borrowers)."""

    model_config = _CLOSED

    code: str = Field(
        description="LARGER_THAN_ENVIRONMENT, NO_CAPACITY_LIMIT, LOWER_PRIORITY, DISPATCHING, "
        "CAPACITY_LENT_OUT, SHARE_AT_LIMIT, BORROW_LIMIT_REACHED or BORROW_BLOCKED_BY_RESERVE"
    )
    text: str
    borrowers: list[Borrower] | None = None
    moreBorrowers: int | None = None


class WaitEstimate(BaseModel):
    """How the estimated start was computed."""

    model_config = _CLOSED

    basis: str
    computedAt: Instant
    computeSeconds: float = Field(description="seconds the estimate took")


class Waiting(BaseModel):
    """Why a RUNNABLE job waits (``quotagov.governance.jobs.waiting``), or why that could
    not be told (``error`` alone)."""

    model_config = _CLOSED

    position: WaitPosition | None = None
    reason: WaitReason | None = None
    estimatedStartAt: Instant | None = Field(
        default=None,
        description="the latest start if the jobs ahead run to their limit; null when one "
        "has no limit",
    )
    estimate: WaitEstimate | None = None
    error: str | None = None


class BatchView(BaseModel):
    """Batch's view of the service job (``DescribeServiceJob``), or ``error`` alone when
    Batch could not be asked."""

    model_config = _CLOSED

    status: str | None = Field(default=None, description="SUBMITTED ... SUCCEEDED, FAILED")
    statusReason: str | None = None
    schedulingPriority: int | None = Field(default=None, description="0-9999")
    quotaShareName: str | None = None
    frontOfShare: FrontOfShare | None = None
    waiting: Waiting | None = Field(default=None, description="RUNNABLE jobs only")
    error: str | None = None


class Preemption(BaseModel):
    """One preempted attempt and the work it lost."""

    model_config = _CLOSED

    trainingJobArn: str | None = None
    startedAt: Instant | None = None
    stoppedAt: Instant | None = None
    runSeconds: float | None = Field(default=None, description="RUNNING start to stop")
    lostWorkSeconds: float | None = Field(default=None, description="run since the last checkpoint")
    lostInstanceSeconds: float | None = Field(
        default=None, description="lostWorkSeconds times the instance count"
    )
    kind: str = Field(description="in-share, cross-share or unattributed")


class JobState(BaseModel):
    """What Batch's state-change events told about the service job (the job-state
    handler, :class:`quotagov.governance.job_state.JobStateSummary`)."""

    model_config = _CLOSED

    status: str
    statusReason: str | None = None
    attemptCount: int
    preemptionCount: int
    preemptions: list[Preemption]
    unattributedPreemptions: int = Field(
        description="preemptions Batch counted whose attempt is no longer listed"
    )
    waitingSeconds: float | None = None
    runningSeconds: float
    lostInstanceSeconds: float
    firstStartedAt: Instant | None = None
    submissionToFirstStartSeconds: float | None = None
    asOf: Instant = Field(description="the time the waiting/running seconds hold for")


class PostedMessageView(BaseModel):
    """A Slack message: its channel and ``ts``."""

    model_config = _CLOSED

    channel: str
    ts: str


class Disposition(BaseModel):
    """What happens to a job whose preemption retries ran out, or that thrashes
    (:class:`quotagov.governance.dispositions.DispositionRecord`)."""

    model_config = _CLOSED

    status: str = Field(
        description="pending-owner, awaiting-termination, applying, applied, abandoned "
        "or not-needed"
    )
    trigger: str = Field(description="retries-exhausted or thrash-guard")
    policyAction: str = Field(description="resubmit, reclassify or ask-owner")
    owner: str
    openedAt: Instant
    preemptionCount: int
    preemptionRetriesBeforeTermination: int | None = None
    reason: str | None = None
    choices: list[str] | None = Field(default=None, description="pending-owner: the choices")
    choice: str | None = None
    decidedBy: str | None = None
    decidedAt: Instant | None = None
    decisionSource: str | None = Field(default=None, description="api or slack")
    successorId: str | None = None
    targetShare: str | None = None
    leaseUntil: Instant | None = None
    message: PostedMessageView | None = None
    terminateRequestedAt: Instant | None = None
    terminatedAt: Instant | None = None
    closedAt: Instant | None = None
    successorBatchJobId: str | None = None
    lastError: str | None = None


class JobView(BaseModel):
    """200: a submission's record, Batch's view and its resubmission chain
    (:func:`quotagov.governance.jobs.view.job_view`). Members without a value for this
    submission are left out; instants are ISO 8601 UTC, durations seconds."""

    model_config = _CLOSED

    submissionId: str
    state: str = Field(description="QUEUED, SUBMITTED, REFUSED or FAILED (the submission)")
    team: str
    jobName: str
    reasons: list[str] = Field(default_factory=list, description="REFUSED or FAILED: every reason")
    workloadClass: str | None = None
    priorityLevel: str | None = None
    principal: str | None = Field(default=None, description="the submitter")
    source: str | None = Field(default=None, description="api or sqs")
    createdAt: Instant | None = None
    updatedAt: Instant | None = None
    chain: Chain | None = None
    quotaShareName: str | None = None
    schedulingPriority: int | None = Field(default=None, description="0-9999")
    preemptionRetriesBeforeTermination: int | None = Field(
        default=None, description="null: unlimited"
    )
    retryStrategy: RetryStrategy | None = Field(default=None, description="as submitted")
    timeoutConfig: TimeoutConfig | None = Field(default=None, description="as submitted")
    tags: dict[str, str] | None = Field(default=None, description="the submitter's own tags")
    batchJobId: str | None = None
    batchJobArn: str | None = None
    batch: BatchView | None = Field(default=None, description="SUBMITTED: Batch's view")
    jobState: JobState | None = Field(
        default=None, description="what Batch's state-change events told (the job-state handler)"
    )
    disposition: Disposition | None = Field(
        default=None, description="after the preemption retries ran out, or thrashing"
    )


class JobSummary(BaseModel):
    """One submission in a listing (:func:`quotagov.governance.jobs.listing.list_jobs`)."""

    model_config = _CLOSED

    submissionId: str
    jobName: str
    state: str
    batchStatus: str | None = None
    quotaShareName: str | None = None
    schedulingPriority: int | None = None
    priorityLevel: str | None = None
    principal: str | None = None
    createdAt: Instant | None = None
    updatedAt: Instant | None = None
    preemptionCount: int = 0


class JobPage(BaseModel):
    """200: one page of a team's submissions, newest first."""

    model_config = _CLOSED

    jobs: list[JobSummary]
    nextToken: str | None = Field(
        description="pass as ``nextToken`` for the next page; null on the last page"
    )


class PreemptedJobView(BaseModel):
    """A job approval would preempt."""

    model_config = _CLOSED

    jobId: str
    jobName: str
    quotaShareName: str
    kind: str = Field(description="IN_SHARE or CROSS_SHARE")
    unsavedSeconds: float


class ImpactPreviewView(BaseModel):
    """What approving would do (:class:`quotagov.governance.model.impact_preview.ImpactPreview`)."""

    model_config = _CLOSED

    outcome: str
    summary: str
    preempted: list[PreemptedJobView]
    positionBefore: int | None
    positionAfter: int | None
    computedAt: Instant | None


class EscalationAnswer(BaseModel):
    """201 (PENDING, waiting for approval in Slack), 202 (APPROVED, ``direct``: handed to
    the apply function) or 200 (APPLIED, ``direct``, without the hand-off)
    (:meth:`quotagov.governance.model.escalation.Escalation.to_api`)."""

    model_config = _CLOSED

    escalationId: str
    jobId: str
    batchJobId: str
    jobName: str
    team: str
    quotaShareName: str
    requester: str
    reason: str
    currentPriority: int = Field(description="0-9999")
    status: str
    direct: bool
    requestedLevel: str
    requestedPriority: int = Field(description="0-9999")
    createdAt: Instant
    expiresAt: Instant
    preview: ImpactPreviewView | None = None
    message: PostedMessageView | None = None
    decidedBy: str | None = None
    decidedAt: Instant | None = None
    appliedAt: Instant | None = None
    error: str | None = None
    supersededPriority: int | None = None
    previousPreview: ImpactPreviewView | None = None


class DispositionAnswer(BaseModel):
    """200: the disposition decided (``changed`` false when it had been already)."""

    model_config = _CLOSED

    jobId: str = Field(description="the submission")
    status: str = Field(description="the disposition's status after the decision")
    trigger: str = Field(description="retries-exhausted or thrash-guard")
    policyAction: str
    choice: str | None
    decidedBy: str | None
    successorId: str | None
    targetShare: str | None
    choices: list[str] = Field(description="what the owner may choose")
    reason: str
    changed: bool
    error: str | None = Field(description="why submitting the successor failed (then 503)")


#: What each status code means, where a route does not say otherwise.
DESCRIPTIONS: dict[int, str] = {
    400: "input faults: every fault with its path",
    401: "no caller identity in the request",
    403: "the caller may not do this",
    404: "no such job (or none the caller may see)",
    409: "the resource's state does not allow it",
    415: "the body is not JSON (Content-Type)",
    422: "the governance policy refuses it",
    503: "a dependency failed: send the same request again later",
}

#: Examples of the error bodies, by status code.
ERROR_EXAMPLES: dict[int, dict[str, Any]] = {
    400: {
        "message": "invalid request",
        "faults": [
            {
                "path": "serviceRequestPayload.TrainingJobName",
                "fault": "has 64 characters, at most 63 allowed",
            },
            {
                "path": "serviceRequestPayload.StoppingCondition.MaxWaitTimeInSeconds",
                "fault": "only for managed spot training: set EnableManagedSpotTraining to true "
                "or leave MaxWaitTimeInSeconds out",
            },
        ],
    },
    401: {"message": "no caller identity in the request"},
    403: {
        "message": "team: arn:aws:sts::111122223333:assumed-role/researcher/mallory is not a "
        "member of team 'research' and may not submit for it"
    },
    404: {"message": "no submission 8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f"},
    409: {"message": "the disposition was already decided: abandon"},
    415: {
        "message": "invalid request",
        "faults": [
            {
                "path": "headers.Content-Type",
                "fault": "'text/plain' is not accepted: send the body as application/json",
            }
        ],
    },
    422: {"message": "level 'urgent' needs approval the team does not have"},
    503: {"message": "try again later: the submission queue is unavailable"},
}


def _content(model: type[BaseModel], example: Any) -> dict[str, Any]:
    return {"application/json": {"model": model, "examples": {"example": {"value": example}}}}


def error(status: int, description: str | None = None, example: Any = None) -> dict[str, Any]:
    """The OpenAPI response of error ``status`` (an :class:`ErrorAnswer`)."""
    return {
        "description": description or DESCRIPTIONS[status],
        "content": _content(ErrorAnswer, example or ERROR_EXAMPLES[status]),
    }


def ok(model: type[BaseModel], description: str, example: Any) -> dict[str, Any]:
    """The OpenAPI response of a success with body ``model``."""
    return {"description": description, "content": _content(model, example)}


def responses(*errors: int, **extra: dict[str, Any]) -> dict[int, Any]:
    """A route's ``responses``: the listed error codes plus ``extra`` (``s202=ok(...)``:
    the key is ``s`` and the status code)."""
    answers: dict[int, Any] = {int(key[1:]): value for key, value in extra.items()}
    for status in errors:
        answers.setdefault(status, error(status))
    return dict(sorted(answers.items()))
