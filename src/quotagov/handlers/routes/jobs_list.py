"""``GET /jobs?team=&state=&limit=&nextToken=``: a team's submissions, page by page.

Replies 200 with :func:`quotagov.governance.jobs.listing.list_jobs`; 400 naming each bad
query parameter; 401 without a caller; 403 when the caller is not a member of the
team. Error answers come from :mod:`quotagov.handlers.api_errors`.
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from quotagov.composition import JobsApi, current
from quotagov.handlers import api_contract
from quotagov.handlers.api_errors import json_response
from quotagov.handlers.identity import caller_of

router = Router()  # type: ignore[no-untyped-call]


@router.get(
    "/jobs",
    summary="List a team's submissions",
    tags=["jobs"],
    operation_id="listJobs",
    responses=api_contract.responses(
        400,
        401,
        403,
        503,
        s200=api_contract.ok(
            api_contract.JobPage,
            "one page of the team's submissions, newest first",
            {
                "jobs": [
                    {
                        "submissionId": "8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f",
                        "jobName": "resnet-sweep-017",
                        "state": "SUBMITTED",
                        "quotaShareName": "background",
                    }
                ],
                "nextToken": None,
            },
        ),
    ),
)
def list_jobs(
    team: Annotated[str | None, Query(max_length=128)] = None,
    state: Annotated[str | None, Query(max_length=32)] = None,
    limit: Annotated[int | None, Query()] = None,
    nextToken: Annotated[str | None, Query(max_length=2048)] = None,
) -> Response[str]:
    """One page of ``team``'s jobs, newest first, optionally of one ``state``."""
    from quotagov.governance.jobs.listing import list_jobs as list_use_case

    caller = caller_of(router.current_event.raw_event)
    svc = current(JobsApi)
    page = list_use_case(
        caller,
        team=team,
        state=state,
        limit=limit,
        next_token=nextToken,
        jobs=svc.jobs,
        policy=svc.policy,
    )
    # the documented model is the answer's: a member it does not describe fails here
    answer = api_contract.JobPage.model_validate(page)
    return json_response(200, answer.model_dump(mode="json", exclude_unset=True))
