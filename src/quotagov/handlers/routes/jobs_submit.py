"""``POST /jobs``: submit a training job for routing (202, 400, 401, 403, 422, 503).

Replies:

* 202 ``{"submissionId", "state": "QUEUED", "quotaShareName", "schedulingPriority",
  "preemptionRetriesBeforeTermination", "batchJobId"}`` (also for a retry of an
  accepted ``clientRequestId``);
* 400 ``{"message", "faults": ["<field path>: <fault>", ...]}`` for schema faults;
* 401 ``{"message"}`` without a caller in the request context;
* 403 ``{"message"}`` when the caller is not a member of the team
  (:class:`~quotagov.governance.routing.NotATeamMemberError`);
* 422 ``{"submissionId", "state": "REFUSED", "reasons": [...]}`` for policy refusals
  (the refused submission is stored; ``GET /jobs/{jobId}`` shows it), or ``"FAILED"``
  for a retry of a submission that failed for good;
* 503 ``{"message", "submissionId"}`` when the submission queue is unavailable
  (:class:`~quotagov.governance.submission.SubmissionUnavailableError`); the record is
  ``FAILED`` until the same request (same ``clientRequestId``) is sent again, which
  moves it back to ``QUEUED`` and answers 202. Without a ``clientRequestId`` a retry is
  a new submission.

Error answers come from the one table in :mod:`quotagov.handlers.api_errors`.
Metrics: ``SubmissionsAccepted`` by ``team`` and ``quotaShareName``,
``SubmissionsRefusedByPolicy`` by ``team`` (:func:`quotagov.handlers.metrics.emit`).
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.metrics import MetricUnit

from quotagov.governance.submission_request import SubmissionRequest
from quotagov.handlers.api_errors import json_response
from quotagov.handlers.identity import caller_of
from quotagov.handlers.metrics import emit
from quotagov.wiring import services

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
    from quotagov.governance.records import SubmissionState
    from quotagov.governance.submission import receive_submission

    principal = caller_of(router.current_event.raw_event)
    record = receive_submission(submission, principal, services().submission(queue=True)).record
    if record.state in (SubmissionState.REFUSED, SubmissionState.FAILED):
        emit("SubmissionsRefusedByPolicy", MetricUnit.Count, 1, team=record.team)
        return json_response(
            422,
            {"submissionId": record.pk, "state": str(record.state), "reasons": record.reasons},
        )
    emit(
        "SubmissionsAccepted",
        MetricUnit.Count,
        1,
        team=record.team,
        quotaShareName=record.quotaShareName,
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
