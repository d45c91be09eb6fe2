"""``EscalationsApiFunction``: ``POST /jobs/{jobId}/escalations`` (IAM auth).

Body: ``{"level": "<priority level name>", "reason": "<why>"}``. The caller is the IAM
principal API Gateway authenticated (``requestContext.identity.userArn``), never a
body field. Answers:

- 201 with the escalation (status PENDING, impact preview, Slack message) when it
  waits for approval;
- 202 with the escalation (status APPROVED, ``direct``) for a level the team may set
  itself: the apply function (the only caller of ``UpdateServiceJob``) applies it and
  ``GET /jobs/{jobId}`` shows the new priority; 200 (status APPLIED) when this
  function runs without the hand-off (``APPLY_QUEUE_URL`` unset) and applied it;
- 422 ``{"message": reason}`` for a refused request (see
  :mod:`quotagov.governance.escalations`), or Powertools' validation detail for a
  malformed body; 400 ``{"message": "body: ..."}`` for a body nested too deeply to
  decode (``RecursionError`` in the JSON decoder); for a caller outside the job's
  team the very 422 of an unknown job (authorization before existence); 401 without
  a caller; 503 when Batch or Slack cannot be reached
  (nothing is left changed).

Error answers come from the one table in :mod:`quotagov.handlers.api_errors`
(``install_error_handlers(app, listed_faults=False)``: this API's validation and
too-deep answers are kept as they are).
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field

from quotagov.governance.escalation_records import EscalationStatus
from quotagov.governance.escalations import EscalationRequest
from quotagov.handlers.api_errors import install_error_handlers, json_response
from quotagov.handlers.identity import caller_of
from quotagov.wiring import services

logger = Logger()
tracer = Tracer()
app = APIGatewayRestResolver(enable_validation=True)
install_error_handlers(app, listed_faults=False)


class EscalationBody(BaseModel):
    """The request body: a policy priority level name and a non-empty reason."""

    model_config = ConfigDict(extra="forbid")

    level: str = Field(min_length=1, max_length=128, description="policy priority level name")
    reason: str = Field(max_length=2000, description="why the job needs the higher priority")


@app.post(
    "/jobs/<jobId>/escalations",
    summary="Request a higher schedulingPriority for a job",
    tags=["escalations"],
)
def create_escalation(
    jobId: Annotated[str, Path(min_length=1, max_length=256)],
    body: Annotated[EscalationBody, Body()],
) -> Response[str]:
    """Check the request, then apply it (direct level) or ask the approvers in Slack."""
    principal = caller_of(app.current_event.raw_event)
    request = EscalationRequest(
        job_id=jobId, level=body.level, reason=body.reason, requester=principal
    )
    escalation = services().escalations.request(request)
    logger.info(
        "escalation accepted",
        extra={"escalationId": escalation.escalation_id, "status": escalation.status.value},
    )
    status = {EscalationStatus.PENDING: 201, EscalationStatus.APPROVED: 202}.get(
        escalation.status, 200
    )
    return json_response(status, escalation.to_api())


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point (API Gateway REST proxy event)."""
    return app.resolve(event, context)
