"""``ApplyDecisionsFunction``: acts on the decisions other functions recorded.

The only function whose role may call ``batch:UpdateServiceJob`` (``docs/design.md``,
"Trust model"): the internet-facing Slack function verifies a click and records the
decision with its conditional write, then hands it over on the SQS ``ApplyQueue`` (only the
Slack and escalation API functions' roles may send there; the queue policy says so).
Triggers:

* **SQS** ``ApplyQueue`` (partial batch responses), one hand-off per message
  (:mod:`quotagov.governance.apply_messages`):

  - ``escalation``: :meth:`Escalations.settle`: an APPROVED escalation is applied
    (``DescribeServiceJob``, then ``UpdateServiceJob`` unless Batch already has the
    priority: APPLIED, SUPERSEDED or APPLY_FAILED), a DENIED one frees its job; the
    Slack message then shows the outcome.
  - ``disposition``: :func:`settle_disposition`: the successor of an ``applying``
    disposition is submitted and the question message replaced by the decision.

  ``escalation`` and ``disposition`` messages go through Powertools Idempotency (key:
  kind, id and, for escalations, the decision round), so a message SQS delivers
  twice, even concurrently, is acted on once; the steps themselves are conditional
  writes on the record's status too. A message that can never be used (not JSON,
  unknown kind, no id) is logged and dropped (metric ``HandoffsDropped``, alarmed by
  ``HandoffsDroppedAlarm``); a Batch or DynamoDB failure is
  reported in ``batchItemFailures`` and retried, then reaches the DLQ after
  ``maxReceiveCount``.

* **SQS** ``OwnerNoticeQueue`` (partial batch responses; only the submit worker's and
  the reconciler's roles may send there), which hold no Slack secret:

  - ``submission-failed``: the record is read and, if it is ``FAILED``, its owner
    gets the DM (:func:`~quotagov.governance.submission.failure.tell_owner_of_failure`,
    once per failure through the notification log). Counted as ``OwnerNotices`` by
    ``kind`` and ``outcome``.

  Each queue's records may carry only that queue's kinds (the record's
  ``eventSourceARN`` against ``OWNER_NOTICE_QUEUE_URL``): a notice on the
  ``ApplyQueue``, or a decision on the ``OwnerNoticeQueue``, is
  dropped like any unusable message.

* **Schedule** (every 5 minutes, an EventBridge ``Scheduled Event``): APPLY_FAILED
  escalations with attempts left are retried and stale APPROVED claims taken over
  (:meth:`Escalations.retry_failed`); owner DMs whose Slack post failed are posted
  again (:meth:`~quotagov.governance.notifications.owner.OwnerNotifier.retry_failed`,
  metric ``OwnerNoticesRetried`` by ``outcome``), and one that failed every try is
  parked (metric ``OwnerNoticesParked``, alarmed by ``OwnerNoticesParkedAlarm``).

Environment: :class:`quotagov.composition.ApplyDecisions` (checked against the template);
never ``APPLY_QUEUE_URL`` (it would hand decisions to itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from quotagov.composition import ApplyDecisions, current
from quotagov.governance.apply_messages import (
    APPLY_KINDS,
    ESCALATION,
    NOTICE_KINDS,
    SUBMISSION_FAILED,
    HandoffMessageError,
    parse_message,
)
from quotagov.handlers.idempotency import idempotency_config as shared_idempotency_config
from quotagov.handlers.metrics import emit
from quotagov.handlers.sqs_batches import process_batch, queue_arn_matches_url
from quotagov.handlers.tracing import capture_lambda_handler

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

logger = Logger()
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


#: Idempotency: key = ``<kind>:<record id>`` (plus ``:<decision round>`` for an
#: escalation approved again after a changed preview); a day covers SQS redelivery.
def idempotency_config() -> IdempotencyConfig:
    """The hand-offs' Powertools ``IdempotencyConfig`` (one per process)."""
    return shared_idempotency_config("key")


_idempotent_settle: dict[int, Callable[..., dict[str, Any]]] = {}


def _settle(work: dict[str, Any]) -> dict[str, Any]:
    """Act on one escalation or disposition hand-off; the result is what Idempotency keeps.

    Returns:
        ``{"kind", "recordId", "status"}``; ``status`` is None for an unknown record.
    """
    from quotagov.governance.dispositions import settle_disposition

    built = current(ApplyDecisions)
    if work["kind"] == ESCALATION:
        escalation = built.escalations.settle(work["recordId"])
        status = escalation.status.value if escalation is not None else None
    else:
        outcome = settle_disposition(work["recordId"], built.dispositions)
        status = str(outcome.status) if outcome is not None else None
    return {"kind": work["kind"], "recordId": work["recordId"], "status": status}


def _settle_once(kind: str, record_id: str, round_: str = "") -> dict[str, Any]:
    """:func:`_settle` behind Powertools Idempotency (persistence from wiring)."""
    store = current(ApplyDecisions).decision_idempotency
    settle = _idempotent_settle.get(id(store))
    if settle is None:
        from aws_lambda_powertools.utilities.idempotency import idempotent_function

        settle = idempotent_function(
            data_keyword_argument="work", persistence_store=store, config=idempotency_config()
        )(_settle)
        _idempotent_settle.clear()
        _idempotent_settle[id(store)] = settle
    key = f"{kind}:{record_id}:{round_}" if round_ else f"{kind}:{record_id}"
    return settle(work={"key": key, "kind": kind, "recordId": record_id})


def record_handler(record: SQSRecord) -> dict[str, Any]:
    """Process one hand-off; raises for transient failures (reported for retry).

    Returns:
        ``{"kind", "recordId", "status"}``, or ``{"dropped": reason}`` for a message
        that can never be used (or is not of its queue's kinds).

    Raises:
        RefusedMessageError: no valid proof of its sender (audited; SQS parks it).
    """
    from quotagov.governance.provenance import APPLY_QUEUE, NOTICE_QUEUE
    from quotagov.handlers.sealed_messages import open_record

    notices_url = current(ApplyDecisions).settings.owner_notice_queue_url
    from_notices = queue_arn_matches_url(record.event_source_arn or "", notices_url)
    # an unsealed or forged message raises RefusedMessageError: audited, then parked
    opened = open_record(
        record, NOTICE_QUEUE if from_notices else APPLY_QUEUE, current(ApplyDecisions)
    )
    body = record.body if opened is None else opened.body
    try:
        message = parse_message(json.loads(body), NOTICE_KINDS if from_notices else APPLY_KINDS)
    except (ValueError, RecursionError, HandoffMessageError) as error:
        logger.warning(
            "dropped an unusable hand-off",
            extra={"messageId": record.message_id, "error": str(error)},
        )
        emit("HandoffsDropped", MetricUnit.Count, 1)
        return {"dropped": str(error)}
    if message.kind == SUBMISSION_FAILED:
        return _tell_owner(message.record_id)
    try:
        result = _settle_once(message.kind, message.record_id, message.round)
    except Exception:
        logger.exception(
            "could not settle a decision; SQS delivers it again",
            extra={"messageId": record.message_id, "kind": message.kind, "id": message.record_id},
        )
        raise
    logger.info("settled a decision", extra=result)
    emit(
        "DecisionsSettled",
        MetricUnit.Count,
        1,
        kind=message.kind,
        status=str(result.get("status") or "unknown"),
    )
    return result


def _tell_owner(submission_id: str) -> dict[str, Any]:
    """The owner DM of a failed submission (once per failure, from the stored record)."""
    from quotagov.governance.submission.failure import tell_owner_of_failure

    built = current(ApplyDecisions)
    outcome = tell_owner_of_failure(submission_id, jobs=built.jobs, notifier=built.owner_notifier)
    logger.info(
        "owner notice handled", extra={"submissionId": submission_id, "outcome": str(outcome)}
    )
    emit("OwnerNotices", MetricUnit.Count, 1, kind=SUBMISSION_FAILED, outcome=str(outcome))
    return {"kind": SUBMISSION_FAILED, "recordId": submission_id, "status": str(outcome)}


def _retry_owner_notices() -> dict[str, str]:
    """Post again the owner DMs whose delivery failed; ``{"<id>|<event key>": outcome}``.

    A log that cannot be read is logged and left to the next tick (the escalation
    retries above are kept either way)."""
    try:
        handled = current(ApplyDecisions).owner_notifier.retry_failed()
    except Exception:
        logger.exception("could not retry failed owner notices; the next tick tries again")
        return {}
    for entry in handled:
        emit("OwnerNoticesRetried", MetricUnit.Count, 1, outcome=entry.delivery)
        if entry.delivery == "parked":
            emit("OwnerNoticesParked", MetricUnit.Count, 1)
    return {f"{e.submission_id}|{e.event_key}": e.delivery for e in handled}


def _is_schedule(event: Any) -> bool:
    return (
        isinstance(event, dict)
        and event.get("source") == "aws.events"
        and event.get("detail-type") == "Scheduled Event"
    )


@logger.inject_lambda_context
@capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point: an SQS batch of hand-offs, or the 5-minute retry schedule.

    Returns:
        ``{"batchItemFailures": [...]}`` for SQS; ``{"retried": {id: status},
        "ownerNotices": {key: delivery}}`` for the schedule; for any other event (a
        schedule event whose ``detail-type`` was edited, no ``Records`` list)
        ``{"batchItemFailures": []}``, logged
        (:func:`quotagov.handlers.sqs_batches.process_batch`), never an exception.
    """
    current(ApplyDecisions)  # cold start: a missing setting fails here, before any work
    if _is_schedule(event):
        retried = current(ApplyDecisions).escalations.retry_failed()
        result = {"retried": {e.escalation_id: e.status.value for e in retried}}
        for escalation in retried:
            emit(
                "EscalationsRetried",
                MetricUnit.Count,
                1,
                team=escalation.team,
                quotaShareName=escalation.quota_share_name,
                status=escalation.status.value,
            )
        logger.info("retried failed escalations", extra=result)
        result["ownerNotices"] = _retry_owner_notices()
        return result
    idempotency_config().register_lambda_context(context)
    return process_batch(event, record_handler, processor, context)
