"""``EscalationExpiryFunction``: scheduled (every 5 minutes) escalation housekeeping.

1. PENDING requests whose ``expiresAt`` has passed become EXPIRED (conditional write,
   so a click racing the schedule is decided exactly once) and their Slack messages
   say so.
2. APPLY_FAILED requests are claimed (``claimedAt``) and retried: APPLIED, SUPERSEDED
   (Batch already runs the job at or above the requested priority, so no
   ``UpdateServiceJob``) or still APPLY_FAILED, up to ``MAX_APPLY_ATTEMPTS`` attempts
   in all. APPROVED requests claimed over ``STALE_APPROVAL_SECONDS`` ago are taken
   over first.

The event is EventBridge's ``Scheduled Event`` (parsed with Powertools Parser; it needs
``"version": "0"``, reference §9.5). Returns counts for the logs.

Metrics (:func:`quotagov.handlers.metrics.emit`): ``EscalationsExpired`` (count per
run), ``EscalationsRetried`` by ``team``, ``quotaShareName`` and ``status``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from quotagov.handlers.metrics import emit
from quotagov.handlers.tracing import capture_lambda_handler
from quotagov.wiring import services

logger = Logger()


@logger.inject_lambda_context
@capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Expire overdue requests and retry failed applications; returns their ids.

    Raises:
        pydantic.ValidationError: ``event`` is not an EventBridge event.
    """
    # Powertools Parser (pydantic models) loads here, not at import (cold start).
    from aws_lambda_powertools.utilities.parser import parse
    from aws_lambda_powertools.utilities.parser.models import EventBridgeModel

    scheduled = parse(event=event, model=EventBridgeModel)
    use_case = services().escalations
    expired = use_case.expire_due()
    retried = use_case.retry_failed()
    result = {
        "expired": [e.escalation_id for e in expired],
        "retried": {e.escalation_id: e.status.value for e in retried},
    }
    emit("EscalationsExpired", MetricUnit.Count, len(expired))
    for escalation in retried:
        emit(
            "EscalationsRetried",
            MetricUnit.Count,
            1,
            team=escalation.team,
            quotaShareName=escalation.quota_share_name,
            status=escalation.status.value,
        )
    logger.info("escalation housekeeping", extra={"scheduledAt": str(scheduled.time), **result})
    return result
