"""The resubmission chain of a job, for ``GET /jobs/{jobId}``.

A disposition that resubmits or reclassifies a job creates a successor record linked
both ways (``predecessorId`` on the successor, ``successorIds`` on the predecessor,
``originalId``/``resubmitCount`` on every successor; see
:mod:`quotagov.governance.dispositions.successor`). The chain is linear: each record
has at most one successor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quotagov.governance.dispositions.record import DispositionRecord
from quotagov.governance.model.job import JobRecord

#: Keys of each record's stored disposition shown in its link (when set).
LINK_DISPOSITION_KEYS = ("status", "trigger", "choice", "decidedBy", "targetShare")

#: Longest chain walked (``maxResubmits`` is small; this only guards against a cycle).
MAX_CHAIN_LENGTH = 100

Getter = Callable[[str], JobRecord | None]


def chain_links(job_id: str, get: Getter) -> list[dict[str, Any]]:
    """Every record of ``job_id``'s chain, original first.

    Args:
        job_id: any submission id of the chain.
        get: reads a record by submission id, None if absent.

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
    while first.predecessorId and len(seen) < MAX_CHAIN_LENGTH:
        previous = get(first.predecessorId)
        if previous is None or previous.pk in seen:
            break
        seen.add(previous.pk)
        first = previous
    links = [_link(first)]
    current = first
    walked = {first.pk}
    while current.successorIds and len(links) < MAX_CHAIN_LENGTH:
        following = get(current.successorIds[-1])
        if following is None or following.pk in walked:
            break
        walked.add(following.pk)
        links.append(_link(following))
        current = following
    return links


def _link(record: JobRecord) -> dict[str, Any]:
    """One record's link (shape: :func:`chain_links`)."""
    state = record.jobState
    link: dict[str, Any] = {
        "submissionId": record.pk,
        "quotaShareName": record.quotaShareName,
        "state": record.state.value,
        "batchJobId": record.batchJobId,
        "status": state.status if state else None,
        "preemptionCount": state.preemptionCount if state else 0,
        "resubmitCount": record.resubmitCount,
    }
    if record.disposition is not None:
        stored = DispositionRecord.from_item(record.disposition.to_item()).to_item()
        link["disposition"] = {k: stored[k] for k in LINK_DISPOSITION_KEYS if k in stored}
    return link
