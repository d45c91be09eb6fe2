"""What ``GET /jobs/{jobId}`` shows about a submission.

Shape (JSON, absent parts left out)::

    {
      "submissionId": "...", "state": "QUEUED|SUBMITTED|REFUSED|FAILED",
      "team": "...", "workloadClass": "...", "priorityLevel": "...", "jobName": "...",
      "principal": "...", "createdAt": "2026-12-01T00:00:00Z",
      "updatedAt": "2026-12-01T00:00:30Z",
      "reasons": ["..."],                              # REFUSED / FAILED
      "quotaShareName": "...", "schedulingPriority": 10,
      "preemptionRetriesBeforeTermination": 1,
      "retryStrategy": {...}, "timeoutConfig": {...}, "tags": {...},  # when set
      "batchJobId": "...", "batchJobArn": "...",       # SUBMITTED
      "batch": {                                       # SUBMITTED: DescribeServiceJob
        "status": "RUNNABLE", "statusReason": "...", "schedulingPriority": 10,
        "frontOfShare": {                              # while waiting: GetJobQueueSnapshot
          "atFront": false, "jobArn": "...",   # jobArn: null when another team's job
          "earliestTimeAtPosition": "2026-12-01T00:01:40Z"
        },
        "waiting": {"position": {...}, "reason": {"code", "text"},   # RUNNABLE only:
                    "estimatedStartAt": ..., "estimate": {...}},    # governance.waiting
        "error": "..."                                 # when Batch could not be asked
      },
      "chain": {"predecessorId": null, "originalId": null, "successorIds": [],
                "resubmitCount": 0},
      "jobState": {"status": "RUNNING", "attemptCount": 2, "preemptionCount": 1,
                   "firstStartedAt": "...", "runningSeconds": 600.0, ...},
      "disposition": {"status": "pending-owner", "choices": [...], ...}
    }

``jobState`` and ``disposition`` are written by the job-state handler
(:mod:`quotagov.governance.job_state.updates`); its bookkeeping (the folded event facts
and the optimistic-lock version) and the kept payload are not shown. :func:`show_job`
(the use case of ``GET /jobs/{id}``) checks who asks
(:func:`quotagov.governance.access.may_view`) and adds ``chain.links``, every record of
the resubmission chain (:func:`quotagov.governance.jobs.chain.chain_links`).

One time format (:mod:`quotagov.api_times`): every instant is ISO 8601 UTC
(``2026-12-01T00:00:30Z``), whether the record keeps it in epoch seconds or Batch gives
it in epoch milliseconds; durations are seconds in members named ``...Seconds``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quotagov import api_times
from quotagov.governance.access import may_view
from quotagov.governance.errors import NotFoundError
from quotagov.governance.escalations.job_lookup import governed_job
from quotagov.governance.jobs.chain import chain_links
from quotagov.governance.jobs.waiting import WaitExplainer
from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.ports import BatchError, BatchPort, JobsRepository
from quotagov.policy.models import Policy

#: Batch statuses in which a service job is still waiting for capacity.
WAITING_STATUSES = frozenset({"SUBMITTED", "PENDING", "RUNNABLE"})

#: Instants of the ``jobState`` summary, in epoch milliseconds (the folded event facts).
JOB_STATE_MILLIS = ("firstStartedAt", "asOf")
#: Instants of each ``jobState.preemptions`` entry, in epoch milliseconds.
PREEMPTION_MILLIS = ("startedAt", "stoppedAt")
#: Instants of the ``disposition`` map, in epoch seconds.
DISPOSITION_SECONDS = (
    "openedAt",
    "decidedAt",
    "leaseUntil",
    "terminateRequestedAt",
    "terminatedAt",
    "closedAt",
)


class SubmissionNotFoundError(NotFoundError):
    """No submission has this id (a ``NotFoundError``)."""


def show_job(
    job_id: str,
    caller: str,
    *,
    jobs: JobsRepository,
    policy: Policy,
    batch: BatchPort | None,
    job_queue: str,
    waiting: WaitExplainer | None = None,
) -> dict[str, Any]:
    """The view of submission ``job_id`` for ``caller`` (a principal ARN), with
    ``chain.links`` and, for a RUNNABLE job when ``waiting`` is given, ``batch.waiting``
    (:mod:`quotagov.governance.jobs.waiting`).

    Authorization before existence (``docs/design.md``, "Trust model"): a submission ``caller``
    may not see (:func:`quotagov.governance.access.may_view`) gets the very answer of
    one that does not exist, so ids (``uuid5`` of principal and ``clientRequestId``,
    computable by anyone) cannot be probed across teams.

    Raises:
        SubmissionNotFoundError: no submission ``job_id`` that ``caller`` may see.
    """
    record = jobs.get(job_id)
    if record is None or not may_view(
        policy, team=record.team, submitter=record.principal, caller=caller
    ):
        raise SubmissionNotFoundError(f"no submission {job_id}")

    def team_of(batch_job_id: str) -> str | None:
        found = jobs.get_by_batch_job_id(batch_job_id)
        return found.team if found is not None else None

    view = job_view(record, batch, job_queue, waiting=waiting, team_of=team_of)

    view["chain"]["links"] = chain_links(job_id, jobs.get)
    return view


def job_view(
    record: JobRecord,
    batch: BatchPort | None,
    job_queue: str,
    *,
    waiting: WaitExplainer | None = None,
    team_of: Callable[[str], str | None] | None = None,
) -> dict[str, Any]:
    """The view of ``record``; asks Batch about submitted jobs when ``batch`` is given.

    ``team_of`` (a Batch service job id -> the team of its submission, None when
    quotagov did not submit it) lets ``frontOfShare`` name the job at the front of the
    share only when it is of ``record``'s team; without it, only when it is this job.
    Batch failures do not fail the view: they are reported in ``batch.error``.
    """
    view: dict[str, Any] = {
        "submissionId": record.pk,
        "state": str(record.state),
        "team": record.team,
        "workloadClass": record.workloadClass,
        "priorityLevel": record.priorityLevel,
        "jobName": record.jobName,
        "principal": record.principal,
        "source": record.source,
        "createdAt": api_times.from_seconds(record.createdAt),
        "updatedAt": api_times.from_seconds(record.updatedAt),
        "chain": {
            "predecessorId": record.predecessorId,
            "originalId": record.originalId,
            "successorIds": list(record.successorIds),
            "resubmitCount": record.resubmitCount,
        },
    }
    if record.state in (SubmissionState.REFUSED, SubmissionState.FAILED) or record.reasons:
        view["reasons"] = list(record.reasons)
    for name in ("quotaShareName", "schedulingPriority", "preemptionRetriesBeforeTermination"):
        value = getattr(record, name)
        if value is not None or record.state is SubmissionState.SUBMITTED:
            view[name] = value
    for name in ("retryStrategy", "timeoutConfig", "tags"):
        value = getattr(record, name)
        if value is not None:
            view[name] = value
    if record.batchJobId:
        view["batchJobId"] = record.batchJobId
        view["batchJobArn"] = record.batchJobArn
        if batch is not None:
            view["batch"] = _batch_view(record, batch, job_queue, waiting, team_of)
    # of the use cases' sub-models, only these two are shown
    if record.jobState is not None:
        view["jobState"] = job_state_view(
            record.jobState.model_dump(mode="json", exclude_none=True)
        )
    if record.disposition is not None:
        view["disposition"] = api_times.convert(
            record.disposition.to_item(), seconds=DISPOSITION_SECONDS
        )
    return view


def job_state_view(summary: dict[str, Any]) -> dict[str, Any]:
    """The stored ``jobState`` summary with its instants in the API's format."""
    out = api_times.convert(summary, millis=JOB_STATE_MILLIS)
    if isinstance(out.get("preemptions"), list):
        out["preemptions"] = [
            api_times.convert(p, millis=PREEMPTION_MILLIS) if isinstance(p, dict) else p
            for p in out["preemptions"]
        ]
    return out


def _batch_view(
    record: JobRecord,
    batch: BatchPort,
    job_queue: str,
    waiting: WaitExplainer | None,
    team_of: Callable[[str], str | None] | None = None,
) -> dict[str, Any]:
    assert record.batchJobId is not None
    try:
        job = batch.describe_service_job(jobId=record.batchJobId)
    except BatchError as exc:
        return {"error": f"DescribeServiceJob failed: {exc.code}: {exc.message}"}
    out: dict[str, Any] = {
        "status": job.get("status"),
        "statusReason": job.get("statusReason"),
        "schedulingPriority": job.get("schedulingPriority"),
        "quotaShareName": job.get("quotaShareName"),
    }
    if job.get("status") not in WAITING_STATUSES:
        return out
    try:
        snapshot = batch.get_job_queue_snapshot(jobQueue=job.get("jobQueue") or job_queue)
    except BatchError as exc:
        out["error"] = f"GetJobQueueSnapshot failed: {exc.code}: {exc.message}"
        return out
    share = job.get("quotaShareName") or record.quotaShareName or ""
    front = snapshot.get("frontOfQuotaShares", {}).get("quotaShares", {}).get(share, [])
    job_arn = job.get("jobArn") or record.batchJobArn
    if front:
        first = front[0]
        first_arn = str(first.get("jobArn") or "")
        at_front = first_arn == job_arn
        ours = at_front or (
            team_of is not None and team_of(first_arn.rsplit("/", 1)[-1]) == record.team
        )
        out["frontOfShare"] = {
            "atFront": at_front,
            "jobArn": first_arn if ours else None,  # another team's job is not named
            "earliestTimeAtPosition": api_times.from_millis(first.get("earliestTimeAtPosition")),
        }
    else:
        out["frontOfShare"] = {"atFront": False, "jobArn": None, "earliestTimeAtPosition": None}
    governed = governed_job(record)
    if waiting is not None and job.get("status") == "RUNNABLE" and governed is not None:
        try:
            out["waiting"] = _waiting_view(waiting.explain(governed, job).to_dict())
        except BatchError as exc:
            out["waiting"] = {"error": f"reading the queue failed: {exc.code}: {exc.message}"}
    return out


def _waiting_view(answer: dict[str, Any]) -> dict[str, Any]:
    out = api_times.convert(answer, seconds=("estimatedStartAt",))
    if isinstance(out.get("estimate"), dict):
        out["estimate"] = api_times.convert(out["estimate"], seconds=("computedAt",))
    return out
