"""``POST /jobs``: submit a training job for routing (202, 400, 401, 403, 422, 503).

Replies:

* 202 ``{"submissionId", "state": "QUEUED", "quotaShareName", "schedulingPriority",
  "preemptionRetriesBeforeTermination", "batchJobId"}`` (also for a retry of an
  accepted ``clientRequestId``);
* 400 ``{"message", "faults": [{"path", "fault"}, ...]}`` for schema faults and for
  faults of the training request (botocore's SageMaker model and the rules it lacks,
  :mod:`quotagov.handlers.submission_checks`), before anything is stored; 415 for a
  body that is not JSON;
* 401 ``{"message"}`` without a caller in the request context;
* 409 ``{"message", "clientRequestId", "field", "submissionId"}`` when the same caller
  used the ``clientRequestId`` before for a different request (the first differing
  ``field``); nothing is stored or queued;
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

from quotagov.composition import JobsApi, current
from quotagov.governance.submission.request import SubmissionRequest
from quotagov.handlers import api_contract
from quotagov.handlers.api_errors import json_response
from quotagov.handlers.identity import caller_of
from quotagov.handlers.metrics import emit

router = Router()  # type: ignore[no-untyped-call]


@router.post(
    "/jobs",
    summary="Submit a training job",
    description="Routes the job with the governance policy and queues it for Batch.",
    tags=["jobs"],
    operation_id="submitJob",
    responses=api_contract.responses(
        400,
        401,
        403,
        415,
        503,
        s202=api_contract.ok(
            api_contract.SubmissionAccepted,
            "accepted: stored and queued for Batch (also a retry of an accepted request)",
            {
                "submissionId": "8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f",
                "state": "QUEUED",
                "quotaShareName": "background",
                "schedulingPriority": 10,
                "preemptionRetriesBeforeTermination": 3,
                "batchJobId": None,
            },
        ),
        s409=api_contract.ok(
            api_contract.IdempotencyMismatch,
            "the clientRequestId was used before for a different request",
            {
                "message": "clientRequestId 'sweep-017-try-1' was used for a different request "
                "(serviceRequestPayload.ResourceConfig.InstanceCount differs); use a new "
                "clientRequestId for a new request",
                "clientRequestId": "sweep-017-try-1",
                "field": "serviceRequestPayload.ResourceConfig.InstanceCount",
                "submissionId": "8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f",
            },
        ),
        s422=api_contract.ok(
            api_contract.SubmissionRefused,
            "refused by the governance policy (stored REFUSED, with every reason)",
            {
                "submissionId": "8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f",
                "state": "REFUSED",
                "reasons": [
                    "quotaShareName: share 'background' has in-share preemption ENABLED and "
                    "class 'scheduled' does not checkpoint"
                ],
            },
        ),
    ),
)
def submit_job(submission: Annotated[SubmissionRequest, Body()]) -> Response[str]:
    """Receive ``submission`` from the caller in the request context."""
    from quotagov.governance.model.job import SubmissionState
    from quotagov.governance.submission import receive_submission
    from quotagov.handlers.submission_checks import check_submission

    principal = caller_of(router.current_event.raw_event)
    check_submission(submission)
    record = receive_submission(submission, principal, current(JobsApi).submission).record
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
