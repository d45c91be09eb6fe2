"""``EscalationExpiryFunction``: scheduled (every 5 minutes) escalation housekeeping.

PENDING requests whose ``expiresAt`` has passed become EXPIRED (conditional write, so
a click racing the schedule is decided exactly once) and their Slack messages say so.

Retrying APPLY_FAILED requests (``UpdateServiceJob``) is not done here: only
``ApplyDecisionsFunction`` may call ``UpdateServiceJob``, and its own 5-minute
schedule retries them (:mod:`quotagov.handlers.apply_decisions`). This function makes
no mutating Batch call.

The event is EventBridge's ``Scheduled Event`` (parsed with Powertools Parser; it needs
``"version": "0"``, reference §9.5). Returns counts for the logs.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext

from quotagov.wiring import services

logger = Logger()
tracer = Tracer()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@event_parser(model=EventBridgeModel)
def handler(event: EventBridgeModel, context: LambdaContext) -> dict[str, Any]:
    """Expire overdue requests; returns their ids."""
    expired = services().escalations.expire_due()
    result = {"expired": [e.escalation_id for e in expired]}
    logger.info("escalation housekeeping", extra={"scheduledAt": str(event.time), **result})
    return result
