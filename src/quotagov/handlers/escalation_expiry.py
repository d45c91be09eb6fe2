"""``EscalationExpiryFunction``: scheduled (every 5 minutes) escalation housekeeping.

PENDING requests whose ``expiresAt`` has passed become EXPIRED (conditional write, so
a click racing the schedule is decided exactly once) and their Slack messages say so.
Then every card whose ``chat.update`` failed (Slack 429s beyond slack_sdk's retries,
timeouts) is updated again with its escalation's state now; one that failed
``MAX_CARD_UPDATE_ATTEMPTS`` (12) times is parked, counted in ``CardUpdatesParked``
and alarmed (:mod:`quotagov.governance.escalations.messages`).

Retrying APPLY_FAILED requests (``UpdateServiceJob``) is not done here: only
``ApplyDecisionsFunction`` may call ``UpdateServiceJob``, and its own 5-minute
schedule retries them (:mod:`quotagov.handlers.apply_decisions`). This function makes
no mutating Batch call.

The event is EventBridge's ``Scheduled Event`` (Powertools for AWS Lambda (Python),
"Parser", https://docs.aws.amazon.com/powertools/python/latest/utilities/parser/, for
its envelope fields). It carries no input:
the schedule itself is the trigger, so every shape a trigger or an operator can send
runs the housekeeping: the full event, one without ``version`` (what
``sam local generate-event cloudwatch scheduled-event`` writes), ``{}`` (a console test
or ``aws lambda invoke`` without payload). Only its ``id`` and ``time`` are read, for
the logs (:func:`_tick`; no model, so no pydantic at cold start). Returns the ids.

Metrics (:func:`quotagov.handlers.metrics.emit`): ``EscalationsExpired``,
``CardUpdatesRetried`` (cards shown at last) and ``CardUpdatesParked`` (count per run).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from quotagov.composition import EscalationExpiry, current
from quotagov.handlers.metrics import emit
from quotagov.handlers.tracing import capture_lambda_handler

logger = Logger()


def _tick(event: Any) -> dict[str, str | None]:
    """``id`` and ``time`` of a schedule's event for the logs (None where absent or not
    text); an event that is not an object is logged as such and still runs."""
    if not isinstance(event, dict):
        logger.warning("schedule event not an object; running anyway")
        event = {}
    return {
        key: value if isinstance(value := event.get(key), str) else None for key in ("id", "time")
    }


@logger.inject_lambda_context
@capture_lambda_handler
def handler(event: Any, context: LambdaContext) -> dict[str, Any]:
    """Expire overdue requests; returns their ids (any event shape, see the module)."""
    tick = _tick(event)
    escalations = current(EscalationExpiry).escalations
    expired = escalations.expire_due()
    cards = escalations.retry_card_updates()
    result = {
        "expired": [e.escalation_id for e in expired],
        "cardsUpdated": cards.updated,
        "cardsStillFailing": cards.failed,
        "cardsParked": cards.parked,
    }
    emit("EscalationsExpired", MetricUnit.Count, len(expired))
    emit("CardUpdatesRetried", MetricUnit.Count, len(cards.updated))
    emit("CardUpdatesParked", MetricUnit.Count, len(cards.parked))
    logger.info(
        "escalation housekeeping",
        extra={"scheduledAt": tick["time"], "eventId": tick["id"], **result},
    )
    return result
