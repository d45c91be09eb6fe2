"""The resubmission chain of a job, for ``GET /jobs/{jobId}``.

A disposition that resubmits or reclassifies a job creates a successor record linked
both ways (``predecessorId`` on the successor, ``successorIds`` on the predecessor,
``originalId``/``resubmitCount`` on every successor; see
:mod:`quotagov.governance.dispositions.successor`). The chain is linear: each record
has at most one successor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from quotagov.governance.dispositions.record import DispositionRecord

#: Keys of each record's stored disposition shown in its link (when set).
LINK_DISPOSITION_KEYS = ("status", "trigger", "choice", "decidedBy", "targetShare")

#: Longest chain walked (``maxResubmits`` is small; this only guards against a cycle).
MAX_CHAIN_LENGTH = 100

Getter = Callable[[str], Mapping[str, Any] | None]


def chain_links(job_id: str, get: Getter) -> list[dict[str, Any]]:
    """Every record of ``job_id``'s chain, original first.

    Args:
        job_id: any submission id of the chain.
        get: reads a record (dict of its attributes) by submission id, None if absent.

    Returns:
        One dict per record: ``submissionId``, ``quotaShareName``, ``state``,
        ``batchJobId``, ``status`` (Batch status from the job state), ``preemptionCount``,
        ``resubmitCount`` and, when the record has one, ``disposition``
        (``status``, ``trigger``, ``choice``, ``decidedBy``, ``targetShare``). Empty when
        ``job_id`` is unknown.
    """
    record = get(job_id)
    if record is None:
        return []
    seen = {job_id}
    first = record
    while first.get("predecessorId") and len(seen) < MAX_CHAIN_LENGTH:
        previous = get(str(first["predecessorId"]))
        if previous is None or str(previous["pk"]) in seen:
            break
        seen.add(str(previous["pk"]))
        first = previous
    links = [_link(first)]
    current = first
    walked = {str(first["pk"])}
    while current.get("successorIds") and len(links) < MAX_CHAIN_LENGTH:
        following = get(str(list(current["successorIds"])[-1]))
        if following is None or str(following["pk"]) in walked:
            break
        walked.add(str(following["pk"]))
        links.append(_link(following))
        current = following
    return links


def _link(record: Mapping[str, Any]) -> dict[str, Any]:
    """One record's link (shape: :func:`chain_links`)."""
    state = record.get("jobState") or {}
    link: dict[str, Any] = {
        "submissionId": record["pk"],
        "quotaShareName": record.get("quotaShareName"),
        "state": str(record.get("state", "")),
        "batchJobId": record.get("batchJobId"),
        "status": state.get("status"),
        "preemptionCount": state.get("preemptionCount", 0),
        "resubmitCount": record.get("resubmitCount", 0),
    }
    if record.get("disposition"):
        stored = DispositionRecord.from_item(record["disposition"]).to_item()
        link["disposition"] = {k: stored[k] for k in LINK_DISPOSITION_KEYS if k in stored}
    return link
