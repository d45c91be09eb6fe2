"""``GET /jobs/{jobId}``: a submission's state, routing, reasons and Batch position.

Replies 200 with :func:`quotagov.governance.job_view.job_view` (plus ``chain.links``, the
whole resubmission chain from :func:`quotagov.governance.job_chain.chain_links`), 403
when the caller is neither the submitter nor a member of the submission's team, 404 when
unknown.
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path

from quotagov.handlers.api_errors import json_response
from quotagov.handlers.identity import principal_of

router = Router()  # type: ignore[no-untyped-call]


@router.get(
    "/jobs/<jobId>",
    summary="Show a submission",
    tags=["jobs"],
    operation_id="getJob",
)
def get_job(
    jobId: Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_-]+$")],
) -> Response[str]:
    """The view of submission ``jobId`` (the submission id returned by ``POST /jobs``)."""
    from quotagov.governance.job_view import job_view
    from quotagov.wiring import services

    svc = services()
    record = svc.jobs.get(jobId)
    if record is None:
        return json_response(404, {"message": f"no submission {jobId}"})
    principal = principal_of(router.current_event.raw_event)
    team = svc.policy.teams.get(record.team)
    members = {m.principal for m in team.members} if team else set()
    if not principal or (principal != record.principal and principal not in members):
        return json_response(
            403, {"message": f"{principal or '(anonymous)'} may not see submission {jobId}"}
        )
    view = job_view(record, svc.batch, svc.settings.job_queue)
    view["chain"]["links"] = _chain_links(jobId, svc.jobs)
    return json_response(200, view)


def _chain_links(job_id: str, jobs: Any) -> list[dict[str, Any]]:
    """Every record of the job's resubmission chain (``quotagov.governance.job_chain``)."""
    from quotagov.governance.job_chain import chain_links

    def get(submission_id: str) -> dict[str, Any] | None:
        found = jobs.get(submission_id)
        return found.to_item() if found is not None else None

    return chain_links(job_id, get)
