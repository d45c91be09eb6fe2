"""``quotagov history export``: a job queue's service jobs as JSON lines for ``whatif``.

Reads through the Batch port (:class:`~quotagov.governance.ports.BatchPort`):

- ``ListServiceJobs`` with the filter ``AFTER_CREATED_AT`` (``--since``, epoch
  milliseconds as a string; 0 without ``--since``), which lists every status (AWS Batch
  API Reference, "ListServiceJobs",
  https://docs.aws.amazon.com/batch/latest/APIReference/API_ListServiceJobs.html: a
  filter makes ``jobStatus`` ignored; without filter and status only RUNNING jobs are
  listed), page by page (``nextToken``, ``maxResults`` 100);
- ``DescribeServiceJob`` for each listed job (tags, attempts, payload, priority).

Throttle-aware: a ``TooManyRequestsException`` (:class:`BatchThrottledError`) is
retried after an exponential backoff (``base_delay`` doubled each time, at most
``max_delay``), up to ``max_retries`` times per call; the count is in the summary.
Any other Batch error stops the export (lines already written stay, each complete).

One line per job (seconds since the epoch, floats)::

    {"jobName", "jobId", "submissionId", "status", "team", "workloadClass", "priorityLevel",
     "quotaShareName", "schedulingPriority", "instanceType", "instanceCount",
     "submittedAt", "startedAt", "stoppedAt", "attempts": [{"startedAt", "stoppedAt"}],
     "preemptions", "checkpointIntervalSeconds"}

plus ``statusReason`` (why a job ended as it did: ``RETRIES_EXHAUSTED``, a terminate
call's reason). Lines of another kind carry ``"record"``: ``"apiCall"`` lines
(:func:`api_call_line`) are the mutating Batch calls that change a job or a share after
submission (``UpdateServiceJob``, ``UpdateQuotaShare``, ``TerminateServiceJob``), from
CloudTrail's record of them; the local runtime writes them (``quotagov demo
--history-out``), the AWS export does not read CloudTrail yet.

``team``, ``workloadClass``, ``priorityLevel`` and ``checkpointIntervalSeconds`` come
from quotagov's tags, and only for a job quotagov submitted (it carries
``quotagov:submissionId``, in ``submissionId``): a job submitted around quotagov gets
nulls there, whatever tags it carries, so a forged ``quotagov:team`` tag cannot place
it in a team (``whatif`` places such jobs by share with ``--map``). Instance type and
count come from the payload's ``ResourceConfig``.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from quotagov.governance.ports import BatchPort, BatchThrottledError
from quotagov.governance.submission.to_batch import CHECKPOINT_TAG, SUBMISSION_TAG

#: ``maxResults`` of each ``ListServiceJobs`` page (Batch's ceiling).
PAGE_SIZE = 100


@dataclass
class ExportSummary:
    """What an export did: jobs written, pages read, throttled calls retried."""

    jobs: int = 0
    pages: int = 0
    throttled: int = 0


def _seconds(ms: Any) -> float | None:
    return None if ms is None else float(ms) / 1000


def history_line(job: Mapping[str, Any]) -> dict[str, Any]:
    """The history record of one ``DescribeServiceJob`` response."""
    tags = job.get("tags") or {}
    submission = tags.get(SUBMISSION_TAG)
    if not submission:
        tags = {}  # submitted around quotagov: its tags say nothing about team or class
    resources: Mapping[str, Any] = {}
    try:
        payload = json.loads(job.get("serviceRequestPayload") or "{}")
        resources = payload.get("ResourceConfig") or {}
    except (TypeError, ValueError):
        pass
    usage = (job.get("capacityUsage") or [{}])[0]
    interval = tags.get(CHECKPOINT_TAG)
    return {
        "jobName": job.get("jobName"),
        "jobId": job.get("jobId"),
        "submissionId": submission or None,
        "status": job.get("status"),
        "statusReason": job.get("statusReason"),
        "team": tags.get("quotagov:team"),
        "workloadClass": tags.get("quotagov:workloadClass"),
        "priorityLevel": tags.get("quotagov:priorityLevel"),
        "quotaShareName": job.get("quotaShareName"),
        "schedulingPriority": job.get("schedulingPriority"),
        "instanceType": resources.get("InstanceType") or usage.get("capacityUnit"),
        "instanceCount": int(resources.get("InstanceCount") or usage.get("quantity") or 1),
        "submittedAt": _seconds(job.get("createdAt")),
        "startedAt": _seconds(job.get("startedAt")),
        "stoppedAt": _seconds(job.get("stoppedAt")),
        "attempts": [
            {"startedAt": _seconds(a.get("startedAt")), "stoppedAt": _seconds(a.get("stoppedAt"))}
            for a in job.get("attempts") or []
        ],
        "preemptions": (job.get("preemptionSummary") or {}).get("preemptedAttemptCount", 0),
        "checkpointIntervalSeconds": float(interval) if interval else None,
    }


#: The calls :func:`api_call_line` keeps: the ones that change a submitted job or a share.
REPLAYED_CALLS = ("UpdateServiceJob", "UpdateQuotaShare", "TerminateServiceJob")


def api_call_line(detail: Mapping[str, Any]) -> dict[str, Any] | None:
    """The history line of one CloudTrail record of a Batch call, or None to leave out.

    ``detail`` is a CloudTrail record (the ``detail`` of an EventBridge ``AWS API Call
    via CloudTrail`` event: ``eventName``, ``eventTime`` ISO 8601, ``requestParameters``,
    ``errorCode`` on a refused call; AWS CloudTrail User Guide, "CloudTrail record
    contents",
    https://docs.aws.amazon.com/awscloudtrail/latest/userguide/cloudtrail-event-reference-record-contents.html).
    Kept: the successful calls of :data:`REPLAYED_CALLS`, as
    ``{"record": "apiCall", "eventName", "eventTime" (epoch seconds), "requestParameters"}``.
    """
    name = detail.get("eventName")
    if name not in REPLAYED_CALLS or detail.get("errorCode"):
        return None
    when = datetime.datetime.fromisoformat(str(detail["eventTime"]).replace("Z", "+00:00"))
    return {
        "record": "apiCall",
        "eventName": name,
        "eventTime": when.timestamp(),
        "requestParameters": dict(detail.get("requestParameters") or {}),
    }


def export_history(
    batch: BatchPort,
    job_queue: str,
    out: TextIO,
    *,
    since: float | None = None,
    sleep: Callable[[float], None],
    max_retries: int = 8,
    base_delay: float = 0.5,
    max_delay: float = 20.0,
) -> ExportSummary:
    """Write every service job of ``job_queue`` created after ``since`` to ``out``.

    Args:
        batch: the Batch port.
        job_queue: the job queue (name or ARN).
        out: where the JSON lines go.
        since: epoch seconds; None = every job Batch still lists.
        sleep: how to wait between throttled retries (``time.sleep``; tests pass a fake).
        max_retries: retries of one throttled call before giving up.
        base_delay, max_delay: the backoff, seconds.

    Returns:
        The summary (jobs, pages, throttled retries).

    Raises:
        BatchThrottledError: a call still throttled after ``max_retries`` retries.
        BatchError: any other failing call.
    """
    summary = ExportSummary()

    def call(fn: Callable[..., dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        delay = base_delay
        for attempt in range(max_retries + 1):
            try:
                return fn(**kwargs)
            except BatchThrottledError:
                if attempt == max_retries:
                    raise
                summary.throttled += 1
                sleep(delay)
                delay = min(max_delay, delay * 2)
        raise AssertionError("unreachable")

    after_ms = str(int((since or 0) * 1000))
    request: dict[str, Any] = {
        "jobQueue": job_queue,
        "maxResults": PAGE_SIZE,
        "filters": [{"name": "AFTER_CREATED_AT", "values": [after_ms]}],
    }
    while True:
        page = call(batch.list_service_jobs, **request)
        summary.pages += 1
        for item in page.get("jobSummaryList", []):
            job = call(batch.describe_service_job, jobId=item["jobId"])
            out.write(json.dumps(history_line(job), sort_keys=True) + "\n")
            summary.jobs += 1
        token = page.get("nextToken")
        if not token:
            return summary
        request["nextToken"] = token
