"""``quotagov redrive``: replay what is parked, safely (idempotent, audited).

Two queues hold work that nothing processes again by itself (template ``Outputs``):

``submissions-dlq`` (``SubmissionDeadLetterQueue``)
    Submission-queue messages the worker failed 5 times. Each is resolved to its
    submission (``{"submissionId"}``, or the id a direct submission got: see
    :func:`~quotagov.governance.submission.submission_id_for`):

    - the record is ``QUEUED``: its id is sent to the submission queue again and the
      re-queue is counted on the record (``requeueCount``), so the worker first looks
      for a service job an earlier try may have made (``recheck``): never a second job;
    - the record is ``SUBMITTED``, ``FAILED`` or ``REFUSED``: nothing to replay
      (``settled``);
    - a reference to no record, or a direct submission that was never stored: sent
      back unchanged, the worker records why it cannot be used (``resent``) - except a
      direct submission, which is ``refused`` and left parked: its ``principal``
      attribute cannot be trusted out of a queue anyone with ``sqs:SendMessage`` may
      have written to (resubmit it through ``POST /jobs``).

``failed-events`` (``FailedEventsQueue``)
    Lambda's ``OnFailure`` records of asynchronous invocations (EventBridge events the
    JobState and Audit functions failed on after their retries): ``requestContext.
    functionArn`` and ``requestPayload``. The payload is invoked again, synchronously,
    on that function, but only when the function is one of the stack's
    (``RedriveDeps.functions``) and the payload is an EventBridge event; otherwise the
    message is ``refused`` and left parked. A replay that fails again is ``failed`` and
    stays parked. Replays are idempotent because the functions are: job-state events
    fold once per event id, audit records once per CloudTrail ``eventID``.

Every handled message is recorded as one audit decision (``MessageRedriven``, decision
id ``MessageRedriven#<queue>#<messageId>``) and only then deleted, and only when its
replay succeeded; a run interrupted between the two leaves the message parked, and the
next run's replay is idempotent and records nothing twice.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from quotagov.clock import Clock
from quotagov.governance.model.job import SubmissionState
from quotagov.governance.ports import (
    AuditSink,
    ControllerDecision,
    JobRecordConflictError,
    JobRecordNotFoundError,
    JobsRepository,
    SubmissionQueue,
    SubmissionQueueError,
)
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.ports.parked import (
    FunctionInvoker,
    InvocationFailedError,
    ParkedMessage,
    ParkedQueue,
    ParkedQueueError,
)
from quotagov.governance.submission.receive import submission_id_for


class ParkedKind(StrEnum):
    """Which parked queue (``--queue``)."""

    FAILED_EVENTS = "failed-events"
    SUBMISSIONS_DLQ = "submissions-dlq"


class Outcome(StrEnum):
    """What happened to one parked message.

    ``replayed``, ``requeued``, ``resent`` and ``settled`` remove the message from the
    parked queue; ``refused``, ``failed`` and ``listed`` (a dry run) leave it there.
    """

    REPLAYED = "replayed"
    REQUEUED = "requeued"
    RESENT = "resent"
    SETTLED = "settled"
    REFUSED = "refused"
    FAILED = "failed"
    LISTED = "listed"


_REMOVED = frozenset({Outcome.REPLAYED, Outcome.REQUEUED, Outcome.RESENT, Outcome.SETTLED})


@dataclass(frozen=True)
class RedriveResult:
    """One parked message and its outcome.

    Attributes:
        message_id: the SQS message id.
        outcome: see :class:`Outcome`.
        subject: the submission id or the function ARN it concerns ("" when unknown).
        detail: why, in words.
    """

    message_id: str
    outcome: Outcome
    subject: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        """``{"messageId", "outcome", "subject", "detail"}``."""
        return {
            "messageId": self.message_id,
            "outcome": str(self.outcome),
            "subject": self.subject,
            "detail": self.detail,
        }


@dataclass
class RedriveDeps:
    """What :func:`redrive` uses.

    Attributes:
        parked: the parked queue to read.
        audit: where each handled message is recorded.
        clock: epoch seconds.
        job_queue: the governed job queue (the audit chain's name).
        jobs, queue: the job records and the submission queue (``submissions-dlq``).
        invoker, functions: how to invoke a function and the ARNs (unqualified) of the
            stack's functions, the only ones replayed to (``failed-events``).
    """

    parked: ParkedQueue
    audit: AuditSink
    clock: Clock
    job_queue: str
    jobs: JobsRepository | None = None
    queue: SubmissionQueue | None = None
    invoker: FunctionInvoker | None = None
    functions: frozenset[str] = field(default_factory=frozenset)


def redrive(
    kind: ParkedKind, deps: RedriveDeps, *, max_messages: int = 100, dry_run: bool = False
) -> list[RedriveResult]:
    """Replay up to ``max_messages`` (>= 1) parked messages of ``kind``; returns each outcome.

    ``dry_run`` receives the messages and says what each is, changing nothing (each
    stays parked; SQS hides it from other readers for the queue's visibility timeout).

    Raises:
        ValueError: ``max_messages`` < 1, or ``deps`` lacks what ``kind`` needs.
        ParkedQueueError: the parked queue cannot be read.
    """
    if max_messages < 1:
        raise ValueError(f"max_messages: {max_messages} is not >= 1")
    if kind is ParkedKind.SUBMISSIONS_DLQ and (deps.jobs is None or deps.queue is None):
        raise ValueError("submissions-dlq: needs the job records and the submission queue")
    if kind is ParkedKind.FAILED_EVENTS and deps.invoker is None:
        raise ValueError("failed-events: needs a function invoker")
    results: list[RedriveResult] = []
    seen: set[str] = set()  # released messages come straight back: stop at the first seen
    while len(results) < max_messages:
        batch = deps.parked.receive(min(10, max_messages - len(results)))
        fresh = [m for m in batch if m.message_id not in seen]
        for again in (m for m in batch if m.message_id in seen):
            _release(deps.parked, again)
        if not fresh:
            break
        for message in fresh:
            seen.add(message.message_id)
            results.append(_handle(kind, deps, message, dry_run))
    return results


def _handle(
    kind: ParkedKind, deps: RedriveDeps, message: ParkedMessage, dry_run: bool
) -> RedriveResult:
    if kind is ParkedKind.SUBMISSIONS_DLQ:
        result = _submission(deps, message, dry_run)
    else:
        result = _failed_event(deps, message, dry_run)
    if dry_run or result.outcome not in _REMOVED:
        _release(deps.parked, message)
    if dry_run:
        return result
    # Recorded before the delete: should the audit write fail, the message stays parked
    # and the next run replays it again (idempotent) and records it then.
    try:
        deps.audit.record_decision(
            ControllerDecision(
                action="MessageRedriven",
                actor=QUOTAGOV_ACTOR,
                job_queue=deps.job_queue,
                resource=result.subject or message.message_id,
                decision_id=f"MessageRedriven#{kind}#{message.message_id}",
                details={"queue": str(kind), **result.to_dict()},
            )
        )
    except BaseException:
        _release(deps.parked, message)  # visible at once for the next run
        raise
    if result.outcome in _REMOVED:
        try:
            deps.parked.delete(message)
        except ParkedQueueError as exc:
            # Replayed but still parked: the next run finds it settled (idempotent).
            result = RedriveResult(
                message.message_id,
                result.outcome,
                result.subject,
                f"{result.detail}; not deleted from the queue ({exc})",
            )
    return result


def _release(parked: ParkedQueue, message: ParkedMessage) -> None:
    """The message stays parked, visible to the next reader at once (best effort)."""
    with contextlib.suppress(ParkedQueueError):  # else visible after its timeout
        parked.release(message)


# ------------------------------------------------------------------ submissions-dlq


def _submission_of(message: ParkedMessage) -> tuple[str | None, bool]:
    """(submission id, whether the body is a whole direct submission)."""
    try:
        data = json.loads(message.body)
    except (ValueError, RecursionError):
        return None, False
    if not isinstance(data, dict):
        return None, False
    if set(data) == {"submissionId"}:
        sid = data["submissionId"]
        return (sid, False) if isinstance(sid, str) and sid else (None, False)
    principal = message.attributes.get("principal", "")
    request_id = data.get("clientRequestId")
    return (
        submission_id_for(
            principal, request_id if isinstance(request_id, str) else None, message.message_id
        ),
        True,
    )


def _submission(deps: RedriveDeps, message: ParkedMessage, dry_run: bool) -> RedriveResult:
    assert deps.jobs is not None and deps.queue is not None
    mid = message.message_id
    sid, direct = _submission_of(message)
    record = deps.jobs.get(sid) if sid else None
    if record is None:
        if direct:
            return RedriveResult(
                mid,
                Outcome.REFUSED,
                sid or "",
                "a direct submission that was never stored: its principal attribute cannot "
                "be trusted from a parked queue; resubmit it through POST /jobs",
            )
        if dry_run:
            return RedriveResult(mid, Outcome.LISTED, sid or "", "would be resent unchanged")
        try:
            deps.parked.resend(message)
        except ParkedQueueError as exc:
            return RedriveResult(mid, Outcome.FAILED, sid or "", f"resend failed: {exc}")
        return RedriveResult(
            mid, Outcome.RESENT, sid or "", "no stored submission: resent for the worker to record"
        )
    if record.state is not SubmissionState.QUEUED:
        return RedriveResult(
            mid,
            Outcome.LISTED if dry_run else Outcome.SETTLED,
            record.pk,
            f"already {record.state}: nothing to replay",
        )
    if dry_run:
        return RedriveResult(mid, Outcome.LISTED, record.pk, "QUEUED: would be queued again")
    try:
        deps.queue.send(record.pk)
    except SubmissionQueueError as exc:
        return RedriveResult(mid, Outcome.FAILED, record.pk, f"re-queue failed: {exc}")
    count = record.requeues + 1
    # A conflict: the worker moved it meanwhile; the new message finds it settled.
    with contextlib.suppress(JobRecordConflictError, JobRecordNotFoundError):
        deps.jobs.update_if_expected(
            record.pk,
            {"requeueCount": count, "requeuedAt": int(deps.clock.now())},
            expected_version=record.version,
            expected_states=[SubmissionState.QUEUED],
        )
    return RedriveResult(mid, Outcome.REQUEUED, record.pk, f"QUEUED: queued again (#{count})")


# ------------------------------------------------------------------ failed-events


def unqualified(function_arn: str) -> str:
    """``arn:aws:lambda:<region>:<account>:function:<name>`` without ``:$LATEST``/alias."""
    parts = function_arn.split(":")
    return ":".join(parts[:7]) if len(parts) >= 7 else function_arn


def _failed_event(deps: RedriveDeps, message: ParkedMessage, dry_run: bool) -> RedriveResult:
    assert deps.invoker is not None
    mid = message.message_id
    try:
        record = json.loads(message.body)
    except (ValueError, RecursionError):
        record = None
    context = record.get("requestContext") if isinstance(record, dict) else None
    arn = context.get("functionArn") if isinstance(context, dict) else None
    payload = record.get("requestPayload") if isinstance(record, dict) else None
    if not isinstance(arn, str) or not isinstance(payload, dict):
        return RedriveResult(
            mid,
            Outcome.REFUSED,
            "",
            "not a Lambda OnFailure record (requestContext.functionArn, requestPayload)",
        )
    function = unqualified(arn)
    if function not in deps.functions:
        return RedriveResult(
            mid, Outcome.REFUSED, function, "not a function of this stack: not invoked"
        )
    if not _is_eventbridge_event(payload):
        return RedriveResult(
            mid, Outcome.REFUSED, function, "requestPayload is not an EventBridge event"
        )
    if dry_run:
        kind = payload.get("detail-type")
        return RedriveResult(mid, Outcome.LISTED, function, f"would replay one {kind!r} event")
    try:
        deps.invoker.invoke(function, payload)
    except InvocationFailedError as exc:
        return RedriveResult(mid, Outcome.FAILED, function, f"failed again: {exc}")
    return RedriveResult(
        mid, Outcome.REPLAYED, function, f"replayed event {payload.get('id', '?')}"
    )


def _is_eventbridge_event(payload: Mapping[str, Any]) -> bool:
    return all(isinstance(payload.get(k), str) for k in ("id", "source", "detail-type")) and (
        isinstance(payload.get("detail"), dict)
    )
