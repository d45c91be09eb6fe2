"""``POST /jobs``: submit a training job for routing (202, 400, 403, 422, 503).

Replies:

* 202 ``{"submissionId", "state": "QUEUED", "quotaShareName", "schedulingPriority",
  "preemptionRetriesBeforeTermination"}`` (also for a retry of an accepted
  ``clientRequestId``);
* 400 ``{"message", "faults": ["<field path>: <fault>", ...]}`` for schema faults;
* 403 ``{"message"}`` when the caller is not a member of the team;
* 422 ``{"submissionId", "state": "REFUSED", "reasons": [...]}`` for policy refusals;
* 503 ``{"message", "submissionId"}`` when the submission queue is unavailable; the
  record is ``FAILED`` until the same request (same ``clientRequestId``) is sent again,
  which moves it back to ``QUEUED`` and answers 202. Without a ``clientRequestId`` a
  retry is a new submission.
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from quotagov.governance.submission_request import SubmissionRequest
from quotagov.handlers.api_errors import json_response
from quotagov.handlers.identity import principal_of

router = Router()  # type: ignore[no-untyped-call]


@router.post(
    "/jobs",
    summary="Submit a training job",
    description="Routes the job with the governance policy and queues it for Batch.",
    tags=["jobs"],
    operation_id="submitJob",
)
def submit_job(submission: Annotated[SubmissionRequest, Body()]) -> Response[str]:
    """Receive ``submission`` from the caller in the request context."""
    from quotagov.governance.ports import SubmissionQueueError
    from quotagov.governance.records import SubmissionState
    from quotagov.governance.routing import NotATeamMemberError
    from quotagov.governance.submission import receive_submission
    from quotagov.wiring import services

    principal = principal_of(router.current_event.raw_event)
    deps = services().submission(queue=True)
    try:
        outcome = receive_submission(submission, principal, deps)
    except NotATeamMemberError as exc:
        return json_response(403, {"message": str(exc)})
    except SubmissionQueueError as exc:
        return json_response(
            503, {"message": f"try again later: {exc}", "submissionId": exc.submission_id}
        )
    record = outcome.record
    if record.state in (SubmissionState.REFUSED, SubmissionState.FAILED):
        return json_response(
            422,
            {"submissionId": record.pk, "state": str(record.state), "reasons": record.reasons},
        )
    return json_response(
        202,
        {
            "submissionId": record.pk,
            "state": str(record.state),
            "quotaShareName": record.quotaShareName,
            "schedulingPriority": record.schedulingPriority,
            "preemptionRetriesBeforeTermination": record.preemptionRetriesBeforeTermination,
            "batchJobId": record.batchJobId,
        },
    )
