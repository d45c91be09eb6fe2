"""Listing in the simulated Batch: ``maxResults``, ``nextToken`` pages, ``ListServiceJobs`` filters.

Batch's rules (AWS Batch API Reference, "ListServiceJobs",
https://docs.aws.amazon.com/batch/latest/APIReference/API_ListServiceJobs.html):
``maxResults`` 1-100; without ``jobStatus`` and
without a filter only RUNNING jobs are listed; at most one filter; with a filter
``jobStatus`` is ignored except for ``SHARE_IDENTIFIER`` and ``QUOTA_SHARE_NAME``;
``JOB_NAME`` matches case-insensitively, a trailing ``*`` matching a prefix; the
created-at bounds are epoch milliseconds as strings.

Choices where AWS is vague, documented here once:

- ``ListServiceJobs`` sorts newest first (``createdAt``, then submission order) with
  or without a filter; its ``nextToken`` carries the last job's sort key, so it stays
  valid while jobs are added. ``ListQuotaShares`` pages by offset in creation order.
- ``nextToken`` is opaque (URL-safe base64 of a JSON object); anything else is
  refused with "nextToken: not a token this API returned."
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from quotagov_tools.simbatch.errors import client_error
from quotagov_tools.simbatch.records import ServiceJob

#: ``maxResults`` ceiling (and default) of the list operations.
MAX_LIST_RESULTS = 100
#: The ``ListServiceJobs`` filter names.
FILTERS = (
    "JOB_NAME",
    "BEFORE_CREATED_AT",
    "AFTER_CREATED_AT",
    "SHARE_IDENTIFIER",
    "QUOTA_SHARE_NAME",
)
#: Filters after which ``jobStatus`` still applies.
_STATUS_KEEPING_FILTERS = ("SHARE_IDENTIFIER", "QUOTA_SHARE_NAME")
_BAD_TOKEN = "nextToken: not a token this API returned."

T = TypeVar("T")


def max_results(operation: str, request: Mapping[str, Any]) -> int:
    """``maxResults`` of ``request`` (default :data:`MAX_LIST_RESULTS`).

    Raises:
        BatchClientError: outside 1-100.
    """
    size = int(request.get("maxResults", MAX_LIST_RESULTS))
    if not 1 <= size <= MAX_LIST_RESULTS:
        raise client_error(operation, f"maxResults: {size} is outside 1-{MAX_LIST_RESULTS}.")
    return size


def offset_page(
    operation: str, items: Sequence[T], request: Mapping[str, Any], size: int
) -> tuple[Sequence[T], str | None]:
    """One page of ``items`` from the request's ``nextToken`` offset, and the next token.

    Raises:
        BatchClientError: a ``nextToken`` this API did not return.
    """
    start = 0
    if "nextToken" in request:
        start = _decode_offset(operation, request["nextToken"])
    page = items[start : start + size]
    token = _encode({"offset": start + size}) if start + size < len(items) else None
    return page, token


def newest_first_page(
    operation: str, jobs: list[ServiceJob], request: Mapping[str, Any], size: int
) -> tuple[list[ServiceJob], str | None]:
    """One page of ``jobs`` newest first, after the request's ``nextToken``, and the next token.

    Raises:
        BatchClientError: a ``nextToken`` this API did not return.
    """
    jobs = sorted(jobs, key=lambda j: (j.created_at, j.seq), reverse=True)
    if "nextToken" in request:
        after = _decode_key(operation, request["nextToken"])
        jobs = [j for j in jobs if (j.created_at, j.seq) < after]
    page = jobs[:size]
    token = None
    if len(jobs) > size:
        last = page[-1]
        token = _encode({"createdAt": last.created_at, "seq": last.seq})
    return page, token


def select_jobs(
    operation: str, jobs: list[ServiceJob], request: Mapping[str, Any]
) -> list[ServiceJob]:
    """The ``jobs`` that ``ListServiceJobs``'s ``jobStatus`` and ``filters`` keep.

    Raises:
        BatchClientError: more than one filter, an unknown filter name, no values, or
            a created-at bound that is not epoch milliseconds.
    """
    status = request.get("jobStatus")
    filters = request.get("filters") or []
    if len(filters) > 1:
        raise client_error(operation, "filters: only one filter can be used at a time.")
    if not filters:
        return [j for j in jobs if j.status == (status or "RUNNING")]
    jobs = _filtered(operation, jobs, filters[0])
    if filters[0].get("name") in _STATUS_KEEPING_FILTERS and status:
        jobs = [j for j in jobs if j.status == status]
    return jobs


def _filtered(operation: str, jobs: list[ServiceJob], spec: Mapping[str, Any]) -> list[ServiceJob]:
    name = spec.get("name")
    values = [str(v) for v in spec.get("values") or []]
    if name not in FILTERS:
        raise client_error(
            operation, f"filters[0].name: {name!r} is not one of {', '.join(FILTERS)}."
        )
    if not values:
        raise client_error(operation, "filters[0].values: at least one value is required.")
    test = _filter_test(operation, name, values)
    return [j for j in jobs if test(j)]


def _filter_test(operation: str, name: str, values: list[str]) -> Callable[[ServiceJob], bool]:
    if name == "JOB_NAME":
        return lambda j: any(_name_matches(j.job_name, v) for v in values)
    if name in ("BEFORE_CREATED_AT", "AFTER_CREATED_AT"):
        try:
            bound = int(values[0])
        except ValueError:
            raise client_error(
                operation, f"filters[0].values: {values[0]!r} is not epoch milliseconds."
            ) from None
        if name == "BEFORE_CREATED_AT":
            return lambda j: j.created_at < bound
        return lambda j: j.created_at > bound
    if name == "QUOTA_SHARE_NAME":
        return lambda j: j.quota_share_name in values
    return lambda j: j.request.get("shareIdentifier") in values


def _name_matches(job_name: str, pattern: str) -> bool:
    if pattern.endswith("*"):
        return job_name.lower().startswith(pattern[:-1].lower())
    return job_name.lower() == pattern.lower()


def _encode(data: Mapping[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, sort_keys=True).encode()).decode()


def _decode(operation: str, token: str) -> dict[str, Any]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, binascii.Error):
        raise client_error(operation, _BAD_TOKEN) from None
    if not isinstance(data, dict):
        raise client_error(operation, _BAD_TOKEN)
    return data


def _decode_offset(operation: str, token: str) -> int:
    offset = _decode(operation, token).get("offset")
    if not isinstance(offset, int) or offset < 0:
        raise client_error(operation, _BAD_TOKEN)
    return offset


def _decode_key(operation: str, token: str) -> tuple[int, int]:
    data = _decode(operation, token)
    created, seq = data.get("createdAt"), data.get("seq")
    if not isinstance(created, int) or not isinstance(seq, int):
        raise client_error(operation, _BAD_TOKEN)
    return created, seq
