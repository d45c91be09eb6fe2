"""``EscalationExpiryFunction``: scheduled (every 5 minutes) escalation housekeeping.

PENDING requests whose ``expiresAt`` has passed become EXPIRED (conditional write, so
a click racing the schedule is decided exactly once) and their Slack messages say so.

Retrying APPLY_FAILED requests (``UpdateServiceJob``) is not done here: only
``ApplyDecisionsFunction`` may call ``UpdateServiceJob``, and its own 5-minute
schedule retries them (:mod:`quotagov.handlers.apply_decisions`). This function makes
no mutating Batch call.

The event is EventBridge's ``Scheduled Event`` (reference §9.5). It carries no input:
the schedule itself is the trigger, so every shape a trigger or an operator can send
runs the housekeeping: the full event, one without ``version`` (what
``sam local generate-event cloudwatch scheduled-event`` writes), ``{}`` (a console test
or ``aws lambda invoke`` without payload). The event is read with Powertools Parser
(:class:`ScheduleTick`, every field optional) only for the logs; one it cannot read is
logged as such. Returns the ids for the logs.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.utilities.parser import ValidationError, parse
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field

from quotagov.wiring import services

logger = Logger()
tracer = Tracer()


class ScheduleTick(BaseModel):
    """What the logs keep of a schedule's event; every field may be absent."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    id: str | None = None
    time: str | None = None
    detail_type: str | None = Field(default=None, alias="detail-type")
    resources: list[str] = Field(default_factory=list)


def _tick(event: Any) -> ScheduleTick:
    try:
        return parse(event=event, model=ScheduleTick)
    except (ValidationError, ValueError, TypeError) as error:
        logger.warning("schedule event not readable; running anyway", extra={"error": str(error)})
        return ScheduleTick()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: Any, context: LambdaContext) -> dict[str, Any]:
    """Expire overdue requests; returns their ids."""
    tick = _tick(event)
    expired = services().escalations.expire_due()
    result = {"expired": [e.escalation_id for e in expired]}
    logger.info(
        "escalation housekeeping", extra={"scheduledAt": tick.time, "eventId": tick.id, **result}
    )
    return result
