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
    """Expire overdue requests and retry failed applications; returns their ids."""
    use_case = services().escalations
    expired = use_case.expire_due()
    retried = use_case.retry_failed()
    result = {
        "expired": [e.escalation_id for e in expired],
        "retried": {e.escalation_id: e.status.value for e in retried},
    }
    logger.info("escalation housekeeping", extra={"scheduledAt": str(event.time), **result})
    return result
