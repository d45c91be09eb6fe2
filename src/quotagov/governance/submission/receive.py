"""Step 1: receive a submission (``POST /jobs``, the only way in).

:func:`receive_submission` authorizes the caller and routes the request with the policy
(:mod:`quotagov.governance.routing`), stores a ``QUEUED`` or ``REFUSED``
:class:`~quotagov.governance.model.job.JobRecord` and, for the API, queues the
submission id for the submit worker. :func:`record_unusable_message` stores the outcome
of a queue message that can never be submitted.

Submission ids are deterministic (:func:`submission_id_for`), so a retried request or a
redelivered message is the same submission, never a second one.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from quotagov.governance.model.job import (
    FailureKind,
    JobRecord,
    SubmissionState,
    client_token_for,
    failure_changes,
)
from quotagov.governance.notifications import refused as refused_event
from quotagov.governance.ports import (
    JobRecordConflictError,
    JobRecordExistsError,
    SubmissionQueueError,
)
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.routing import (
    NotATeamMemberError,
    RoutingDecision,
    RoutingInput,
    authorize,
    policy_fingerprint,
    route,
)
from quotagov.governance.submission.deps import (
    SubmissionDeps,
    audit_decision,
    is_enqueue_failure,
)
from quotagov.governance.submission.errors import (
    IdempotencyMismatchError,
    SubmissionUnavailableError,
)
from quotagov.governance.submission.proof import with_proof
from quotagov.governance.submission.request import SubmissionRequest

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
    * else, for a refused queue message: ``uuid5("sqs", messageId)``;
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
        **request.batch_settings(),
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
) -> ReceiveOutcome:
    """Authorize, route and store a submission (``POST /jobs``); queue it when accepted.

    The only way a submission enters quotagov: the submit worker submits what this
    stored, with this record's principal, team and request (``docs/design.md``, "Trust model").

    Args:
        request: the validated submission.
        principal: the caller API Gateway's authorizer gave (IAM ARN or JWT ``sub``).
        deps: needs ``policy``, ``jobs``, ``clock``, ``audit`` and ``queue``; with
            ``capacity``, a job needing more instances than the service environment
            has is refused (read only after the caller is authorized).

    Returns:
        The :class:`ReceiveOutcome`; a refused submission is stored ``REFUSED`` with
        its reasons and recorded in the audit log. A retry of a stored submission (same
        ``clientRequestId`` and principal) returns the stored record
        (``created=False``), see :func:`_received_again`.

        The policy's answer to the request is part of the stored record, so the same
        request is checked again only against what it asked for
        (:func:`first_difference`), never against a changed policy.

    Raises:
        NotATeamMemberError: the principal may not submit for the team (nothing stored;
            audited ``SubmissionForbidden``).
        IdempotencyMismatchError: the ``clientRequestId`` belongs to a stored submission
            of a different request (nothing stored, nothing queued).
        SubmissionUnavailableError: the queue refused the message (``submission_id``
            set); the record is then ``FAILED`` with that reason and ``failureKind``
            :attr:`~quotagov.governance.model.job.FailureKind.ENQUEUE_REFUSED`, so
            nothing is left half done and a retry of the same submission can queue it.
    """
    source = "api"
    submission_id = submission_id_for(principal, request.clientRequestId)
    try:
        authorize(deps.policy, request.team, principal)
        environment = deps.capacity.of(deps.governed_queue) if deps.capacity else None
        decision = route(deps.policy, RoutingInput.from_request(request, principal), environment)
    except NotATeamMemberError:
        details = {"team": request.team, "source": source}
        audit_decision(deps, "SubmissionForbidden", principal, submission_id, details)
        raise
    now = int(deps.clock.now())
    record = _record_for(request, principal, submission_id, now, source, decision)
    if record.state is SubmissionState.QUEUED:  # what the worker will act on: proven
        record = record.model_copy(update={"routedUnder": policy_fingerprint(deps.policy)})
        record = with_proof(record, deps.proofs, deps.sender())
    try:
        stored = deps.jobs.create_if_absent(record)
    except JobRecordExistsError:
        existing = deps.jobs.get(submission_id)
        if existing is None:  # pragma: no cover - created and vanished: storage fault
            raise
        differs = first_difference(existing, record)
        if differs is not None and request.clientRequestId:
            raise IdempotencyMismatchError(
                request.clientRequestId, differs, submission_id
            ) from None
        return _received_again(existing, deps, now)
    if stored.state is SubmissionState.REFUSED:
        _tell_refusal(stored, deps, principal, source)
        return ReceiveOutcome(stored, reasons=list(stored.reasons))
    return ReceiveOutcome(_enqueue(stored, deps))


#: Record attributes that come from the request body, in body order, with their body name.
REQUEST_FIELDS: tuple[tuple[str, str], ...] = (
    ("team", "team"),
    ("workloadClass", "workloadClass"),
    ("priorityLevel", "priorityLevel"),
    ("jobName", "jobName"),
    ("requestedQuotaShareName", "quotaShareName"),
    ("checkpointIntervalSeconds", "checkpointIntervalSeconds"),
    ("serviceRequestPayload", "serviceRequestPayload"),
    ("retryStrategy", "retryStrategy"),
    ("timeoutConfig", "timeoutConfig"),
    ("tags", "tags"),
)


def first_difference(stored: JobRecord, new: JobRecord) -> str | None:
    """The first request member in which ``new`` differs from ``stored``, as a body path.

    Returns:
        ``None`` when both records come from the same request; else e.g. ``team`` or
        ``serviceRequestPayload.ResourceConfig.InstanceCount`` (the payloads are compared
        member by member, in the new request's order).
    """
    for attribute, name in REQUEST_FIELDS:
        old_value, new_value = getattr(stored, attribute, None), getattr(new, attribute, None)
        if attribute == "serviceRequestPayload":
            path = _payload_difference(old_value, new_value)
            if path is not None:
                return f"{name}.{path}" if path else name
        elif old_value != new_value:
            return name
    return None


def _payload_difference(old: object, new: object) -> str | None:
    try:
        old_doc = json.loads(old) if isinstance(old, str) else old
        new_doc = json.loads(new) if isinstance(new, str) else new
    except ValueError:
        return "" if old != new else None
    return _json_difference(old_doc, new_doc, "")


def _json_difference(old: object, new: object, path: str) -> str | None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*new, *(k for k in old if k not in new)]:
            if key not in old or key not in new:
                return f"{path}.{key}" if path else str(key)
            found = _json_difference(old[key], new[key], f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            found = _json_difference(a, b, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    same = type(old) is type(new) and old == new
    return None if same else path


def _tell_refusal(stored: JobRecord, deps: SubmissionDeps, principal: str, source: str) -> None:
    """Audit ``SubmissionRefused`` and tell the owner, for a ``REFUSED`` record. Both are
    idempotent (the audit's decision id ``SubmissionRefused#<id>``, the notification
    log's ``refused`` event key), so a repeat tells nothing twice."""
    refused = {"team": stored.team, "reasons": stored.reasons, "source": source}
    audit_decision(deps, "SubmissionRefused", principal, stored.pk, refused)
    if deps.notifier is not None:
        deps.notifier.notify(
            stored, refused_event(stored, at=deps.clock.now(), reasons=stored.reasons)
        )


def _received_again(existing: JobRecord, deps: SubmissionDeps, now: int) -> ReceiveOutcome:
    """A retry of stored submission ``existing``: the stored request is used, not the
    retry's body (``now``: epoch seconds).

    If the stored record is ``FAILED`` only because the queue refused it
    (:func:`~quotagov.governance.submission.deps.is_enqueue_failure`), it moves back to
    ``QUEUED`` first (conditional on its version); a ``QUEUED`` record is queued again
    (a crash between store and send). A ``REFUSED`` record's refusal is audited and told
    again (both idempotent, nothing is doubled): the first try may have stored it and
    lost DynamoDB's answer, and botocore's re-sent put then met the stored record, so the
    owner may never have been told.
    """
    if existing.state is SubmissionState.REFUSED and existing.principal:
        _tell_refusal(existing, deps, existing.principal, existing.source)
    if is_enqueue_failure(existing):
        existing = _requeue(existing, deps)  # a retry after the queue refused it
    if existing.state is SubmissionState.QUEUED:
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
            record is now ``FAILED`` with ``failureKind`` ``enqueue-refused`` (unless it had already
            moved on, see below).
    """
    if deps.queue is None:
        raise RuntimeError("receive_submission: no submission queue to send to")
    try:
        deps.queue.send(record.pk)
    except SubmissionQueueError as exc:
        reason = f"submission queue: the submission could not be queued ({exc}); submit again"
        try:
            deps.jobs.update_if_expected(
                record.pk,
                {
                    "state": SubmissionState.FAILED,
                    "reasons": [reason],
                    **failure_changes(FailureKind.ENQUEUE_REFUSED),
                },
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
        return deps.jobs.update_if_expected(
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
        return deps.jobs.update_if_expected(
            record.pk,
            {"state": SubmissionState.QUEUED, "reasons": [], **failure_changes(None)},
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
    claimed_principal: str = "",
    fields: Mapping[str, str] | None = None,
) -> JobRecord:
    """Store and audit a queue message that is not a reference to a stored submission.

    The submit worker submits only what the API stored; any other message (a whole
    submission sent straight to the queue, a reference to no record, a malformed body)
    is stored ``REFUSED`` with ``reasons`` and audited ``SubmissionRefused``. The
    record has no ``principal``: a message attribute proves nothing about the sender,
    so what it claims is kept as ``claimedPrincipal`` only. The record id is
    deterministic in ``message_id``, so a redelivery stores nothing new.

    Returns:
        The stored record (the earlier one on a redelivery).
    """
    submission_id = submission_id_for("", None, message_id)
    now = int(deps.clock.now())
    known = dict(fields or {})
    record = JobRecord(
        pk=submission_id,
        state=SubmissionState.REFUSED,
        team=known.get("team", ""),
        workloadClass=known.get("workloadClass", ""),
        priorityLevel=known.get("priorityLevel", ""),
        jobName=known.get("jobName", ""),
        principal="",
        reasons=list(reasons),
        createdAt=now,
        updatedAt=now,
        source="sqs",
        messageId=message_id,
        claimedPrincipal=claimed_principal,
    )
    try:
        stored = deps.jobs.create_if_absent(record)
    except JobRecordExistsError:
        existing = deps.jobs.get(submission_id)
        if existing is None:  # pragma: no cover - storage fault
            raise
        return existing
    audit_decision(
        deps,
        "SubmissionRefused",
        QUOTAGOV_ACTOR,
        submission_id,
        {
            "team": record.team,
            "reasons": list(reasons),
            "source": "sqs",
            "messageId": message_id,
            "claimedPrincipal": claimed_principal,
        },
    )
    return stored
