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

Metric: ``EscalationsRequested``, once per accepted request, by ``team``,
``quotaShareName``, ``requester``, ``level`` and ``kind``
(:func:`quotagov.handlers.escalation_metrics.count_request`).

Error answers come from the one table in :mod:`quotagov.handlers.api_errors`
(``install_error_handlers(app)``: this API's validation and
too-deep answers are kept as they are).
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field

from quotagov.composition import EscalationsApi, current
from quotagov.handlers import api_contract
from quotagov.handlers.api_errors import install_error_handlers, json_response, query_fault_answer
from quotagov.handlers.escalation_metrics import count_request
from quotagov.handlers.identity import caller_of
from quotagov.handlers.tracing import capture_lambda_handler

logger = Logger()
app = APIGatewayRestResolver(enable_validation=True)
install_error_handlers(app)


class EscalationBody(BaseModel):
    """The request body: a policy priority level name and a non-empty reason."""

    model_config = ConfigDict(extra="forbid")

    level: str = Field(min_length=1, max_length=128, description="policy priority level name")
    reason: str = Field(max_length=2000, description="why the job needs the higher priority")


def _example(escalation_id: str, status: str, **changes: Any) -> dict[str, Any]:
    """An answer of the OpenAPI examples: bg-2's escalation ``escalation_id`` in
    ``status``, a direct ``standard`` level unless ``changes`` say otherwise."""
    return {
        "escalationId": escalation_id,
        "jobId": "sub-bg-2",
        "batchJobId": "6513270e-269e-4d37-b2a7-4de452e6b438",
        "jobName": "bg-2",
        "team": "research",
        "quotaShareName": "background",
        "requester": "arn:aws:sts::111122223333:assumed-role/researcher/alice",
        "reason": "paper deadline on Friday",
        "currentPriority": 10,
        "createdAt": "2026-12-03T15:20:00Z",
        "expiresAt": "2026-12-03T16:20:00Z",
        "status": status,
        "direct": True,
        "requestedLevel": "standard",
        "requestedPriority": 10,
        **changes,
    }


@app.post(
    "/jobs/<jobId>/escalations",
    summary="Request a higher schedulingPriority for a job",
    tags=["escalations"],
    operation_id="requestEscalation",
    responses=api_contract.responses(
        400,
        401,
        415,
        422,
        503,
        s200=api_contract.ok(
            api_contract.EscalationAnswer,
            "APPLIED: a level the team may set directly, applied by this function; only "
            "without the hand-off to the apply function (APPLY_QUEUE_URL unset, as in "
            "tests): a deployed stack answers 202",
            _example("esc-1", "APPLIED"),
        ),
        s202=api_contract.ok(
            api_contract.EscalationAnswer,
            "APPROVED: a level the team may set directly, accepted; ApplyDecisionsFunction "
            "applies it shortly after (GET /jobs/{jobId} then shows the new priority)",
            _example("esc-3", "APPROVED"),
        ),
        s201=api_contract.ok(
            api_contract.EscalationAnswer,
            "PENDING: posted to the share's approval channel with the impact preview",
            _example(
                "esc-2",
                "PENDING",
                direct=False,
                requestedLevel="high",
                requestedPriority=50,
                preview={
                    "outcome": "PREEMPTS",
                    "summary": "Approval starts bg-2 at once by preempting bg-1 "
                    "(180 s of unsaved work).",
                    "preempted": [
                        {
                            "jobId": "90c192cf-d3ac-44af-8f21-ddb66cad4a26",
                            "jobName": "bg-1",
                            "quotaShareName": "background",
                            "kind": "IN_SHARE",
                            "unsavedSeconds": 180.0,
                        }
                    ],
                    "positionBefore": 1,
                    "positionAfter": None,
                    "computedAt": "2026-12-03T15:20:00Z",
                },
                message={"channel": "C0GOVERN", "ts": "1796315360.000003"},
            ),
        ),
    ),
)
def create_escalation(
    jobId: Annotated[str, Path(min_length=1, max_length=256)],
    body: Annotated[EscalationBody, Body()],
) -> Response[str]:
    """Check the request, then hand a direct level to the apply function (or, without
    the hand-off, apply it here) or ask the approvers in Slack."""
    # Imported here so that the module's import (the cold start) stays light.
    from quotagov.governance.escalations import EscalationRequest
    from quotagov.governance.model.escalation import EscalationStatus

    principal = caller_of(app.current_event.raw_event)
    request = EscalationRequest(
        job_id=jobId, level=body.level, reason=body.reason, requester=principal
    )
    escalation = current(EscalationsApi).escalations.request(request)
    count_request(escalation)
    logger.info(
        "escalation accepted",
        extra={"escalationId": escalation.escalation_id, "status": escalation.status.value},
    )
    status = {EscalationStatus.PENDING: 201, EscalationStatus.APPROVED: 202}.get(
        escalation.status, 200
    )
    # the documented model is the answer's: a member it does not describe fails here
    answer = api_contract.EscalationAnswer.model_validate(escalation.to_api())
    return json_response(status, answer.model_dump(mode="json", exclude_unset=True))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point (API Gateway REST proxy event; query parameters that are not
    text get a 400 first, :func:`~quotagov.handlers.api_errors.query_fault_answer`)."""
    current(EscalationsApi)  # cold start: a missing setting fails here, before any work
    refused = query_fault_answer(event)
    if refused is not None:
        return refused
    return app.resolve(event, context)
