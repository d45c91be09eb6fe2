"""``SlackInteractionsFunction``: ``POST /slack/interactions`` (Slack button clicks).

The function is internet-facing (no IAM authorization; the Slack signature is the
authentication), so it only verifies and records. Order of work, per Slack's
request-signing guide (reference §7.1-7.2):

1. Verify the signature before anything else
   (:func:`quotagov.handlers.slack_signature.verify_slack_request`: HMAC-SHA256 over
   the raw body bytes, constant-time compare, a 300 s timestamp window on the
   injectable clock). A missing, malformed, stale or wrong signature is a 401 and
   changes nothing; nothing in this step can raise.
2. Parse the ``payload`` form field as a ``block_actions`` payload (400 otherwise,
   also for JSON nested too deeply to decode and bodies that are not UTF-8).
3. Record each click (:func:`record_clicks`): route by ``action_id`` prefix through
   :mod:`quotagov.governance.slack.interactions`: ``escalation_`` ->
   :func:`escalation_action` (the decision's conditional write), ``disposition_`` ->
   :func:`disposition_action` (``decide_disposition``'s conditional write). With the
   decision hand-off configured (``APPLY_QUEUE_URL``), the use cases stop there and
   send the decision to ``ApplyDecisionsFunction``, which alone calls Batch
   (``UpdateServiceJob``, successor submissions) and updates the Slack message.
4. Answer 200 with an empty body; refusals are told to the clicker only, through
   ``response_url``.

Slack needs the answer within 3 seconds; this function makes no Batch call, so a slow
Batch cannot delay it. Events: API Gateway REST (v1) proxy events, HTTP API (v2)
events and Lambda function URL events are all accepted (:func:`handler` picks the
Powertools resolver by the event's shape).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.event_handler import (
    APIGatewayHttpResolver,
    APIGatewayRestResolver,
    LambdaFunctionUrlResolver,
    Response,
    content_types,
)
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver, Router
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from quotagov.governance.dispositions import ACTION_ID_PREFIX as DISPOSITION_PREFIX
from quotagov.governance.dispositions import DispositionError, decide_disposition
from quotagov.governance.ports import ChatError
from quotagov.governance.slack.escalations import ACTION_PREFIX, APPROVE_ACTION, DENY_ACTION
from quotagov.governance.slack.interactions import (
    ActionReply,
    BlockAction,
    handler_for,
    parse_block_actions,
    register_action,
)
from quotagov.handlers.slack_signature import verify_slack_request
from quotagov.wiring import services

__all__ = [
    "MAX_RECORD_ID_LENGTH",
    "app",
    "disposition_action",
    "escalation_action",
    "handler",
    "record_clicks",
    "resolver_for",
    "unusable_record_id",
    "verify_slack_request",
]

logger = Logger()
tracer = Tracer()
router = Router()  # type: ignore[no-untyped-call]
#: The REST (v1) resolver; :data:`http_app` and :data:`url_app` serve the same route
#: for HTTP API (v2) and Lambda function URL events.
app = APIGatewayRestResolver()
http_app = APIGatewayHttpResolver()
url_app = LambdaFunctionUrlResolver()


def _text(status: int, message: str) -> Response[str]:
    return Response(status, content_types.APPLICATION_JSON, json.dumps({"message": message}))


#: Longest ``value`` taken as a record id. DynamoDB refuses partition keys over
#: 2048 bytes (``ValidationException``); quotagov's ids are far shorter.
MAX_RECORD_ID_LENGTH = 512


def unusable_record_id(action: BlockAction) -> str | None:
    """Why ``action.value`` cannot name a quotagov record, or None when it can.

    quotagov's buttons carry the escalation id or job id in ``value``; a click whose
    ``value`` is missing, empty or oversized (a hand-made, yet signed, payload) is
    answered with this notice instead of a DynamoDB lookup that would fail with
    ``ValidationException``.
    """
    value = action.value
    if not value.strip():
        return f"Nothing was changed: the {action.action_id!r} button carries no record id."
    if len(value) > MAX_RECORD_ID_LENGTH:
        return f"Nothing was changed: the {action.action_id!r} button's value is not a record id."
    return None


def escalation_action(action: BlockAction) -> ActionReply:
    """``escalation_approve`` / ``escalation_deny``: decide the escalation in ``value``."""
    if action.action_id not in (APPROVE_ACTION, DENY_ACTION):
        return ActionReply(f"Unknown escalation action {action.action_id!r}.")
    unusable = unusable_record_id(action)
    if unusable is not None:
        return ActionReply(unusable)
    result = services().escalations.decide(
        action.value, approve=action.action_id == APPROVE_ACTION, user_id=action.user_id
    )
    logger.info(
        "escalation decision",
        extra={"escalationId": action.value, "outcome": result.outcome, "user": action.user_id},
    )
    if result.outcome in ("approved", "denied"):
        return ActionReply(None)
    return ActionReply(result.notice)


def disposition_action(action: BlockAction) -> ActionReply:
    """``disposition_<choice>``: decide the disposition of the job in ``value``.

    Calls :func:`quotagov.governance.dispositions.decide_disposition` (the use case
    ``POST /jobs/{jobId}/disposition`` calls); a refusal is told to the clicker only.
    """
    unusable = unusable_record_id(action)
    if unusable is not None:
        return ActionReply(unusable)
    try:
        decide_disposition(
            action.value,
            action.action_id,
            action.user_id,
            deps=services().dispositions,
            source="slack",
        )
    except DispositionError as error:
        return ActionReply(f"Nothing was changed: {error}")
    return ActionReply(None)


register_action(ACTION_PREFIX, escalation_action)
register_action(DISPOSITION_PREFIX, disposition_action)


@router.post("/slack/interactions")
def interactions() -> Response[str]:
    """Verify, parse, record; 401 for a bad signature, 400 for a bad payload, else 200."""
    current = services()
    body = verify_slack_request(
        router.current_event.raw_event, current.slack_signing_secret, current.clock
    )
    if body is None:
        logger.warning("refused a Slack request with a missing, stale or invalid signature")
        return _text(401, "invalid Slack request signature")
    try:
        form = parse_qs(body.decode("utf-8"), keep_blank_values=True)
        payload = json.loads(form["payload"][0])
        if not isinstance(payload, dict):
            raise ValueError("payload: not a JSON object")
        actions = parse_block_actions(payload)
    except RecursionError:
        logger.warning("unusable Slack interaction: payload nested too deeply")
        return _text(400, "unusable Slack interaction: payload: JSON is nested too deeply")
    except (UnicodeDecodeError, KeyError, IndexError, ValueError) as error:
        logger.warning("unusable Slack interaction", extra={"error": str(error)})
        return _text(400, f"unusable Slack interaction: {error}")
    record_clicks(actions)
    return Response(200, content_types.TEXT_PLAIN, "")


def record_clicks(actions: list[BlockAction]) -> None:
    """Record each verified click with its use case and tell the clicker any refusal.

    This is the verification-and-record step of the function: each handler makes one
    conditional write (and, with the hand-off configured, one SQS send); the Batch
    call and the message update are the apply function's. ``actions`` come from a
    request whose signature was checked.
    """
    current = services()
    for action in actions:
        action_handler = handler_for(action.action_id)
        if action_handler is None:
            logger.info("no handler for action", extra={"actionId": action.action_id})
            continue
        reply = action_handler(action)
        if reply.notice and action.response_url:
            try:
                current.slack_responder(action.response_url, reply.notice)
            except ChatError as error:
                logger.warning("could not answer the clicker", extra={"error": error.error})


for _resolver in (app, http_app, url_app):
    _resolver.include_router(router)


def resolver_for(event: dict[str, Any]) -> ApiGatewayResolver:
    """The resolver for ``event``'s shape: a Lambda function URL event (version 2.0, a
    ``lambda-url`` domain), an HTTP API v2 event (version 2.0) or a REST v1 event."""
    if event.get("version") != "2.0":
        return app
    context = event.get("requestContext")
    domain = str(context.get("domainName") or "") if isinstance(context, dict) else ""
    return url_app if ".lambda-url." in domain else http_app


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point: REST (v1), HTTP API (v2) or function URL event."""
    return resolver_for(event).resolve(event, context)
