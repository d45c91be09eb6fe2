"""``GET /jobs/{jobId}``: a submission's state, routing, reasons and Batch position.

Replies 200 with :func:`quotagov.governance.jobs.view.show_job` (the
:func:`~quotagov.governance.jobs.view.job_view` plus ``chain.links``, the whole
resubmission chain); 401 without a caller; 404 when unknown, and the very same
404 when the caller is neither the submitter nor a member of the submission's
team (:func:`quotagov.governance.access.may_view`): authorization before existence.
Error answers come from :mod:`quotagov.handlers.api_errors`.
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path

from quotagov.composition import JobsApi, current
from quotagov.handlers import api_contract
from quotagov.handlers.api_errors import json_response
from quotagov.handlers.identity import caller_of

router = Router()  # type: ignore[no-untyped-call]


@router.get(
    "/jobs/<jobId>",
    summary="Show a submission",
    tags=["jobs"],
    operation_id="getJob",
    responses=api_contract.responses(
        400,
        401,
        404,
        503,
        s200=api_contract.ok(
            api_contract.JobView,
            "the submission, Batch's view of its service job and its resubmission chain",
            {
                "submissionId": "8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f",
                "state": "SUBMITTED",
                "team": "research",
                "jobName": "resnet-sweep-017",
                "quotaShareName": "background",
                "schedulingPriority": 10,
                "reasons": [],
            },
        ),
    ),
)
def get_job(
    jobId: Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_-]+$")],
) -> Response[str]:
    """The view of submission ``jobId`` (the submission id returned by ``POST /jobs``)."""
    from quotagov.governance.jobs.view import show_job

    caller = caller_of(router.current_event.raw_event)
    svc = current(JobsApi)
    view = show_job(
        jobId,
        caller,
        jobs=svc.jobs,
        policy=svc.policy,
        batch=svc.batch,
        job_queue=svc.settings.job_queue,
        waiting=svc.wait_explainer,
    )
    # the documented model is the answer's: a view it does not describe fails here
    answer = api_contract.JobView.model_validate(view)
    return json_response(200, answer.model_dump(mode="json", exclude_unset=True))
