"""``AuditFunction``: EventBridge ``AWS API Call via CloudTrail`` events from ``aws.batch``.

Thin: parse the event with Powertools Parser (EventBridge envelope + the CloudTrail
record model), hand the record to :class:`~quotagov.governance.audit.trail.AuditTrail`,
log and count the outcome.

- A malformed event or an unaudited call is answered ``{"status": "rejected",
  "reason": ...}`` (logged with the field at fault, metric ``AuditEventsRejected``) and
  not retried: a retry cannot fix it. That includes a successful call whose request
  parameters have the wrong types (``reason`` e.g. ``detail: requestParameters.
  capacityLimits[0].maxCapacity: 'a' is not a whole number``; see
  :func:`~quotagov.governance.audit.events.request_parameter_fault`).
- Transient failures (DynamoDB, Batch throttling, chain contention) raise, so Lambda's
  asynchronous retries and the rule's retry policy deliver the event again; the
  CloudTrail ``eventID`` makes that harmless.

Dependencies (``quotagov.wiring.services()``): ``audit_chains``, ``audit_versions``,
``batch``, ``policy``, ``chat`` (optional), ``clock``; settings ``AUDIT_TABLE``,
``PLATFORM_CHANNEL``, ``CONTROLLER_PRINCIPALS``.
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import ValidationError, parse
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext

from quotagov.governance.audit.events import CloudTrailApiCall
from quotagov.wiring import services

logger = Logger(service=os.getenv("POWERTOOLS_SERVICE_NAME", "quotagov"))
metrics = Metrics(namespace=os.getenv("POWERTOOLS_METRICS_NAMESPACE", "quotagov"))


class BatchApiCallEvent(EventBridgeModel):
    """EventBridge envelope whose ``detail`` is a CloudTrail record of a Batch call."""

    detail: CloudTrailApiCall


def _reject(reason: str) -> dict[str, Any]:
    logger.error("audit event rejected", extra={"reason": reason})
    metrics.add_metric(name="AuditEventsRejected", unit=MetricUnit.Count, value=1)
    return {"status": "rejected", "reason": reason}


def _fields(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
    )


@metrics.log_metrics
@logger.inject_lambda_context(correlation_id_path=correlation_paths.EVENT_BRIDGE)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Record one CloudTrail-recorded Batch call; returns ``{status, chain?, seq?, ...}``.

    ``status`` is ``recorded``, ``duplicate`` (the event id was already recorded) or
    ``rejected`` (with ``reason``).
    """
    from quotagov.governance.audit.trail import AuditEventError  # not at import: cold start

    try:
        parsed = parse(event=event, model=BatchApiCallEvent)
    except ValidationError as exc:
        return _reject(_fields(exc))
    call = parsed.detail
    try:
        result = services().audit_trail.record_call(call)
    except AuditEventError as exc:
        return _reject(str(exc))
    record = result.record
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
        metrics.add_metric(name="AuditRecords", unit=MetricUnit.Count, value=1)
        if record["findings"]:
            metrics.add_metric(name="RiskyChanges", unit=MetricUnit.Count, value=1)
            if not result.alerted:
                metrics.add_metric(name="RiskAlertsNotPosted", unit=MetricUnit.Count, value=1)
    else:
        metrics.add_metric(name="AuditDuplicates", unit=MetricUnit.Count, value=1)
    return {
        "status": status,
        "chain": record["chain"],
        "seq": int(record["seq"]),
        "kind": record["kind"],
        "findings": [f["code"] for f in record["findings"]],
    }
