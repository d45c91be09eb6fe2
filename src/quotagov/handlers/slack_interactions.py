"""``SlackInteractionsFunction``: ``POST /slack/interactions`` (Slack button clicks).

The function is internet-facing (no IAM authorization; the Slack signature is the
authentication), so it only verifies and records. Order of work, per Slack's
request-signing guide (Slack, "Verifying requests from Slack",
https://api.slack.com/authentication/verifying-requests-from-slack, and "Handling user
interaction in your Slack apps",
https://docs.slack.dev/interactivity/handling-user-interaction):

1. Verify the signature before anything else
   (:func:`quotagov.handlers.slack_signature.verify_slack_request`: HMAC-SHA256 over
   the raw body bytes, constant-time compare, a 300 s timestamp window on the
   injectable clock). A missing, malformed, stale or wrong signature is a 401 and
   changes nothing; nothing in this step can raise.
2. Parse the ``payload`` form field as a ``block_actions`` payload (400 otherwise, in
   the one error format of :mod:`quotagov.handlers.api_errors`: each fault with its
   ``path``, e.g. ``payload`` missing, ``payload.user.id``, a body that is not UTF-8,
   JSON nested too deeply to decode).
3. Record each click (:func:`record_clicks`): route by ``action_id`` prefix through
   :mod:`quotagov.governance.slack.interactions`: ``escalation_`` ->
   :func:`escalation_action` (the decision's conditional write), ``disposition_`` ->
   :func:`disposition_action` (``decide_disposition``'s conditional write). With the
   decision hand-off configured (``APPLY_QUEUE_URL``), the use cases stop there and
   send the decision to ``ApplyDecisionsFunction``, which alone calls Batch
   (``UpdateServiceJob``, successor submissions) and updates the Slack message.
4. Answer 200 with an empty body; refusals are told to the clicker only, through
   ``response_url``.

Metrics (:func:`quotagov.handlers.metrics.emit`): ``EscalationsDecided`` by ``team``,
``quotaShareName`` and ``outcome``; ``DispositionClicks`` by ``choice`` and ``outcome``.

Slack needs the answer within 3 seconds; this function makes no Batch call, so a slow
Batch cannot delay it. Events: API Gateway REST (v1) proxy events, HTTP API (v2)
events and Lambda function URL events are all accepted (:func:`handler` picks the
Powertools resolver by the event's shape).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import (
    APIGatewayHttpResolver,
    APIGatewayRestResolver,
    LambdaFunctionUrlResolver,
    Response,
    content_types,
)
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver, Router
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from quotagov.composition import SlackInteractions, current
from quotagov.handlers import api_contract
from quotagov.handlers.api_errors import invalid_request
from quotagov.handlers.metrics import emit
from quotagov.handlers.tracing import capture_lambda_handler

if TYPE_CHECKING:
    from quotagov.governance.slack.interactions import ActionReply, BlockAction

# The use cases, slack_sdk (signature) and the action table are loaded on the first
# request (_register_actions), not at import: the cold start stays near a bare
# ``import boto3`` (benchmarks/submit_path.py, tests/test_cold_start.py).

__all__ = [
    "MAX_RECORD_ID_LENGTH",
    "app",
    "disposition_action",
    "escalation_action",
    "handler",
    "record_clicks",
    "resolver_for",
    "unusable_record_id",
]

logger = Logger()
router = Router()  # type: ignore[no-untyped-call]
#: The REST (v1) resolver; :data:`http_app` and :data:`url_app` serve the same route
#: for HTTP API (v2) and Lambda function URL events.
app = APIGatewayRestResolver()
http_app = APIGatewayHttpResolver()
url_app = LambdaFunctionUrlResolver()


def _text(status: int, message: str) -> Response[str]:
    return Response(status, content_types.APPLICATION_JSON, json.dumps({"message": message}))


def _unusable(path: str, fault: str) -> Response[str]:
    """400 in the one error format (``quotagov.handlers.api_errors``)."""
    logger.warning("unusable Slack interaction", extra={"path": path, "fault": fault})
    return invalid_request([(path, fault)])


def _payload_of(body: bytes) -> dict[str, Any] | Response[str]:
    """The decoded ``payload`` form field of ``body``, or the 400 naming what is wrong."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        return _unusable("(body)", f"not UTF-8 form data ({error.reason} at byte {error.start})")
    form = parse_qs(text, keep_blank_values=True)
    if not form.get("payload"):
        return _unusable(
            "payload",
            "missing: Slack sends a click as the form field 'payload' "
            "(application/x-www-form-urlencoded)",
        )
    try:
        payload = json.loads(form["payload"][0])
    except RecursionError:
        return _unusable("payload", "JSON nested too deeply to decode")
    except ValueError as error:
        return _unusable("payload", f"not valid JSON: {error}")
    if not isinstance(payload, dict):
        return _unusable("payload", "must be a JSON object")
    return payload


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
    """``escalation_approve`` / ``escalation_deny``: decide the escalation in ``value``
    (``<escalation id>#r<preview round>``; an Approve on a round that is no longer the
    request's is answered in Slack and changes nothing)."""
    from quotagov.governance.slack.escalations import (
        APPROVE_ACTION,
        DENY_ACTION,
        parse_button_value,
    )
    from quotagov.governance.slack.interactions import ActionReply

    if action.action_id not in (APPROVE_ACTION, DENY_ACTION):
        return ActionReply(f"Unknown escalation action {action.action_id!r}.")
    unusable = unusable_record_id(action)
    if unusable is not None:
        return ActionReply(unusable)
    escalation_id, shown_round = parse_button_value(action.value)
    result = current(SlackInteractions).escalations.decide(
        escalation_id,
        approve=action.action_id == APPROVE_ACTION,
        user_id=action.user_id,
        shown_round=shown_round,
    )
    logger.info(
        "escalation decision",
        extra={
            "escalationId": escalation_id,
            "round": shown_round,
            "outcome": result.outcome,
            "user": action.user_id,
        },
    )
    decided = result.escalation
    emit(
        "EscalationsDecided",
        MetricUnit.Count,
        1,
        team=decided.team if decided else None,
        quotaShareName=decided.quota_share_name if decided else None,
        outcome=result.outcome,
    )
    if result.outcome in ("approved", "denied"):
        return ActionReply(None)
    return ActionReply(result.notice)


def disposition_action(action: BlockAction) -> ActionReply:
    """``disposition_<choice>``: decide the disposition of the job in ``value``.

    Calls :func:`quotagov.governance.dispositions.decide_disposition` (the use case
    ``POST /jobs/{jobId}/disposition`` calls); a refusal is told to the clicker only.
    """
    from quotagov.governance.dispositions import DispositionError, decide_disposition
    from quotagov.governance.slack.interactions import ActionReply

    unusable = unusable_record_id(action)
    if unusable is not None:
        return ActionReply(unusable)
    try:
        decide_disposition(
            action.value,
            action.action_id,
            action.user_id,
            deps=current(SlackInteractions).dispositions,
            source="slack",
        )
    except DispositionError as error:
        emit("DispositionClicks", MetricUnit.Count, 1, choice=action.action_id, outcome="refused")
        return ActionReply(f"Nothing was changed: {error}")
    emit("DispositionClicks", MetricUnit.Count, 1, choice=action.action_id, outcome="recorded")
    return ActionReply(None)


_registered: list[bool] = []


def _register_actions() -> None:
    """Route ``escalation_*`` and ``disposition_*`` actions here (once per process)."""
    if _registered:
        return
    from quotagov.governance.dispositions import ACTION_ID_PREFIX as DISPOSITION_PREFIX
    from quotagov.governance.slack.escalations import ACTION_PREFIX
    from quotagov.governance.slack.interactions import register_action

    register_action(ACTION_PREFIX, escalation_action)
    register_action(DISPOSITION_PREFIX, disposition_action)
    _registered.append(True)


def __getattr__(name: str) -> Any:
    """``verify_slack_request`` (re-exported) is imported on first use: slack_sdk is heavy."""
    if name == "verify_slack_request":
        from quotagov.handlers.slack_signature import verify_slack_request

        return verify_slack_request
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@router.post(
    "/slack/interactions",
    summary="Slack button clicks (block_actions), signed by Slack",
    tags=["slack"],
    operation_id="slackInteractions",
    responses=api_contract.responses(
        400,
        s200={"description": "read; refusals go to the clicker through response_url"},
        s503=api_contract.error(
            503,
            "the replay cache of signatures could not be written; nothing was recorded",
            {"message": "Slack request not checked for replay: try again"},
        ),
        s401=api_contract.error(
            401,
            "missing, stale or wrong X-Slack-Signature",
            {"message": "invalid Slack request signature"},
        ),
    ),
)
def interactions() -> Response[str]:
    """Verify, parse, record; 401 for a bad signature, 400 for a bad payload, else 200."""
    from quotagov.governance.slack.interactions import parse_block_actions
    from quotagov.handlers.slack_signature import (
        request_headers,
        timestamp_fault,
        verify_slack_request,
    )

    built = current(SlackInteractions)
    raw = router.current_event.raw_event
    body = verify_slack_request(raw, built.slack_signing_secret, built.clock)
    if body is None:
        fault = timestamp_fault(raw)
        logger.warning(
            "refused a Slack request with a missing, stale or invalid signature",
            extra={"fault": fault},
        )
        if fault is not None:
            return _text(401, f"invalid Slack request signature: {fault}")
        return _text(401, "invalid Slack request signature")
    replays = built.slack_replays
    signature = request_headers(raw).get("x-slack-signature", "")
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        first = replays is None or replays.first_use(signature)
    except (ClientError, BotoCoreError) as error:  # nothing recorded: the user clicks again
        logger.warning("replay cache unavailable", extra={"error": str(error)})
        return _text(503, "Slack request not checked for replay: try again")
    if not first:
        logger.warning("refused a replayed Slack request (signature already used)")
        return _text(401, "replayed Slack request: this signature was already used")
    payload = _payload_of(body)
    if isinstance(payload, Response):
        return payload
    try:
        actions = parse_block_actions(payload)
    except RecursionError:
        return _unusable("payload", "JSON nested too deeply to decode")
    except ValueError as error:
        path, _, fault = str(error).partition(": ")
        return _unusable(path, fault) if fault else _unusable("payload", path)
    record_clicks(actions)
    return Response(200, content_types.TEXT_PLAIN, "")


def record_clicks(actions: list[BlockAction]) -> None:
    """Record each verified click with its use case and tell the clicker any refusal.

    This is the verification-and-record step of the function: each handler makes one
    conditional write (and, with the hand-off configured, one SQS send); the Batch
    call and the message update are the apply function's. ``actions`` come from a
    request whose signature was checked.
    """
    from quotagov.governance.ports import ChatError
    from quotagov.governance.slack.interactions import handler_for

    _register_actions()
    built = current(SlackInteractions)
    for action in actions:
        action_handler = handler_for(action.action_id)
        if action_handler is None:
            logger.info("no handler for action", extra={"actionId": action.action_id})
            continue
        reply = action_handler(action)
        if reply.notice and action.response_url:
            try:
                built.slack_responder(action.response_url, reply.notice)
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
@capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point: REST (v1), HTTP API (v2) or function URL event."""
    current(SlackInteractions)  # cold start: a missing setting fails here, before any work
    return resolver_for(event).resolve(event, context)
