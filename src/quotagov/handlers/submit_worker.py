"""``SubmitWorkerFunction``: the submission queue's consumer; calls ``SubmitServiceJob``.

Powertools batch processing (``BatchProcessor`` + ``process_partial_response``) reports
per-message outcomes to SQS (``ReportBatchItemFailures``):

* **submitted**, **refused** or **failed for good** (refused by the policy as it is
  now, Batch ``ClientException``): the record says so, with reasons; the message
  counts as processed, so it is deleted and never loops. A failed submission's owner
  is told by ``ApplyDecisionsFunction``, which holds the Slack secret this function
  does not: the worker sends ``{"kind": "submission-failed", "submissionId"}`` to the
  ``OwnerNoticeQueue`` (:mod:`quotagov.governance.submission.failure`). When that
  send (or the audit record's) fails, the message is retried and both are sent again
  (the owner is still told once).
* **refused message**: only ``{"submissionId"}`` references to a record the API wrote
  are submitted, with the principal, team and request of that record (never a message
  attribute). Anything else (a whole submission sent straight to the queue, a
  reference to no record, a malformed body) is stored ``REFUSED`` under an id derived
  from the message id, with the sender's claimed principal kept as
  ``claimedPrincipal`` only, audited ``SubmissionRefused`` and never submitted.
  Each such message is logged with its ``messageId`` and counted in the
  ``SubmissionsFailed`` / ``SubmissionsRefused`` metrics. Every outcome also counts in
  ``SubmissionsByTeam`` by ``team``, ``quotaShareName`` and ``state``. Metrics are
  written through :func:`quotagov.handlers.metrics.emit` as they happen, so an empty
  batch writes none (and Powertools has no empty set to warn about).
* **transient** (Batch throttling or 5xx after the adapter's own retries, DynamoDB or
  policy unavailable, a concurrent duplicate in progress): reported in
  ``batchItemFailures``; SQS delivers it again after the visibility timeout and moves it
  to the DLQ after ``maxReceiveCount`` receives. After one throttled call the rest of the
  batch is not sent to Batch in this invocation (reported for retry at once).

Exactly once: Powertools Idempotency (``DynamoDBPersistenceLayer`` on
``IDEMPOTENCY_TABLE``) keyed on the submission id, the deterministic ``clientToken`` and
the conditional ``QUEUED -> SUBMITTED`` write (see
:func:`quotagov.governance.submission.submit_to_batch`).

Environment: ``JOBS_TABLE``, ``IDEMPOTENCY_TABLE``, ``POLICY_PARAMETER``, ``JOB_QUEUE``,
``AUDIT_QUEUE_URL``, ``OWNER_NOTICE_QUEUE_URL``, ``POWERTOOLS_SERVICE_NAME``,
``POWERTOOLS_METRICS_NAMESPACE``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from quotagov.composition import SubmitWorker, current
from quotagov.handlers.idempotency import idempotency_config as shared_idempotency_config
from quotagov.handlers.metrics import emit
from quotagov.handlers.sqs_batches import process_batch

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    from quotagov.governance.model.job import JobRecord
    from quotagov.handlers.submission_messages import ParsedMessage

# The use cases (and Powertools Idempotency, whose DynamoDB layer imports boto3) are
# imported where they are used, so that the function's cold start pays only for
# Powertools' logger, metrics and batch utilities (benchmarks/submit_path.py).

logger = Logger()
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def idempotency_config() -> IdempotencyConfig:
    """Idempotency: key = the submission id; a day covers the queue's redelivery window."""
    return shared_idempotency_config("submissionId")


class BatchBackoffError(Exception):
    """Batch throttled an earlier message of this invocation; retry this one later."""


class _Invocation:
    """Per-invocation state: whether Batch throttled us already."""

    throttled = False


_idempotent_submit: dict[int, Callable[..., dict[str, Any]]] = {}


class _NotFinalError(Exception):
    """The outcome may still change: return it, but Idempotency must not keep it.

    Raised for a record that is ``FAILED`` only because the API saw its queue send fail
    (a stale message that did reach the queue): a retry of the submission moves it back
    to ``QUEUED`` and sends a new message, which must then be submitted, not answered
    from a cached ``FAILED``. Powertools Idempotency deletes its record when the
    function raises.

    Attributes:
        outcome: the result dict of :func:`_submit`.
    """

    def __init__(self, outcome: dict[str, Any]) -> None:
        super().__init__(outcome["submissionId"])
        self.outcome = outcome


def _submit(work: dict[str, Any]) -> dict[str, Any]:
    """Send one stored submission to Batch; the result is what Idempotency keeps.

    Returns:
        ``{"submissionId", "state", "batchJobId", "reasons", "team", "quotaShareName"}``
        of the record after.

    Raises:
        _NotFinalError: the record is enqueue-failed (nothing done, nothing to keep).
        TransientSubmitError, LookupError: see ``submit_to_batch``.
    """
    from quotagov.governance.submission import is_enqueue_failure, submit_to_batch

    record = submit_to_batch(
        work["submissionId"], current(SubmitWorker).submission, recheck=bool(work.get("recheck"))
    )
    outcome = {
        "submissionId": record.pk,
        "state": str(record.state),
        "batchJobId": record.batchJobId,
        "reasons": list(record.reasons),
        "team": record.team,
        "quotaShareName": record.quotaShareName,
    }
    if is_enqueue_failure(record):
        raise _NotFinalError(outcome)
    return outcome


def _submit_once(submission_id: str, recheck: bool) -> dict[str, Any]:
    """:func:`_submit` behind Powertools Idempotency (persistence from wiring)."""
    from aws_lambda_powertools.utilities.idempotency import idempotent_function

    store = current(SubmitWorker).idempotency
    submit = _idempotent_submit.get(id(store))
    if submit is None:
        submit = idempotent_function(
            data_keyword_argument="work", persistence_store=store, config=idempotency_config()
        )(_submit)
        _idempotent_submit.clear()
        _idempotent_submit[id(store)] = submit
    try:
        return submit(work={"submissionId": submission_id, "recheck": recheck})
    except _NotFinalError as exc:
        return exc.outcome


def record_handler(record: SQSRecord) -> dict[str, Any]:
    """Process one message; raises for transient failures (reported for retry).

    Returns:
        ``{"submissionId", "state"}`` of the record after (``SUBMITTED``, ``FAILED``,
        ``REFUSED``, ...).

    Raises:
        RefusedMessageError: the message has no valid proof of its sender (audited;
            SQS parks it after its receives).
        BatchBackoffError: Batch throttled an earlier message of this invocation.
        TransientSubmitError: Batch throttled or failed on this one.
    """
    from quotagov.governance.provenance import SUBMISSION_QUEUE
    from quotagov.handlers.sealed_messages import open_record
    from quotagov.handlers.submission_messages import parse_message

    # RefusedMessageError: parked
    opened = open_record(record, SUBMISSION_QUEUE, current(SubmitWorker))
    body = record.body if opened is None else opened.body
    message = parse_message(body, record.raw_event.get("messageAttributes") or {})
    if message.submission_id is None:
        return _refuse(record, message, message.faults)
    return _send(record, message)


def _refuse(record: SQSRecord, message: ParsedMessage, reasons: list[str]) -> dict[str, Any]:
    """Store and audit a message that is not a reference to a stored submission."""
    from quotagov.governance.submission import record_unusable_message

    stored = record_unusable_message(
        record.message_id,
        reasons,
        current(SubmitWorker).submission,
        claimed_principal=message.claimed_principal,
        fields=message.fields,
    )
    return _outcome(record, stored.pk, str(stored.state), stored.reasons, stored)


def _send(record: SQSRecord, message: ParsedMessage) -> dict[str, Any]:
    """Submit the referenced stored submission to Batch once (unless Batch throttled
    this invocation); a reference to no stored submission is refused."""
    from quotagov.governance.ports import BatchThrottledError
    from quotagov.governance.submission import TransientSubmitError

    submission_id = message.submission_id
    assert submission_id is not None

    if _Invocation.throttled:
        emit("SubmissionsDeferred", MetricUnit.Count, 1)
        raise BatchBackoffError(f"submission {submission_id}: Batch throttled this batch")
    recheck = int(record.attributes.approximate_receive_count or "1") > 1
    try:
        result = _submit_once(submission_id, recheck)
    except LookupError:
        # Only the API queues references, after storing the record: a reference to
        # no record was sent by someone else (or the record was removed).
        reason = f"submissionId: no stored submission {submission_id}; nothing was submitted"
        return _refuse(record, message, [reason])
    except TransientSubmitError as exc:
        if isinstance(exc.cause, BatchThrottledError):
            _Invocation.throttled = True
        emit("SubmissionsRetried", MetricUnit.Count, 1)
        logger.warning("transient failure, will retry", extra={"messageId": record.message_id})
        raise
    return _outcome(
        record,
        submission_id,
        result["state"],
        result["reasons"],
        # results kept by Idempotency before these keys existed have neither
        team=result.get("team"),
        share=result.get("quotaShareName"),
    )


def _outcome(
    record: SQSRecord,
    submission_id: str,
    state: str,
    reasons: list[str],
    stored: JobRecord | None = None,
    *,
    team: str | None = None,
    share: str | None = None,
) -> dict[str, Any]:
    """Count and log one message's outcome; ``SubmissionsByTeam`` carries the record's
    ``team``, ``quotaShareName`` and ``state`` (from ``stored``, else ``team``/``share``)."""
    if stored is not None:
        team, share = stored.team, stored.quotaShareName
    emit("SubmissionsByTeam", MetricUnit.Count, 1, team=team, quotaShareName=share, state=state)
    name = {
        "SUBMITTED": "SubmissionsSubmitted",
        "FAILED": "SubmissionsFailed",
        "REFUSED": "SubmissionsRefused",
    }.get(state, "SubmissionsPending")
    emit(name, MetricUnit.Count, 1)
    if state in ("FAILED", "REFUSED"):
        logger.warning(
            "submission not sent to Batch",
            extra={
                "messageId": record.message_id,
                "submissionId": submission_id,
                "state": state,
                "reasons": reasons,
            },
        )
    return {"submissionId": submission_id, "state": state}


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Lambda entry point: process an SQS batch, return ``{"batchItemFailures": [...]}``.

    An empty batch (or no batch) returns no failures (:mod:`quotagov.handlers.sqs_batches`).
    """
    current(SubmitWorker)  # cold start: a missing setting fails here, before any work
    idempotency_config().register_lambda_context(context)
    _Invocation.throttled = False
    return process_batch(event, record_handler, processor, context)
