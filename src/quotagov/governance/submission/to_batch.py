"""Step 2: send a ``QUEUED`` submission to Batch exactly once (the submit worker).

:func:`submit_to_batch` re-checks the record against the current policy, builds the
``SubmitServiceJob`` request (:func:`service_job_request`, with the deterministic
``clientToken``), calls Batch and moves the record ``QUEUED -> SUBMITTED`` with a
conditional write. A submission that can never succeed (refused by the policy as it is
now, a Batch ``ClientException``) ends ``FAILED`` with its reason; throttling and server
errors raise :class:`~quotagov.governance.submission.errors.TransientSubmitError` so the
message is retried.

Exactly once: the record's state is checked before calling Batch and changed only from
``QUEUED``; the ``clientToken`` is the same on every try; after an interrupted try
(``recheck=True``) the use case first looks for a service job already tagged with the
submission id. ``SubmitServiceJob`` is limited to 5 transactions per second per
account (AWS Batch service quotas), hence ``deps.pace``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from quotagov.governance.model.job import (
    FailureKind,
    JobRecord,
    SubmissionState,
    failure_changes,
)
from quotagov.governance.ports import (
    BatchClientError,
    BatchError,
    BatchPort,
    JobRecordConflictError,
)
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.routing import (
    NotATeamMemberError,
    RoutingInput,
    policy_fingerprint,
    route,
)
from quotagov.governance.submission.deps import (
    SubmissionDeps,
    audit_decision,
    is_enqueue_failure,
    is_stale_failure,
)
from quotagov.governance.submission.errors import TransientSubmitError
from quotagov.governance.submission.failure import announce_failure
from quotagov.governance.submission.proof import unproven
from quotagov.governance.submission.request import SubmissionRequest
from quotagov.policy.models import Policy

logger = logging.getLogger(__name__)

#: Tag on every service job naming the submission it came from.
SUBMISSION_TAG = "quotagov:submissionId"
#: Tag with the checkpoint interval declared at submission (seconds, as text).
CHECKPOINT_TAG = "quotagov:checkpointIntervalSeconds"
#: ``serviceJobType`` of SageMaker training service jobs.
SERVICE_JOB_TYPE = "SAGEMAKER_TRAINING"


def request_of(record: JobRecord) -> SubmissionRequest:
    """Rebuild the :class:`SubmissionRequest` a stored record was made from."""
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
            "retryStrategy": record.retryStrategy,
            "timeoutConfig": record.timeoutConfig,
            "tags": record.tags,
        }
    )


def service_job_request(record: JobRecord, job_queue: str) -> dict[str, Any]:
    """The ``SubmitServiceJob`` request for a routed record (API reference shapes).

    ``quotaShareName``, ``schedulingPriority`` (0-9999) and
    ``preemptionConfiguration.preemptionRetriesBeforeTermination`` (left out when the
    class sets no limit) come from the record's routing; ``clientToken`` is the
    record's deterministic token; tags name the submission, team, class, priority level
    and, when declared, the checkpoint interval in seconds (``quotagov history export``
    reads them back), beside the submitter's own ``tags`` (whose keys may not start with
    ``quotagov:``: routing refuses them). The submitter's ``retryStrategy`` and
    ``timeoutConfig`` are passed as they were stored.
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
            **(record.tags or {}),
            SUBMISSION_TAG: record.pk,
            "quotagov:team": record.team,
            "quotagov:workloadClass": record.workloadClass,
        },
    }
    if record.priorityLevel:
        request["tags"]["quotagov:priorityLevel"] = record.priorityLevel
    if record.checkpointIntervalSeconds is not None:
        request["tags"][CHECKPOINT_TAG] = str(record.checkpointIntervalSeconds)
    if record.retryStrategy is not None:
        request["retryStrategy"] = record.retryStrategy
    if record.timeoutConfig is not None:
        request["timeoutConfig"] = record.timeoutConfig
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
            look for a service job tagged with this submission before submitting. Also
            done for a submission the reconciler queued again.

    Returns:
        The record: ``SUBMITTED`` (now or earlier), ``FAILED`` with reasons,
        ``REFUSED`` (left as it was), or ``QUEUED`` as it was when its
        ``submissionProof`` does not verify (:mod:`.proof`: audited, not submitted).

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
        if _failed_here(record):
            # A try that failed it may have stopped before its audit record or notice
            # left (this message is then delivered again): both are idempotent.
            _after_failure(record, deps, "SubmissionFailed")
        return record
    if unproven(record, deps.proofs, deps.audit, deps.governed_queue):
        return record  # written outside quotagov: audited, left QUEUED, never submitted

    stored = record
    reasons: list[str] = []
    if record.routedUnder != policy_fingerprint(deps.policy):
        # the policy changed since POST /jobs routed it (or no fingerprint was stored):
        # route it again, as the policy is now
        record, reasons = _route_again(record, deps.policy)
    if reasons:
        return _fail(record, deps, reasons, "SubmissionFailed")
    if recheck or record.requeues:
        try:
            found = find_service_job(deps.batch, record, deps.governed_queue, also=stored)
        except BatchError as exc:
            raise TransientSubmitError(submission_id, exc) from exc
        if found is not None:
            return mark_submitted(record, deps, found)
    request = service_job_request(record, deps.governed_queue)
    if deps.pace is not None:
        deps.pace()
    try:
        response = deps.batch.submit_service_job(**request)
    except BatchClientError as exc:
        found = (
            find_service_job(deps.batch, record, deps.governed_queue, also=stored)
            if "token" in exc.message.lower()
            else None
        )
        if found is not None:
            return mark_submitted(record, deps, found)
        reason = f"Batch refused SubmitServiceJob: {exc.code}: {exc.message}"
        return _fail(record, deps, [reason], "SubmissionFailed")
    except BatchError as exc:
        raise TransientSubmitError(submission_id, exc) from exc
    return mark_submitted(record, deps, response)


def _route_again(record: JobRecord, policy: Policy) -> tuple[JobRecord, list[str]]:
    """The queued record routed once by the current ``policy``: the record with today's
    share, ``schedulingPriority``, preemption retries and owner (a level's priority may
    have changed since it was accepted) and no reasons, or the record as stored and every
    reason the policy no longer allows it."""
    try:
        request_of(record)  # the stored request must still be one POST /jobs accepts
        job = RoutingInput.from_record(record)
    except ValueError as exc:  # pydantic ValidationError is a ValueError
        return record, [f"stored request no longer valid: {exc}"]
    try:
        decision = route(policy, job)
    except NotATeamMemberError as exc:
        return record, [f"policy changed since the submission was accepted: {exc}"]
    routing = decision.routing
    if decision.reasons or routing is None:
        return record, [
            f"policy changed since the submission was accepted: {r}" for r in decision.reasons
        ]
    return record.model_copy(
        update={
            "quotaShareName": routing.quotaShareName,
            "schedulingPriority": routing.schedulingPriority,
            "preemptionRetriesBeforeTermination": routing.preemptionRetriesBeforeTermination,
            "ownerSlackUserId": routing.ownerSlackUserId,
        }
    ), []


def find_service_job(
    batch: BatchPort, record: JobRecord, job_queue: str, *, also: JobRecord | None = None
) -> dict[str, Any] | None:
    """A service job of the governed queue tagged with this submission, or None.

    Lists jobs by name (``JOB_NAME`` filter, all statuses, newest first) and describes
    candidates to read their tags (summaries carry none). A tag proves nothing (anyone
    who may call ``SubmitServiceJob`` can set it), so a candidate must also carry the
    exact request quotagov sent (:func:`_is_quotagovs_job`): routed as ``record`` says,
    or as ``also`` says (the stored routing, when the policy changed since: a level's
    ``schedulingPriority`` between two deliveries). A copy of the request at another
    priority or preemption-retry limit is somebody else's job, never adopted.

    Returns:
        ``{"jobId", "jobArn", "jobName"}`` of the job, or None.

    Raises:
        BatchError: ``ListServiceJobs`` or ``DescribeServiceJob`` failed.
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
            if _is_quotagovs_job(job, record, *([also] if also is not None else [])):
                return {
                    "jobId": job["jobId"],
                    "jobArn": job.get("jobArn"),
                    "jobName": job["jobName"],
                }
        token = page.get("nextToken")
        if not token:
            return None


def _is_quotagovs_job(job: Mapping[str, Any], record: JobRecord, *routed: JobRecord) -> bool:
    """True when ``job`` (a ``DescribeServiceJob`` answer) carries ``record``'s tags and
    its very request: job name, service request payload (as JSON), and the quota share,
    ``schedulingPriority`` and ``preemptionRetriesBeforeTermination`` of ``record`` or of
    one of ``routed`` (other routings of the same submission). Members the answer leaves
    out are not held against it (the API model makes them optional)."""
    tags = job.get("tags") or {}
    if tags.get(SUBMISSION_TAG) != record.pk or tags.get("quotagov:team") != record.team:
        return False
    try:
        payload = json.loads(str(job.get("serviceRequestPayload") or ""))
        sent = json.loads(record.serviceRequestPayload)
    except ValueError:
        return False
    if payload != sent or job.get("jobName") != record.jobName:
        return False
    return any(_routed_as(job, candidate) for candidate in (record, *routed))


def _routed_as(job: Mapping[str, Any], record: JobRecord) -> bool:
    """``job``'s share, priority and retry limit are the ones ``record`` was routed to."""
    preemption = job.get("preemptionConfiguration")
    retries = (
        preemption.get("preemptionRetriesBeforeTermination")
        if isinstance(preemption, Mapping)
        else None
    )
    return (
        job.get("quotaShareName") in (None, record.quotaShareName)
        and job.get("schedulingPriority") in (None, record.schedulingPriority)
        and retries == record.preemptionRetriesBeforeTermination
    )


def mark_submitted(
    record: JobRecord, deps: SubmissionDeps, response: Mapping[str, Any]
) -> JobRecord:
    """Move ``record`` ``QUEUED -> SUBMITTED`` with the service job in ``response``.

    ``response`` is ``SubmitServiceJob``'s answer (or :func:`find_service_job`'s):
    ``jobId``, optionally ``jobArn``. When the record is no longer ``QUEUED``, the stored
    one is returned, except that a record ``FAILED`` only because the queue refused
    it, or because the reconciler gave up on it, becomes ``SUBMITTED`` anyway: a
    service job exists, and the record must name it.
    """
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
        return deps.jobs.update_if_expected(
            record.pk, changes, expected_states=[SubmissionState.QUEUED]
        )
    except JobRecordConflictError as exc:
        # Someone else moved it first (a concurrent duplicate delivery): keep theirs.
        if exc.current is None:  # pragma: no cover
            raise
        if is_enqueue_failure(exc.current) or is_stale_failure(exc.current):
            # The API saw the send fail (or the reconciler gave up on it), but a message
            # was still on its way and the service job now exists: the record must say so.
            try:
                return deps.jobs.update_if_expected(
                    record.pk,
                    {**changes, **failure_changes(None)},
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
    """Move ``record`` ``QUEUED -> FAILED`` with ``reasons``, then audit it and tell the
    owner (:func:`_after_failure`); a record someone else moved first is returned as is.

    Raises:
        AuditQueueError, HandoffError: the audit record or the owner notice was not
            accepted; the record stays FAILED and a redelivery sends both again.
    """
    try:
        failed = deps.jobs.update_if_expected(
            record.pk,
            {
                "state": SubmissionState.FAILED,
                "reasons": reasons,
                **failure_changes(FailureKind.NOT_SUBMITTABLE),
            },
            expected_states=[SubmissionState.QUEUED],
        )
    except JobRecordConflictError as exc:
        if exc.current is None:  # pragma: no cover
            raise
        return exc.current
    _after_failure(failed, deps, action)
    return failed


def _failed_here(record: JobRecord) -> bool:
    """True for a record the worker failed (not the API's enqueue failure, not the
    reconciler's stale failure, whose steps belong to them)."""
    return (
        record.state is SubmissionState.FAILED
        and not is_enqueue_failure(record)
        and not is_stale_failure(record)
    )


def _after_failure(failed: JobRecord, deps: SubmissionDeps, action: str) -> None:
    """The audit record of a failure (once per ``decision_id``) and the owner's DM
    (once per submission, :func:`~quotagov.governance.submission.failure.announce_failure`)."""
    audit_decision(
        deps,
        action,
        QUOTAGOV_ACTOR,
        failed.pk,
        {"team": failed.team, "reasons": list(failed.reasons), "principal": failed.principal},
    )
    announce_failure(failed, notices=deps.notices, notifier=deps.notifier)
