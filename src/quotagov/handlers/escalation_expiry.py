"""``EscalationExpiryFunction``: scheduled (every 5 minutes) escalation housekeeping.

PENDING requests whose ``expiresAt`` has passed become EXPIRED (conditional write, so
a click racing the schedule is decided exactly once) and their Slack messages say so.

Retrying APPLY_FAILED requests (``UpdateServiceJob``) is not done here: only
``ApplyDecisionsFunction`` may call ``UpdateServiceJob``, and its own 5-minute
schedule retries them (:mod:`quotagov.handlers.apply_decisions`). This function makes
no mutating Batch call.

The event is EventBridge's ``Scheduled Event`` (parsed with Powertools Parser; it needs
``"version": "0"``, reference §9.5). Returns counts for the logs.

Metrics (:func:`quotagov.handlers.metrics.emit`): ``EscalationsExpired`` (count per
run).
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
    """Expire overdue requests; returns their ids.

    Raises:
        pydantic.ValidationError: ``event`` is not an EventBridge event.
    """
    # Powertools Parser (pydantic models) loads here, not at import (cold start).
    from aws_lambda_powertools.utilities.parser import parse
    from aws_lambda_powertools.utilities.parser.models import EventBridgeModel

    scheduled = parse(event=event, model=EventBridgeModel)
    expired = services().escalations.expire_due()
    result = {"expired": [e.escalation_id for e in expired]}
    emit("EscalationsExpired", MetricUnit.Count, len(expired))
    logger.info("escalation housekeeping", extra={"scheduledAt": str(scheduled.time), **result})
    return result
