"""``POST /jobs/{jobId}/disposition``: the owner decides what happens to an exhausted job.

Body: ``{"choice": "resubmit" | "reclassify" | "abandon"}``. The caller (IAM principal
from the request context) must be the submitter, a member of the job's team, or an
approver of its team or share. Calls
:func:`quotagov.governance.dispositions.decide_disposition`, the same use case the Slack
interaction buttons (``disposition_<choice>``) call.

Replies (error answers from the one table in :mod:`quotagov.handlers.api_errors`):

* 200 the disposition (``status`` ``applied`` or ``abandoned``; ``changed`` false when
  the same decision had already been taken);
* 400 ``{"message", "faults"}`` for a bad body, or a choice not offered for this job;
* 401 without a caller; 404 unknown job, and the very same 404 for a caller not
  allowed to decide for it (authorization before existence);
* 409 ``{"message", "disposition"}`` when no decision is pending or another was taken;
* 503 the decision is recorded but Batch refused the successor for now: repeat the
  same request to finish it (an outcome of the use case, not an error).
"""

from __future__ import annotations

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from pydantic import BaseModel, ConfigDict

from quotagov.composition import JobsApi, current
from quotagov.handlers import api_contract
from quotagov.handlers.api_errors import json_response
from quotagov.handlers.identity import caller_of

router = Router()  # type: ignore[no-untyped-call]


class DispositionRequest(BaseModel):
    """The owner's decision."""

    model_config = ConfigDict(extra="forbid")

    choice: Literal["resubmit", "reclassify", "abandon"]


@router.post(
    "/jobs/<jobId>/disposition",
    summary="Decide what happens to a job whose preemption retries ran out",
    tags=["jobs"],
    operation_id="decideDisposition",
    responses=api_contract.responses(
        400,
        401,
        404,
        409,
        415,
        s200=api_contract.ok(
            api_contract.DispositionAnswer,
            "decided (changed false when the same decision had been taken)",
            {
                "jobId": "8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f",
                "status": "applied",
                "trigger": "retries-exhausted",
                "policyAction": "ask-owner",
                "choice": "resubmit",
                "decidedBy": "arn:aws:sts::111122223333:assumed-role/researcher/alice",
                "successorId": "8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f-r1",
                "targetShare": "background",
                "choices": ["resubmit", "reclassify", "abandon"],
                "reason": "FAILED after 2 preemption(s), more than "
                "preemptionRetriesBeforeTermination=1",
                "changed": True,
                "error": None,
            },
        ),
        s503=api_contract.error(
            503,
            "the decision is recorded but Batch refused the successor for now: repeat it",
            {"message": "decision recorded; repeat the request to finish it", "status": "applied"},
        ),
    ),
)
def post_disposition(
    jobId: Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_-]+$")],
    decision: Annotated[DispositionRequest, Body()],
) -> Response[str]:
    """Apply ``decision`` to submission ``jobId`` once."""
    from quotagov.governance.dispositions import decide_disposition

    principal = caller_of(router.current_event.raw_event)
    outcome = decide_disposition(
        jobId, decision.choice, principal, deps=current(JobsApi).dispositions, source="api"
    )
    if outcome.error:
        return json_response(
            503,
            {"message": "decision recorded; repeat the request to finish it", **outcome.to_dict()},
        )
    # the documented model is the answer's: a member it does not describe fails here
    answer = api_contract.DispositionAnswer.model_validate(outcome.to_dict())
    return json_response(200, answer.model_dump(mode="json"))
