"""Submission use cases: receive a submission, then send it to Batch exactly once.

Two steps, so that ``SubmitServiceJob`` (5 transactions per second per account, AWS
Batch service quotas) is called at a controlled pace by the submit worker only:

1. :func:`receive_submission` (``POST /jobs``, or a message put straight on the
   submission queue): authorize the caller, route with the policy
   (:mod:`quotagov.governance.routing`), store a ``QUEUED`` or ``REFUSED``
   :class:`~quotagov.governance.records.JobRecord`, and, for the API, queue the
   submission id.
2. :func:`submit_to_batch` (the submit worker): re-check the record against the current
   policy, build the ``SubmitServiceJob`` request with the deterministic
   ``clientToken``, call Batch and move the record ``QUEUED -> SUBMITTED`` with a
   conditional write. A submission that can never succeed (refused by the policy as it
   is now, a Batch ``ClientException``) ends ``FAILED`` with its reason; throttling and
   server errors raise :class:`TransientSubmitError` so the message is retried.

Exactly once: the record's state is checked before calling Batch and changed only from
``QUEUED``; the ``clientToken`` is the same on every try; after an interrupted try
(``recheck=True``) the use case first looks for a service job already tagged with the
submission id. The submit worker adds Powertools Idempotency on the submission id.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from quotagov.clock import Clock
from quotagov.governance.ports import (
    AuditSink,
    BatchClientError,
    BatchError,
    BatchPort,
    ControllerDecision,
    JobRecordConflictError,
    JobRecordExistsError,
    JobsRepository,
)
from quotagov.governance.ports.jobs import SubmissionQueue, SubmissionQueueError
from quotagov.governance.records import JobRecord, SubmissionState, client_token_for
from quotagov.governance.routing import NotATeamMemberError, route
from quotagov.governance.submission_request import SubmissionRequest
from quotagov.policy.models import Policy

logger = logging.getLogger(__name__)

#: Namespace of the deterministic submission ids (uuid5).
SUBMISSION_NAMESPACE = uuid.UUID("6f1d7c52-0b8e-4c1e-9a43-2f7d3e5b9a10")
#: Tag on every service job naming the submission it came from.
SUBMISSION_TAG = "quotagov:submissionId"
#: ``serviceJobType`` of SageMaker training service jobs.
SERVICE_JOB_TYPE = "SAGEMAKER_TRAINING"


#: Record attribute (bool) set on a ``FAILED`` record whose only fault is that the
#: submission queue refused its message; a retry of the same submission moves it back
#: to ``QUEUED`` (see :func:`receive_submission`).
ENQUEUE_FAILED = "enqueueFailed"


def is_enqueue_failure(record: JobRecord) -> bool:
    """True for a ``FAILED`` record that failed only because the queue refused it."""
    extra = record.model_extra or {}
    return record.state is SubmissionState.FAILED and extra.get(ENQUEUE_FAILED) is True


class TransientSubmitError(Exception):
    """Batch throttled or failed on its side; the submission stays ``QUEUED`` (retry later).

    Attributes:
        submission_id: the submission.
        cause: the :class:`~quotagov.governance.ports.BatchError`.
    """

    def __init__(self, submission_id: str, cause: BatchError) -> None:
        super().__init__(f"submission {submission_id}: {cause}")
        self.submission_id = submission_id
        self.cause = cause


@dataclass
class SubmissionDeps:
    """What the submission use cases use (built from ``quotagov.wiring.services()``).

    Attributes:
        policy: the current governance policy.
        jobs: the job records.
        clock: epoch seconds.
        audit: where refusals and failures are recorded.
        job_queue: the governed job queue (``JOB_QUEUE``; the policy's ``jobQueue`` when empty).
        batch: the Batch port (only :func:`submit_to_batch` needs it).
        queue: the submission queue (only :func:`receive_submission` from the API).
        pace: called right before each ``SubmitServiceJob``; blocks to keep the rate
            under Batch's limit (a no-op when None).
    """

    policy: Policy
    jobs: JobsRepository
    clock: Clock
    audit: AuditSink
    job_queue: str = ""
    batch: BatchPort | None = None
    queue: SubmissionQueue | None = None
    pace: Callable[[], None] | None = None

    @property
    def governed_queue(self) -> str:
        """``job_queue`` or, when empty, the policy's ``jobQueue``."""
        return self.job_queue or self.policy.jobQueue


@dataclass(frozen=True)
class ReceiveOutcome:
    """What :func:`receive_submission` did.

    Attributes:
        record: the stored record (``QUEUED`` or ``REFUSED``).
        created: False when the same submission (same ``clientRequestId``, or the same
            queue message) had been received before; ``record`` is then the stored one.
    """

    record: JobRecord
    created: bool = True
    reasons: list[str] = field(default_factory=list)


def submission_id_for(
    principal: str, client_request_id: str | None = None, message_id: str | None = None
) -> str:
    """The submission id: deterministic for retried requests and redelivered messages.

    * with a ``clientRequestId``: ``uuid5(principal, clientRequestId)``, so API and queue
      retries of one request by one caller are one submission;
    * else, for a queue message: ``uuid5("sqs", messageId)``;
    * else: a random ``uuid4``.
    """
    if client_request_id:
        return str(uuid.uuid5(SUBMISSION_NAMESPACE, f"request\n{principal}\n{client_request_id}"))
    if message_id:
        return str(uuid.uuid5(SUBMISSION_NAMESPACE, f"sqs\n{message_id}"))
    return str(uuid.uuid4())


def _record_for(
    request: SubmissionRequest, principal: str, submission_id: str, now: int, source: str
) -> JobRecord:
    payload = request.serviceRequestPayload
    return JobRecord(
        pk=submission_id,
        state=SubmissionState.QUEUED,
        team=request.team,
        workloadClass=request.workloadClass,
        priorityLevel=request.priorityLevel,
        jobName=request.batch_job_name,
        principal=principal,
        checkpointIntervalSeconds=request.checkpointIntervalSeconds,
        serviceRequestPayload=payload.to_json(),
        instanceType=payload.ResourceConfig.InstanceType,
        instanceCount=payload.ResourceConfig.InstanceCount,
        clientToken=client_token_for(submission_id),
        requestedQuotaShareName=request.quotaShareName,
        clientRequestId=request.clientRequestId,
        createdAt=now,
        updatedAt=now,
        source=source,
    )


def receive_submission(
    request: SubmissionRequest,
    principal: str,
    deps: SubmissionDeps,
    *,
    source: str = "api",
    message_id: str | None = None,
    enqueue: bool = True,
) -> ReceiveOutcome:
    """Authorize, route and store a submission; queue it when accepted and ``enqueue``.

    Args:
        request: the validated submission.
        principal: the caller (from the request context or the message attribute).
        deps: needs ``policy``, ``jobs``, ``clock``, ``audit`` and, with ``enqueue``,
            ``queue``.
        source: ``api`` or ``sqs``.
        message_id: the queue message id (deterministic ids for queue submissions).
        enqueue: send the submission id to the submission queue (the API does; the
            worker, which received the message itself, does not).

    Returns:
        The :class:`ReceiveOutcome`; a refused submission is stored ``REFUSED`` with
        its reasons and recorded in the audit log.

    A retry of a stored submission (same ``clientRequestId`` and principal) returns
    the stored record (``created=False``); if that record is ``QUEUED`` it is queued
    again (a crash between store and send), and if it is ``FAILED`` only because the
    queue refused it (:func:`is_enqueue_failure`), it moves back to ``QUEUED`` first
    (conditional on its version) and, with ``enqueue``, is queued again. The stored
    request is used, not the retry's body.

    Raises:
        NotATeamMemberError: the principal may not submit for the team (nothing stored).
        SubmissionQueueError: the queue refused the message (``submission_id`` set); the
            record is then ``FAILED`` with that reason and :data:`ENQUEUE_FAILED`, so
            nothing is left half done and a retry of the same submission can queue it.
    """
    submission_id = submission_id_for(principal, request.clientRequestId, message_id)
    try:
        decision = route(deps.policy, request, principal)
    except NotATeamMemberError:
        _audit(
            deps,
            "SubmissionForbidden",
            principal,
            submission_id,
            {"team": request.team, "source": source},
        )
        raise
    now = int(deps.clock.now())
    record = _record_for(request, principal, submission_id, now, source)
    if decision.routing is None or not decision.accepted:
        record = record.model_copy(
            update={"state": SubmissionState.REFUSED, "reasons": decision.reasons}
        )
    else:
        routing = decision.routing
        record = record.model_copy(
            update={
                "quotaShareName": routing.quotaShareName,
                "schedulingPriority": routing.schedulingPriority,
                "preemptionRetriesBeforeTermination": routing.preemptionRetriesBeforeTermination,
                "ownerSlackUserId": routing.ownerSlackUserId,
            }
        )
    try:
        stored = deps.jobs.create(record)
    except JobRecordExistsError:
        existing = deps.jobs.get(submission_id)
        if existing is None:  # pragma: no cover - created and vanished: storage fault
            raise
        if is_enqueue_failure(existing):
            existing = _requeue(existing, deps)  # a retry after the queue refused it
        if existing.state is SubmissionState.QUEUED and enqueue:
            # a retry after a crash between store and send, or while an earlier send is
            # still in flight: claim the record first, so that a failure of the earlier
            # send (conditional on its version) cannot mark this accepted retry FAILED
            existing = _claim_for_send(existing, deps, now)
            if existing.state is SubmissionState.QUEUED:
                existing = _enqueue(existing, deps)
        return ReceiveOutcome(existing, created=False, reasons=list(existing.reasons))
    if stored.state is SubmissionState.REFUSED:
        _audit(
            deps,
            "SubmissionRefused",
            principal,
            submission_id,
            {"team": request.team, "reasons": stored.reasons, "source": source},
        )
        return ReceiveOutcome(stored, reasons=list(stored.reasons))
    if enqueue:
        stored = _enqueue(stored, deps)
    return ReceiveOutcome(stored)


def _enqueue(record: JobRecord, deps: SubmissionDeps) -> JobRecord:
    """Send ``record``'s id to the queue; returns the record as it stands after.

    Raises:
        SubmissionQueueError: the queue refused it; the record is now ``FAILED`` with
            :data:`ENQUEUE_FAILED` (unless it had already moved on, see below).
    """
    if deps.queue is None:
        raise RuntimeError("receive_submission: no submission queue to send to")
    try:
        deps.queue.send(record.pk)
    except SubmissionQueueError as exc:
        reason = f"submission queue: the submission could not be queued ({exc}); submit again"
        try:
            deps.jobs.update(
                record.pk,
                {"state": SubmissionState.FAILED, "reasons": [reason], ENQUEUE_FAILED: True},
                expected_version=record.version,
                expected_states=[SubmissionState.QUEUED],
            )
        except JobRecordConflictError as conflict:
            # It already moved on: the send did reach the queue and a worker took it, or
            # a retry claimed the record for a send of its own.
            current = conflict.current
            if current is not None and not is_enqueue_failure(current):
                return current
        raise SubmissionQueueError(str(exc), record.pk) from exc
    return record


def _claim_for_send(record: JobRecord, deps: SubmissionDeps, now: int) -> JobRecord:
    """Bump a QUEUED record's ``version`` (``lastEnqueuedAt`` = ``now``, epoch seconds)
    before sending it again; returns the record as stored after, or the stored one
    when another writer changed it first."""
    try:
        return deps.jobs.update(
            record.pk,
            {"lastEnqueuedAt": now},
            expected_version=record.version,
            expected_states=[SubmissionState.QUEUED],
        )
    except JobRecordConflictError as conflict:
        return conflict.current if conflict.current is not None else record


def _requeue(record: JobRecord, deps: SubmissionDeps) -> JobRecord:
    """Move an enqueue-failed ``FAILED`` record back to ``QUEUED`` (conditional write).

    Returns:
        The record as stored after (``QUEUED``), or the stored one when a concurrent
        writer changed it first.

    Raises:
        SubmissionQueueError: a concurrent retry moved it back and the queue refused
            that one too.
    """
    try:
        return deps.jobs.update(
            record.pk,
            {"state": SubmissionState.QUEUED, "reasons": [], ENQUEUE_FAILED: None},
            expected_version=record.version,
            expected_states=[SubmissionState.FAILED],
        )
    except JobRecordConflictError as exc:
        current = exc.current if exc.current is not None else deps.jobs.get(record.pk)
        if current is None:  # pragma: no cover - storage fault
            raise
        if is_enqueue_failure(current):
            raise SubmissionQueueError(
                "a concurrent retry could not queue the submission either", record.pk
            ) from exc
        return current


def request_of(record: JobRecord) -> SubmissionRequest:
    """Rebuild the :class:`SubmissionRequest` a stored record was made from."""
    import json

    return SubmissionRequest.model_validate(
        {
            "team": record.team,
            "workloadClass": record.workloadClass,
            "priorityLevel": record.priorityLevel,
            "jobName": record.jobName,
            "quotaShareName": record.requestedQuotaShareName,
            "checkpointIntervalSeconds": record.checkpointIntervalSeconds,
            "clientRequestId": record.clientRequestId,
            "serviceRequestPayload": json.loads(record.serviceRequestPayload),
        }
    )


def service_job_request(record: JobRecord, job_queue: str) -> dict[str, Any]:
    """The ``SubmitServiceJob`` request for a routed record (API reference shapes).

    ``quotaShareName``, ``schedulingPriority`` (0-9999) and
    ``preemptionConfiguration.preemptionRetriesBeforeTermination`` (left out when the
    class sets no limit) come from the record's routing; ``clientToken`` is the
    record's deterministic token; tags name the submission, team and class.
    """
    request: dict[str, Any] = {
        "jobName": record.jobName,
        "jobQueue": job_queue,
        "serviceJobType": SERVICE_JOB_TYPE,
        "serviceRequestPayload": record.serviceRequestPayload,
        "quotaShareName": record.quotaShareName,
        "schedulingPriority": record.schedulingPriority,
        "clientToken": record.clientToken,
        "tags": {
            SUBMISSION_TAG: record.pk,
            "quotagov:team": record.team,
            "quotagov:workloadClass": record.workloadClass,
        },
    }
    if record.preemptionRetriesBeforeTermination is not None:
        request["preemptionConfiguration"] = {
            "preemptionRetriesBeforeTermination": record.preemptionRetriesBeforeTermination
        }
    return request


def submit_to_batch(
    submission_id: str, deps: SubmissionDeps, *, recheck: bool = False
) -> JobRecord:
    """Send a ``QUEUED`` submission to Batch once; returns the record as stored after.

    Args:
        submission_id: the record's id.
        deps: needs ``policy``, ``jobs``, ``clock``, ``audit``, ``batch`` (and ``pace``).
        recheck: the submission may have reached Batch before (a redelivered message):
            look for a service job tagged with this submission before submitting.

    Returns:
        The record: ``SUBMITTED`` (now or earlier), ``FAILED`` with reasons, or
        ``REFUSED`` (left as it was).

    Raises:
        LookupError: no record has this id.
        TransientSubmitError: Batch throttled or failed (HTTP 429/5xx); the record is
            unchanged and the call should be retried later.
    """
    if deps.batch is None:
        raise RuntimeError("submit_to_batch: no Batch port")
    record = deps.jobs.get(submission_id)
    if record is None:
        raise LookupError(f"submission {submission_id}: no job record")
    if record.state is not SubmissionState.QUEUED:
        return record

    reasons = _recheck_policy(record, deps.policy)
    if reasons:
        return _fail(record, deps, reasons, "SubmissionFailed")
    record = _with_current_routing(record, deps.policy)
    if recheck:
        found = _find_service_job(deps.batch, record, deps.governed_queue)
        if found is not None:
            return _mark_submitted(record, deps, found)
    request = service_job_request(record, deps.governed_queue)
    if deps.pace is not None:
        deps.pace()
    try:
        response = deps.batch.submit_service_job(**request)
    except BatchClientError as exc:
        found = (
            _find_service_job(deps.batch, record, deps.governed_queue)
            if "token" in exc.message.lower()
            else None
        )
        if found is not None:
            return _mark_submitted(record, deps, found)
        reason = f"Batch refused SubmitServiceJob: {exc.code}: {exc.message}"
        return _fail(record, deps, [reason], "SubmissionFailed")
    except BatchError as exc:
        raise TransientSubmitError(submission_id, exc) from exc
    return _mark_submitted(record, deps, response)


def _recheck_policy(record: JobRecord, policy: Policy) -> list[str]:
    """Reasons the queued record is no longer allowed by ``policy`` (empty if it is)."""
    try:
        request = request_of(record)
    except ValueError as exc:  # pydantic ValidationError is a ValueError
        return [f"stored request no longer valid: {exc}"]
    try:
        decision = route(policy, request, record.principal)
    except NotATeamMemberError as exc:
        return [f"policy changed since the submission was accepted: {exc}"]
    return [f"policy changed since the submission was accepted: {r}" for r in decision.reasons]


def _with_current_routing(record: JobRecord, policy: Policy) -> JobRecord:
    """The record routed by the current policy (a level's priority may have changed)."""
    decision = route(policy, request_of(record), record.principal)
    routing = decision.routing
    if routing is None:  # pragma: no cover - guarded by _recheck_policy
        return record
    return record.model_copy(
        update={
            "quotaShareName": routing.quotaShareName,
            "schedulingPriority": routing.schedulingPriority,
            "preemptionRetriesBeforeTermination": routing.preemptionRetriesBeforeTermination,
            "ownerSlackUserId": routing.ownerSlackUserId,
        }
    )


def _find_service_job(batch: BatchPort, record: JobRecord, job_queue: str) -> dict[str, Any] | None:
    """A service job of the governed queue tagged with this submission, or None.

    Lists jobs by name (``JOB_NAME`` filter, all statuses, newest first) and describes
    candidates to read their tags (summaries carry none).
    """
    token: str | None = None
    while True:
        request: dict[str, Any] = {
            "jobQueue": job_queue,
            "filters": [{"name": "JOB_NAME", "values": [record.jobName]}],
            "maxResults": 100,
        }
        if token:
            request["nextToken"] = token
        page = batch.list_service_jobs(**request)
        for summary in page.get("jobSummaryList", []):
            job = batch.describe_service_job(jobId=summary["jobId"])
            if job.get("tags", {}).get(SUBMISSION_TAG) == record.pk:
                return {
                    "jobId": job["jobId"],
                    "jobArn": job.get("jobArn"),
                    "jobName": job["jobName"],
                }
        token = page.get("nextToken")
        if not token:
            return None


def _mark_submitted(
    record: JobRecord, deps: SubmissionDeps, response: Mapping[str, Any]
) -> JobRecord:
    changes = {
        "state": SubmissionState.SUBMITTED,
        "batchJobId": response["jobId"],
        "batchJobArn": response.get("jobArn"),
        "quotaShareName": record.quotaShareName,
        "schedulingPriority": record.schedulingPriority,
        "preemptionRetriesBeforeTermination": record.preemptionRetriesBeforeTermination,
        "submittedAt": int(deps.clock.now()),
        "reasons": [],
    }
    try:
        return deps.jobs.update(record.pk, changes, expected_states=[SubmissionState.QUEUED])
    except JobRecordConflictError as exc:
        # Someone else moved it first (a concurrent duplicate delivery): keep theirs.
        if exc.current is None:  # pragma: no cover
            raise
        if is_enqueue_failure(exc.current):
            # The API saw the send fail, but the message had reached the queue and the
            # service job now exists: the record must say so.
            try:
                return deps.jobs.update(
                    record.pk,
                    {**changes, ENQUEUE_FAILED: None},
                    expected_version=exc.current.version,
                    expected_states=[SubmissionState.FAILED],
                )
            except JobRecordConflictError as again:
                if again.current is None:  # pragma: no cover
                    raise
                return again.current
        logger.warning("submission %s already %s", record.pk, exc.current.state)
        return exc.current


def _fail(record: JobRecord, deps: SubmissionDeps, reasons: list[str], action: str) -> JobRecord:
    try:
        failed = deps.jobs.update(
            record.pk,
            {"state": SubmissionState.FAILED, "reasons": reasons},
            expected_states=[SubmissionState.QUEUED],
        )
    except JobRecordConflictError as exc:
        if exc.current is None:  # pragma: no cover
            raise
        return exc.current
    _audit(
        deps,
        action,
        "quotagov",
        record.pk,
        {"team": record.team, "reasons": reasons, "principal": record.principal},
    )
    return failed


def _audit(
    deps: SubmissionDeps, action: str, actor: str, submission_id: str, details: Mapping[str, Any]
) -> None:
    deps.audit.record_decision(
        ControllerDecision(
            action=action,
            actor=actor,
            job_queue=deps.governed_queue,
            resource=submission_id,
            decision_id=f"{action}#{submission_id}",
            details=dict(details),
        )
    )


def record_unusable_message(
    message_id: str,
    reasons: list[str],
    deps: SubmissionDeps,
    *,
    principal: str = "",
    fields: Mapping[str, str] | None = None,
    state: SubmissionState = SubmissionState.FAILED,
) -> JobRecord:
    """Store the outcome of a queue message that can never be submitted.

    Used for malformed direct submissions (``FAILED``, schema faults as reasons) and
    for callers who may not submit for the team (``REFUSED``). The record id is
    deterministic in ``message_id``, so a redelivery stores nothing new.

    Returns:
        The stored record (the earlier one on a redelivery).
    """
    submission_id = submission_id_for(principal, None, message_id)
    now = int(deps.clock.now())
    known = dict(fields or {})
    record = JobRecord(
        pk=submission_id,
        state=state,
        team=known.get("team", ""),
        workloadClass=known.get("workloadClass", ""),
        priorityLevel=known.get("priorityLevel", ""),
        jobName=known.get("jobName", ""),
        principal=principal,
        reasons=list(reasons),
        createdAt=now,
        updatedAt=now,
        source="sqs",
        messageId=message_id,
    )
    try:
        stored = deps.jobs.create(record)
    except JobRecordExistsError:
        existing = deps.jobs.get(submission_id)
        if existing is None:  # pragma: no cover - storage fault
            raise
        return existing
    action = "SubmissionRefused" if state is SubmissionState.REFUSED else "SubmissionFailed"
    _audit(
        deps,
        action,
        principal or "quotagov",
        submission_id,
        {"team": record.team, "reasons": list(reasons), "source": "sqs"},
    )
    return stored
