"""Step 1: receive a submission (``POST /jobs``, or a message put straight on the queue).

:func:`receive_submission` authorizes the caller and routes the request with the policy
(:mod:`quotagov.governance.routing`), stores a ``QUEUED`` or ``REFUSED``
:class:`~quotagov.governance.records.JobRecord` and, for the API, queues the
submission id for the submit worker. :func:`record_unusable_message` stores the outcome
of a queue message that can never be submitted.

Submission ids are deterministic (:func:`submission_id_for`), so a retried request or a
redelivered message is the same submission, never a second one.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from quotagov.governance.ports import (
    JobRecordConflictError,
    JobRecordExistsError,
    SubmissionQueueError,
)
from quotagov.governance.records import JobRecord, SubmissionState, client_token_for
from quotagov.governance.routing import NotATeamMemberError, RoutingDecision, authorize, route
from quotagov.governance.submission.deps import (
    ENQUEUE_FAILED,
    SubmissionDeps,
    audit_decision,
    is_enqueue_failure,
)
from quotagov.governance.submission.errors import SubmissionUnavailableError
from quotagov.governance.submission_request import SubmissionRequest

#: Namespace of the deterministic submission ids (uuid5).
SUBMISSION_NAMESPACE = uuid.UUID("6f1d7c52-0b8e-4c1e-9a43-2f7d3e5b9a10")


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
    request: SubmissionRequest,
    principal: str,
    submission_id: str,
    now: int,
    source: str,
    decision: RoutingDecision,
) -> JobRecord:
    """The new record: ``QUEUED`` with the decision's routing, or ``REFUSED`` with its
    reasons (``now``: epoch seconds)."""
    payload = request.serviceRequestPayload
    record = JobRecord(
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
    routing = decision.routing
    if routing is None or not decision.accepted:
        return record.model_copy(
            update={"state": SubmissionState.REFUSED, "reasons": decision.reasons}
        )
    return record.model_copy(
        update={
            "quotaShareName": routing.quotaShareName,
            "schedulingPriority": routing.schedulingPriority,
            "preemptionRetriesBeforeTermination": routing.preemptionRetriesBeforeTermination,
            "ownerSlackUserId": routing.ownerSlackUserId,
        }
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
            ``queue``; with ``capacity``, a job needing more instances than the service
            environment has is refused (read only after the caller is authorized).
        source: ``api`` or ``sqs``.
        message_id: the queue message id (deterministic ids for queue submissions).
        enqueue: send the submission id to the submission queue (the API does; the
            worker, which received the message itself, does not).

    Returns:
        The :class:`ReceiveOutcome`; a refused submission is stored ``REFUSED`` with
        its reasons and recorded in the audit log. A retry of a stored submission (same
        ``clientRequestId`` and principal) returns the stored record
        (``created=False``), see :func:`_received_again`.

    Raises:
        NotATeamMemberError: the principal may not submit for the team (nothing stored;
            audited ``SubmissionForbidden``).
        SubmissionUnavailableError: the queue refused the message (``submission_id``
            set); the record is then ``FAILED`` with that reason and
            :data:`~quotagov.governance.submission.deps.ENQUEUE_FAILED`, so nothing is
            left half done and a retry of the same submission can queue it.
    """
    submission_id = submission_id_for(principal, request.clientRequestId, message_id)
    try:
        authorize(deps.policy, request.team, principal)
        environment = deps.capacity.of(deps.governed_queue) if deps.capacity else None
        decision = route(deps.policy, request, principal, environment)
    except NotATeamMemberError:
        details = {"team": request.team, "source": source}
        audit_decision(deps, "SubmissionForbidden", principal, submission_id, details)
        raise
    now = int(deps.clock.now())
    record = _record_for(request, principal, submission_id, now, source, decision)
    try:
        stored = deps.jobs.create(record)
    except JobRecordExistsError:
        existing = deps.jobs.get(submission_id)
        if existing is None:  # pragma: no cover - created and vanished: storage fault
            raise
        return _received_again(existing, deps, now, enqueue=enqueue)
    if stored.state is SubmissionState.REFUSED:
        refused = {"team": request.team, "reasons": stored.reasons, "source": source}
        audit_decision(deps, "SubmissionRefused", principal, submission_id, refused)
        return ReceiveOutcome(stored, reasons=list(stored.reasons))
    if enqueue:
        stored = _enqueue(stored, deps)
    return ReceiveOutcome(stored)


def _received_again(
    existing: JobRecord, deps: SubmissionDeps, now: int, *, enqueue: bool
) -> ReceiveOutcome:
    """A retry of stored submission ``existing``: the stored request is used, not the
    retry's body (``now``: epoch seconds).

    If the stored record is ``FAILED`` only because the queue refused it
    (:func:`~quotagov.governance.submission.deps.is_enqueue_failure`), it moves back to
    ``QUEUED`` first (conditional on its version); a ``QUEUED`` record is, with
    ``enqueue``, queued again (a crash between store and send).
    """
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


def _enqueue(record: JobRecord, deps: SubmissionDeps) -> JobRecord:
    """Send ``record``'s id to the queue; returns the record as it stands after.

    Raises:
        SubmissionUnavailableError: the queue refused it (``SubmissionQueueError``); the
            record is now ``FAILED`` with :data:`ENQUEUE_FAILED` (unless it had already
            moved on, see below).
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
        raise SubmissionUnavailableError(str(exc), record.pk) from exc
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
        SubmissionUnavailableError: a concurrent retry moved it back and the queue
            refused that one too.
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
            raise SubmissionUnavailableError(
                "a concurrent retry could not queue the submission either", record.pk
            ) from exc
        return current


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
    audit_decision(
        deps,
        action,
        principal or "quotagov",
        submission_id,
        {"team": record.team, "reasons": list(reasons), "source": "sqs"},
    )
    return stored
