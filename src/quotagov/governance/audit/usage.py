"""What a quota share holds at the time of an audited change, from Batch's own listing.

``ListServiceJobs`` (all pages, filtered on ``QUOTA_SHARE_NAME``) gives the jobs in each
status; jobs the change itself already stopped (preempted back to ``RUNNABLE`` or
``FAILED`` since the change) are counted with the capacity they held, so a change Batch
acted on before its event arrived is still judged against the use at the time of the
change. Failing calls are reported in ``errors`` and never raise.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from quotagov.batch_semantics import HOLDING_STATUSES
from quotagov.governance.audit.findings import ShareUsage
from quotagov.governance.ports import BatchError, BatchPort


class ShareUsageReader:
    """Reads a share's use through the Batch port.

    Args:
        batch: ``ListServiceJobs`` and ``DescribeServiceJob``.
    """

    def __init__(self, batch: BatchPort) -> None:
        self._batch = batch

    def _list(self, queue: str, share: str, status: str, errors: list[str]) -> list[dict[str, Any]]:
        """Every ``ListServiceJobs`` summary of ``share`` in ``status`` (all pages)."""
        request: dict[str, Any] = {
            "jobQueue": queue,
            "jobStatus": status,
            "filters": [{"name": "QUOTA_SHARE_NAME", "values": [share]}],
        }
        jobs: list[dict[str, Any]] = []
        try:
            while True:
                page = self._batch.list_service_jobs(**request)
                jobs += [
                    job
                    for job in page.get("jobSummaryList", [])
                    if job.get("quotaShareName") in (None, share)
                ]
                if not page.get("nextToken"):
                    return jobs
                request["nextToken"] = page["nextToken"]
        except BatchError as exc:
            errors.append(f"ListServiceJobs {status} for quota share {share}: {exc}")
            return jobs

    def _stopped_by_change(
        self, job: Mapping[str, Any], since_ms: int, errors: list[str]
    ) -> list[dict[str, Any]] | None:
        """The capacity a job held when the change was made, if the change stopped it.

        A ``RUNNABLE`` job whose ``preemptionSummary`` shows an attempt stopped at or after
        ``since_ms`` was preempted since the change; a ``FAILED`` job stopped since then
        was terminated (retries exhausted, or the share deleted). Returns that job's
        ``capacityUsage`` (or the payload's ``InstanceType`` x ``InstanceCount``), else None.
        """
        if job.get("status") == "FAILED" and int(job.get("stoppedAt") or 0) < since_ms:
            return None
        try:
            described = self._batch.describe_service_job(jobId=str(job["jobId"]))
        except BatchError as exc:
            errors.append(f"DescribeServiceJob {job.get('jobId')}: {exc}")
            return None
        if job.get("status") == "RUNNABLE":
            attempts = (described.get("preemptionSummary") or {}).get(
                "recentPreemptedAttempts"
            ) or []
            if not any(int(a.get("stoppedAt") or 0) >= since_ms for a in attempts):
                return None
        usage = [dict(u) for u in described.get("capacityUsage") or []]
        if usage:
            return usage
        try:
            config = json.loads(str(described.get("serviceRequestPayload")))["ResourceConfig"]
            return [{"capacityUnit": config["InstanceType"], "quantity": config["InstanceCount"]}]
        except (ValueError, KeyError, TypeError):
            return []

    def usage(
        self,
        queue: str,
        share: str,
        states: tuple[str, ...],
        errors: list[str],
        *,
        since_ms: int | None = None,
    ) -> ShareUsage:
        """What ``share`` holds now in ``states``; with ``since_ms``, plus the jobs the
        change already stopped (so a change Batch acted on before this event arrived
        is still judged against the use at the time of the change)."""
        capacity: dict[str, float] = {}
        holding: list[str] = []
        active: list[str] = []
        stopped: list[str] = []

        def count(usage: Iterable[Mapping[str, Any]]) -> None:
            for use in usage:
                unit = str(use["capacityUnit"])
                capacity[unit] = capacity.get(unit, 0.0) + float(use["quantity"])

        for status in states:
            for job in self._list(queue, share, status, errors):
                active.append(str(job["jobId"]))
                if status in HOLDING_STATUSES:
                    holding.append(str(job["jobId"]))
                    count(job.get("capacityUsage") or [])
        if since_ms is not None:
            for status in ("RUNNABLE", "FAILED"):
                for job in self._list(queue, share, status, errors):
                    usage = self._stopped_by_change(job, since_ms, errors)
                    if usage is None:
                        continue
                    stopped.append(str(job["jobId"]))
                    holding.append(str(job["jobId"]))
                    active.append(str(job["jobId"]))
                    count(usage)
        return ShareUsage(
            capacity,
            tuple(holding),
            tuple(sorted(set(active))),
            stopped_jobs=tuple(stopped),
        )
