"""``AuditFunction``, the one audit writer: CloudTrail-recorded Batch calls and the
other functions' decisions.

Two triggers (the audit has one writer, this function):

- an SQS batch from the audit queue (``Records``): each message is a decision record
  another function handed over (:mod:`quotagov.governance.audit.queued_decisions`), appended
  once per ``decisionId``; the batch's decisions are appended as one run per chain,
  sealed once (:mod:`quotagov.governance.audit.seals`); a message that fails is
  reported in ``batchItemFailures`` (Powertools ``BatchProcessor``) and comes back,
  reaching the DLQ after the queue's ``maxReceiveCount``; a malformed one fails the
  same way, so it is kept in the DLQ; a decision whose id is stored with other content
  is recorded as the finding ``DECISION_ID_CONFLICT`` (metric ``DecisionIdConflicts``,
  alarmed by ``DecisionIdConflictsAlarm``), never dropped as a repeat;
- one EventBridge ``AWS API Call via CloudTrail`` event from ``aws.batch``, as below;
- one change of the policy parameter: the CloudTrail record of ``PutParameter`` /
  ``DeleteParameter`` (source ``aws.ssm``) or a ``Parameter Store Change`` event, recorded
  by :class:`~quotagov.governance.audit.policy_parameter.PolicyParameterAudit` (rejected
  and retried as below);
- one EventBridge ``AWS API Call via CloudTrail`` event from ``aws.lambda``: a Lambda
  ``Invoke`` data event for one of the stack's functions (a trail logging Lambda data
  events). Invoked by a principal rather than by its trigger (an AWS service), it is
  recorded with the finding ``DIRECT_INVOCATION``, posted to the platform channel and
  counted (metric ``DirectInvocations``, alarmed by ``DirectInvocationsAlarm``);
  ``{"status": "trigger"}`` otherwise;
- the ``AuditRelease`` schedule (an EventBridge ``Scheduled Event``): the CloudTrail
  calls held for their settling window (``AUDIT_SETTLE_SECONDS``) whose window has
  passed are written in ``(eventTime, eventID)`` order
  (:meth:`~quotagov.governance.audit.trail.AuditTrail.release`; every CloudTrail event
  releases them too).

Every log line carries ``policyVersion`` (the SSM version of the policy this function
loaded, ``quotagov.policy.loading``), and the metrics ``PolicyVersion`` (the same number).

For CloudTrail events, thin: parse the event with Powertools Parser (EventBridge
envelope + the CloudTrail record model), hand the record to
:class:`~quotagov.governance.audit.trail.AuditTrail`, log and count the outcome.

- A malformed event or an unaudited call is answered ``{"status": "rejected",
  "reason": ...}`` (logged with the field at fault, metric ``AuditEventsRejected``,
  alarmed by ``AuditEventsRejectedAlarm``) and not retried: a retry cannot fix it.
  That includes a successful call whose request parameters have the wrong types
  (``reason`` e.g. ``detail: requestParameters.capacityLimits[0].maxCapacity: 'a' is
  not a whole number``; see
  :func:`~quotagov.governance.audit.cloudtrail_calls.request_parameter_fault`).
- Transient failures (DynamoDB, Batch throttling, chain contention) raise, so Lambda's
  asynchronous retries and the rule's retry policy deliver the event again; the
  CloudTrail ``eventID`` makes that harmless.

Dependencies (``quotagov.wiring.current(Audit)``): ``audit_chains``, ``audit_versions``,
``batch``, ``policy``, ``chat`` (optional), ``clock``; settings ``AUDIT_TABLE``,
``PLATFORM_CHANNEL``, ``CONTROLLER_PRINCIPALS``, ``AUDIT_SETTLE_SECONDS``.
"""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import ValidationError, parse
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext

from quotagov.composition import Audit, current
from quotagov.governance.audit.cloudtrail_calls import CloudTrailApiCall, LambdaInvokeCall
from quotagov.handlers.sqs_batches import is_sqs_batch, process_batch

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.batch import BatchProcessor
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

logger = Logger(service=os.getenv("POWERTOOLS_SERVICE_NAME", "quotagov"))
metrics = Metrics(namespace=os.getenv("POWERTOOLS_METRICS_NAMESPACE", "quotagov"))


@cache
def _processor() -> BatchProcessor:
    """The SQS batch processor, built on the first audit queue batch (not at import:
    the cold start of the other triggers does not pay for Powertools' batch utility)."""
    from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType

    return BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


class BatchApiCallEvent(EventBridgeModel):
    """EventBridge envelope whose ``detail`` is a CloudTrail record of a Batch call."""

    detail: CloudTrailApiCall


@cache
def _parameter_events() -> tuple[type[EventBridgeModel], type[EventBridgeModel]]:
    """The envelopes of a policy parameter change: the CloudTrail record of an SSM call,
    and the ``Parameter Store Change`` event. Built on the first such event, so the
    other triggers' cold start does not import the policy audit and its models."""
    from quotagov.governance.audit.policy_parameter import (
        ParameterApiCall,
        ParameterStoreChange,
    )

    class ParameterCallEvent(EventBridgeModel):
        detail: ParameterApiCall

    class ParameterStoreEvent(EventBridgeModel):
        detail: ParameterStoreChange

    return ParameterCallEvent, ParameterStoreEvent


class LambdaInvokeEvent(EventBridgeModel):
    """EventBridge envelope whose ``detail`` is a CloudTrail data event of a Lambda Invoke."""

    detail: LambdaInvokeCall


def _invocation(event: dict[str, Any]) -> dict[str, Any]:
    """Record a direct invocation of one of the stack's functions (see the module doc)."""
    from quotagov.governance.audit.errors import AuditEventError, ForeignCallError

    try:
        call = parse(event=event, model=LambdaInvokeEvent).detail
    except ValidationError as exc:
        return _reject(_fields(exc))
    try:
        result = current(Audit).audit_trail.record_invocation(call)
    except ForeignCallError as exc:
        return _foreign(exc)
    except AuditEventError as exc:
        return _reject(str(exc))
    if result is None or result.record is None:  # an invocation is never held
        return {"status": "trigger", "function": call.function_name}
    record = result.record
    status = "recorded" if result.created else "duplicate"
    logger.warning(
        "direct invocation %s",
        status,
        extra={"eventId": call.eventID, "function": call.function_name, "seq": int(record["seq"])},
    )
    if result.created:
        metrics.add_metric(name="AuditRecords", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="DirectInvocations", unit=MetricUnit.Count, value=1)
        if not result.alerted:
            metrics.add_metric(name="RiskAlertsNotPosted", unit=MetricUnit.Count, value=1)
    return _answer(status, record)


def _answer(status: str, record: dict[str, Any]) -> dict[str, Any]:
    """The handler's answer for a stored record: ``{status, chain, seq, kind,
    findings}`` (finding codes)."""
    return {
        "status": status,
        "chain": record["chain"],
        "seq": int(record["seq"]),
        "kind": record["kind"],
        "findings": [f["code"] for f in record["findings"]],
    }


def _foreign(exc: Exception) -> dict[str, Any]:
    """Log and count a CloudTrail record of another account or Region; it is dropped."""
    logger.warning("foreign CloudTrail record dropped", extra={"reason": str(exc)})
    metrics.add_metric(name="AuditForeignEvents", unit=MetricUnit.Count, value=1)
    return {"status": "foreign", "reason": str(exc)}


def _reject(reason: str) -> dict[str, Any]:
    logger.error("audit event rejected", extra={"reason": reason})
    metrics.add_metric(name="AuditEventsRejected", unit=MetricUnit.Count, value=1)
    return {"status": "rejected", "reason": reason}


def _fields(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
    )


def _decision_batch(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Append an audit queue batch: every well-formed message's decision, per chain in
    one sealed run (one KMS ``GenerateMac`` per batch, not per message).

    Malformed messages fail alone (Powertools ``BatchProcessor``); messages whose run
    could not be appended (chain contention, a head the writer cannot vouch for, a
    store error) fail too and come back.
    """
    from quotagov.governance.audit.decisions import QueuedEntry
    from quotagov.governance.audit.queued_decisions import parse_message
    from quotagov.governance.provenance import (
        AUDIT_QUEUE,
        REFUSED_ACTION,
        UnauthenticatedError,
        claimed_sender,
        open_message,
        refusal,
    )

    received: list[tuple[str, QueuedEntry]] = []
    refused: set[str] = set()
    built = current(Audit)
    mac = built.message_mac

    def parse_one(record: SQSRecord) -> None:
        body, sender, sent_at = record.body, None, None
        if mac is not None:
            try:
                opened = open_message(mac, AUDIT_QUEUE, record.body)
            except UnauthenticatedError as exc:
                _refuse(record, str(exc))
                raise
            body, sender, sent_at = opened.body, opened.sender, opened.sent_at
        try:
            message = parse_message(body)
        except (ValueError, ValidationError) as exc:
            logger.error(
                "malformed audit queue message",
                extra={"messageId": record.message_id, "reason": str(exc)},
            )
            metrics.add_metric(name="AuditMessagesMalformed", unit=MetricUnit.Count, value=1)
            raise
        # the time and the sender come from the verified proof, never from the body
        taken = message.decidedAt if sent_at is None else sent_at
        entry = QueuedEntry(message.controller_decision(), taken, sender)
        received.append((record.message_id, entry))

    def _refuse(record: SQSRecord, reason: str) -> None:
        """Record the refusal as a finding (once per message id) and keep the message:
        it fails, so SQS parks it in the DLQ after its receives."""
        logger.error(
            "unauthenticated audit queue message refused",
            extra={"messageId": record.message_id, "reason": reason},
        )
        decision = refusal(
            job_queue=built.settings.job_queue,
            where=record.event_source_arn or "AuditQueue",
            item_id=record.message_id,
            reason=reason,
            text=record.body,
            claimed=claimed_sender(record.body),
        )
        refused.add(record.message_id)
        received.append((record.message_id, QueuedEntry(decision)))

    answer = process_batch(event, parse_one, _processor(), context)
    if not received:
        return answer
    failures = list(answer.get("batchItemFailures") or [])
    # every refusal, this function's own or another's, is counted here, once per receipt
    refusals = sum(1 for _, entry in received if entry.decision.action == REFUSED_ACTION)
    if refusals:
        metrics.add_metric(name="UnauthenticatedMessages", unit=MetricUnit.Count, value=refusals)
    log = current(Audit).decision_log
    conflicts_before = log.conflicts
    outcomes = log.record_decisions([entry for _, entry in received])
    if log.conflicts > conflicts_before:
        logger.error("decision id conflict", extra={"count": log.conflicts - conflicts_before})
        metrics.add_metric(
            name="DecisionIdConflicts",
            unit=MetricUnit.Count,
            value=log.conflicts - conflicts_before,
        )
    stored = 0
    for (message_id, entry), failure in zip(received, outcomes, strict=True):
        if failure is None and message_id not in refused:
            stored += 1
            continue
        if failure is None:  # the refusal is recorded; the message already failed
            continue
        logger.error(
            "audit decision not appended",
            extra={
                "messageId": message_id,
                "decisionId": entry.decision.decision_id,
                "reason": f"{type(failure).__name__}: {failure}",
            },
        )
        failures.append({"itemIdentifier": message_id})
    if stored:
        metrics.add_metric(name="AuditDecisions", unit=MetricUnit.Count, value=stored)
    return {"batchItemFailures": failures}


def _policy_change(event: dict[str, Any]) -> dict[str, Any]:
    """Record a change of the policy parameter (CloudTrail record or Parameter Store
    Change); a malformed event or another parameter is rejected, SSM and chain failures
    raise (retried)."""
    from quotagov.governance.audit.errors import AuditEventError
    from quotagov.governance.audit.policy_parameter import (
        ParameterApiCall,
        ParameterChange,
        ParameterStoreChange,
    )

    call_event, store_event = _parameter_events()
    try:
        if event.get("detail-type") == "Parameter Store Change":
            store = parse(event=event, model=store_event)
            change = ParameterChange.from_parameter_store(
                cast(ParameterStoreChange, store.detail), store.id, store.time.timestamp()
            )
        else:
            call = parse(event=event, model=call_event)
            change = ParameterChange.from_cloudtrail(cast(ParameterApiCall, call.detail))
        result = current(Audit).policy_parameter_audit.record(change)
    except ValidationError as exc:
        return _reject(_fields(exc))
    except AuditEventError as exc:
        return _reject(str(exc))
    record = result.record
    status = "recorded" if result.created else "duplicate"
    findings = [f["code"] for f in record["findings"]]
    logger.info(
        "policy change %s",
        status,
        extra={
            "eventId": change.event_id,
            "action": change.action,
            "changedVersion": record["policyVersion"],
            "chain": record["chain"],
            "seq": int(record["seq"]),
            "findings": findings,
        },
    )
    if result.created:
        metrics.add_metric(name="PolicyChanges", unit=MetricUnit.Count, value=1)
        if any(f["severity"] == "high" for f in record["findings"]):
            metrics.add_metric(name="RiskyChanges", unit=MetricUnit.Count, value=1)
            if not result.alerted:
                metrics.add_metric(name="RiskAlertsNotPosted", unit=MetricUnit.Count, value=1)
    else:
        metrics.add_metric(name="AuditDuplicates", unit=MetricUnit.Count, value=1)
    return _answer(status, record)


def _release() -> dict[str, Any]:
    """Write the held CloudTrail calls whose settling window has passed."""
    written = current(Audit).audit_trail.release()
    # one count per run, 0 included: a run that released nothing still says so
    metrics.add_metric(name="AuditReleased", unit=MetricUnit.Count, value=len(written))
    for result in written:
        _count(result.record or {}, result.alerted)
    logger.info("audit release", extra={"written": len(written)})
    return {"status": "released", "records": len(written)}


def _count(record: dict[str, Any], alerted: bool) -> None:
    metrics.add_metric(name="AuditRecords", unit=MetricUnit.Count, value=1)
    if record.get("findings"):
        metrics.add_metric(name="RiskyChanges", unit=MetricUnit.Count, value=1)
        if not alerted:
            metrics.add_metric(name="RiskAlertsNotPosted", unit=MetricUnit.Count, value=1)


@metrics.log_metrics
@logger.inject_lambda_context(correlation_id_path=correlation_paths.EVENT_BRIDGE)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Record an SQS batch of queued decisions, or one CloudTrail-recorded Batch call.

    Returns:
        For SQS: ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``.
        For the schedule: ``{"status": "released", "records": <written>}``.
        For CloudTrail: ``{status, chain?, seq?, ...}``; ``status`` is ``recorded``,
        ``held`` (within its settling window: ``{status, eventId, heldUntil}``),
        ``duplicate`` (the event id was already recorded), ``foreign`` (another account
        or Region than the governed queue's: counted, dropped, never chained),
        ``trigger`` (a Lambda Invoke by the function's trigger: nothing recorded) or
        ``rejected`` (with ``reason``).
    """
    current(Audit)  # cold start: a missing setting fails here, before any work
    # not at import: cold start (benchmarks/submit_path.py)
    from quotagov.governance.audit.errors import AuditEventError, ForeignCallError

    if is_sqs_batch(event):
        return _decision_batch(event, context)
    if event.get("source") == "aws.ssm":
        return _policy_change(event)
    if event.get("source") == "aws.lambda":
        return _invocation(event)
    if event.get("source") == "aws.events" and event.get("detail-type") == "Scheduled Event":
        return _release()
    try:
        parsed = parse(event=event, model=BatchApiCallEvent)
    except ValidationError as exc:
        return _reject(_fields(exc))
    call = parsed.detail
    try:
        result = current(Audit).audit_trail.record_call(call)
    except ForeignCallError as exc:
        return _foreign(exc)
    except AuditEventError as exc:
        return _reject(str(exc))
    record = result.record
    if record is None:
        logger.info(
            "audit held",
            extra={"eventId": call.eventID, "action": call.eventName, "until": result.held_until},
        )
        metrics.add_metric(name="AuditHeld", unit=MetricUnit.Count, value=1)
        return {"status": "held", "eventId": call.eventID, "heldUntil": result.held_until}
    status = "recorded" if result.created else "duplicate"
    logger.info(
        "audit %s",
        status,
        extra={
            "eventId": call.eventID,
            "action": call.eventName,
            "chain": record["chain"],
            "seq": int(record["seq"]),
            "kind": record["kind"],
            "findings": [f["code"] for f in record["findings"]],
        },
    )
    if result.created:
        _count(record, result.alerted)
    else:
        metrics.add_metric(name="AuditDuplicates", unit=MetricUnit.Count, value=1)
    return _answer(status, record)
