"""Opening the sealed messages an SQS consumer receives (the apply function, the submit
worker): rules in :mod:`quotagov.governance.provenance`.

A message without valid proof of its sender is refused: logged, recorded in the audit
log as an ``UNAUTHENTICATED_INPUT`` finding (once per message id; the audit writer
counts each refusal it receives as ``UnauthenticatedMessages``, alarmed by
``UnauthenticatedMessagesAlarm``) and
reported as a batch item failure, so SQS keeps it and parks it in the queue's DLQ after
``maxReceiveCount`` receives, where ``quotagov redrive`` or an operator can inspect it.
The audit writer itself refuses its own queue's messages the same way, writing the
finding directly (:mod:`quotagov.handlers.audit_trail`).
"""

from __future__ import annotations

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from quotagov.governance.provenance import (
    Opened,
    UnauthenticatedError,
    claimed_sender,
    open_message,
    refusal,
)
from quotagov.wiring import Services

logger = Logger(child=True)


class RefusedMessageError(Exception):
    """The message was refused (no valid proof); it fails so that SQS parks it."""


def open_record(record: SQSRecord, purpose: str, deps: Services) -> Opened | None:
    """The verified message of ``record`` (one KMS ``VerifyMac``); None when this
    function has no message key (tests without KMS: the body is then read as is).

    Raises:
        RefusedMessageError: no valid proof (the refusal is audited first).
        AuditQueueError: the refusal could not be queued for the audit (retried).
        botocore.exceptions.ClientError: KMS could not be asked (retried).
    """
    current = deps
    mac = current.message_mac
    if mac is None:
        return None
    try:
        return open_message(mac, purpose, record.body)
    except UnauthenticatedError as exc:
        reason = str(exc)
    logger.error(
        "unauthenticated message refused",
        extra={"messageId": record.message_id, "purpose": purpose, "reason": reason},
    )
    current.audit.record_decision(
        refusal(
            job_queue=current.settings.job_queue,
            where=record.event_source_arn or purpose,
            item_id=record.message_id,
            reason=reason,
            text=record.body,
            claimed=claimed_sender(record.body),
        )
    )
    raise RefusedMessageError(reason)
