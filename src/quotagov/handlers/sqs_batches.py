"""SQS batches for the queue consumers, including the shapes Powertools refuses.

Lambda never invokes an SQS event source mapping with an empty batch, but an operator's
test event, ``sam local invoke`` or a replay tool can (``{"Records": []}``); Powertools'
``process_partial_response`` raises ``UnexpectedBatchTypeError`` on it. An empty batch
has nothing to fail, so :func:`process_batch` answers it with no failures. A record that
is not an SQS message (not an object, no ``messageId``) cannot be reported back to SQS
by id either; it is logged and left out, and the rest of the batch is processed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

if TYPE_CHECKING:  # Powertools' batch utility is imported on the first batch (cold start)
    from aws_lambda_powertools.utilities.batch import BatchProcessor

logger = Logger(child=True)


def is_sqs_batch(event: Any) -> bool:
    """True when ``event`` has the SQS batch shape (a ``Records`` list)."""
    return isinstance(event, dict) and isinstance(event.get("Records"), list)


def _usable(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("messageId"), str)
        and isinstance(record.get("body", ""), str)
        and isinstance(record.get("attributes", {}), dict)
        and isinstance(record.get("messageAttributes", {}), dict)
    )


def process_batch(
    event: Any,
    record_handler: Callable[[Any], Any],
    processor: BatchProcessor,
    context: Any,
) -> dict[str, Any]:
    """Powertools partial-batch processing of ``event``, for every shape it can have.

    Returns:
        ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``; empty for an
        empty batch, for an event that is no batch at all (logged) and when every
        usable record succeeded.
    """
    if not is_sqs_batch(event):
        logger.warning(
            "not an SQS batch: nothing to process", extra={"eventType": type(event).__name__}
        )
        return {"batchItemFailures": []}
    records = [r for r in event["Records"] if _usable(r)]
    if len(records) != len(event["Records"]):
        logger.error(
            "records without a usable messageId left out",
            extra={"leftOut": len(event["Records"]) - len(records)},
        )
    if not records:
        return {"batchItemFailures": []}
    from aws_lambda_powertools.utilities.batch import process_partial_response

    batch = {**event, "Records": records}
    return dict(
        process_partial_response(
            event=batch, record_handler=record_handler, processor=processor, context=context
        )
    )


def queue_arn_matches_url(arn: str, url: str) -> bool:
    """True when the SQS ARN ``arn:aws:sqs:<region>:<account>:<name>`` (a record's
    ``eventSourceARN``) and the queue URL ``https://sqs.<region>.../<account>/<name>``
    (``!Ref`` of an ``AWS::SQS::Queue``) name the same queue: same account and name
    (a queue name is unique per account and Region). False when either is empty or
    malformed."""
    parts = arn.split(":")
    path = url.rstrip("/").rsplit("/", 2)
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sqs" or len(path) != 3:
        return False
    return bool(parts[5]) and (parts[4], parts[5]) == (path[1], path[2])
