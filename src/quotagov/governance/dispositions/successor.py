"""The successor of a job: the new submission a ``resubmit``/``reclassify`` creates.

A successor is the predecessor's submission (every field :class:`JobRecord` declares:
team, class, principal, payload, routing, ...) with the fields that make it a new
submission in the chain set afresh (:func:`successor_record`). What other use
cases add to the predecessor (``jobState``, ``disposition``, the failure, the
re-queues, ...) is set afresh or left out. The chain (``docs/design.md``,
"Job-state handling and retry exhaustion"): ``predecessorId`` on the successor,
``successorIds`` on the predecessor, ``originalId``/``resubmitCount`` on every successor.

It goes to Batch with the submission path's own ``SubmitServiceJob`` request
(:func:`submit_with_batch`).
"""

from __future__ import annotations

import re
from typing import Any

from quotagov.governance.dispositions.record import DispositionRecord
from quotagov.governance.dispositions.rules import generation, original_id
from quotagov.governance.model.job import JobRecord, SubmissionState, client_token_for
from quotagov.governance.ports import BatchPort
from quotagov.governance.submission import service_job_request

#: Attributes of the predecessor that describe what happened to it, not the submission:
#: left out of its successor.
NOT_INHERITED = (
    "failureKind",
    "messageId",
    "claimedPrincipal",
    "requeueCount",
    "requeuedAt",
    "jobState",
    "jobStateFacts",
    "jobStateVersion",
    "disposition",
    "dispositionToken",
)

#: Longest Batch ``jobName`` (``SubmitServiceJob``: 1-128 letters, digits, ``-``, ``_``).
MAX_JOB_NAME = 128


def successor_record(job: JobRecord, disposition: DispositionRecord, *, now: float) -> JobRecord:
    """The successor ``disposition`` (``applying``, with ``successorId`` and
    ``targetShare``) creates for ``job``, before it is sent to Batch (``QUEUED``).

    Set afresh: ``pk`` (the successor id), ``jobName`` (``-r<n>``), ``quotaShareName``
    (the target share), the chain links, ``clientToken`` (:func:`client_token_for` of
    the original and ``n``), ``state``, ``reasons``, ``successorIds``, ``version`` 1,
    ``createdAt``/``updatedAt`` = ``now`` (whole epoch seconds), no Batch job id yet,
    and nothing of :data:`NOT_INHERITED`.
    """
    count = generation(job) + 1
    created = int(now)
    fresh: dict[str, Any] = {
        "pk": str(disposition.successor_id),
        "jobName": successor_job_name(job, count),
        "quotaShareName": str(disposition.target_share),
        "predecessorId": job.pk,
        "originalId": original_id(job),
        "resubmitCount": count,
        "clientToken": client_token_for(original_id(job), count),
        "state": SubmissionState.QUEUED,
        "reasons": [],
        "successorIds": [],
        "batchJobId": None,
        "batchJobArn": None,
        # what other use cases wrote on the predecessor belongs to it alone
        **dict.fromkeys(NOT_INHERITED),
        "version": 1,
        "createdAt": created,
        "updatedAt": created,
    }
    inherited = job.model_dump(include=set(JobRecord.model_fields))
    return JobRecord.model_validate({**inherited, **fresh})


def successor_job_name(job: JobRecord, count: int) -> str:
    """``job``'s ``jobName`` (without an earlier ``-r<n>``) + ``-r<count>``, made a valid
    Batch job name (other characters become ``-``; at most :data:`MAX_JOB_NAME`)."""
    suffix = f"-r{count}"
    base = re.sub(r"-r\d+$", "", job.jobName or f"quotagov-{job.pk}")
    return re.sub(r"[^A-Za-z0-9_-]", "-", base)[: MAX_JOB_NAME - len(suffix)] + suffix


def submit_with_batch(batch: BatchPort, successor: JobRecord, *, job_queue: str) -> dict[str, Any]:
    """Send ``successor`` with ``SubmitServiceJob``; return the response.

    The request is the submission path's own
    (:func:`quotagov.governance.submission.service_job_request`): the record's
    ``serviceRequestPayload`` unchanged, its ``schedulingPriority`` and
    ``preemptionRetriesBeforeTermination``, the successor's ``quotaShareName``, its
    deterministic ``clientToken`` (a retried call is one job) and the
    ``quotagov:submissionId`` tag. The policy was applied before, by
    :func:`~quotagov.governance.dispositions.rules.successor_faults` (routing to the
    successor's target share, not its class's first).

    Raises:
        BatchError: from the port.
    """
    return batch.submit_service_job(**service_job_request(successor, job_queue))
