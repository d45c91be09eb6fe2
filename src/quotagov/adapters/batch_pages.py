"""Walking every page of ``ListServiceJobs`` and ``ListQuotaShares`` through a Batch port.

Works with any :class:`~quotagov.governance.ports.BatchPort` (boto3 or simulated),
because it only follows ``nextToken`` the way the API defines it. Errors are the
port's (:class:`~quotagov.governance.ports.BatchError` and subclasses).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from quotagov.governance.ports import BatchPort


def iter_service_jobs(batch: BatchPort, **request: Any) -> Iterator[dict[str, Any]]:
    """Yield every ``ServiceJobSummary`` of ``ListServiceJobs(**request)``, page by page.

    ``request`` takes the API's members (``jobQueue``, ``jobStatus``, ``filters``,
    ``maxResults``); ``nextToken`` is managed here. Remember that with neither
    ``jobStatus`` nor ``filters`` Batch lists only RUNNING jobs (AWS Batch API Reference,
    "ListServiceJobs",
    https://docs.aws.amazon.com/batch/latest/APIReference/API_ListServiceJobs.html).
    """
    params = {k: v for k, v in request.items() if k != "nextToken"}
    while True:
        page = batch.list_service_jobs(**params)
        yield from page.get("jobSummaryList", [])
        token = page.get("nextToken")
        if not token:
            return
        params["nextToken"] = token


def iter_quota_shares(
    batch: BatchPort, *, jobQueue: str, maxResults: int | None = None
) -> Iterator[dict[str, Any]]:
    """Yield every ``QuotaShareDetail`` of the job queue ``jobQueue`` (name or ARN)."""
    params: dict[str, Any] = {"jobQueue": jobQueue}
    if maxResults is not None:
        params["maxResults"] = maxResults
    while True:
        page = batch.list_quota_shares(**params)
        yield from page.get("quotaShares", [])
        token = page.get("nextToken")
        if not token:
            return
        params["nextToken"] = token
