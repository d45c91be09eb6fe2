"""``GET /jobs?team=&state=``: a team's submissions, newest first, page by page.

Answer::

    {"jobs": [{"submissionId", "jobName", "state", "batchStatus", "quotaShareName",
               "schedulingPriority", "priorityLevel", "principal", "createdAt",
               "updatedAt", "preemptionCount"}, ...],   # instants ISO 8601 UTC
     "nextToken": "..." | null}

Rules (why a job waits, ``docs/design.md``, "People and operators are told"; and
"Trust model"):

* ``team`` is required and the caller must be a member of it (checked before anything
  is read, so a non-member learns nothing, not even whether the team has jobs);
* ``state`` filters on the submission state (``QUEUED``, ``SUBMITTED``, ``REFUSED``,
  ``FAILED``) or on the Batch status the job-state handler recorded
  (``RUNNABLE``, ``RUNNING``, ``SUCCEEDED``, ...);
* ``limit`` 1-100 (default 25); ``nextToken`` is opaque, bound to the team it was
  issued for: a token of another listing is a 400, never a way into another team.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from quotagov import api_times
from quotagov.batch_semantics import SERVICE_JOB_STATUSES
from quotagov.governance.access import team_member
from quotagov.governance.errors import ForbiddenError, InvalidRequestError
from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.ports import JobsRepository
from quotagov.policy.models import Policy

DEFAULT_LIMIT = 25
MAX_LIMIT = 100


class ListForbiddenError(ForbiddenError):
    """The caller is not a member of the team whose jobs were asked for."""


def list_jobs(
    caller: str,
    *,
    team: str | None,
    state: str | None,
    limit: int | None,
    next_token: str | None,
    jobs: JobsRepository,
    policy: Policy,
) -> dict[str, Any]:
    """One page of ``team``'s jobs for ``caller`` (see the module docstring).

    Raises:
        InvalidRequestError: naming each bad query parameter (``team`` missing,
            ``state`` unknown, ``limit`` out of 1-100, ``nextToken`` not one of this
            listing's).
        ListForbiddenError: ``caller`` is not a member of ``team``.
    """
    if not team:
        raise InvalidRequestError(
            "team is required", [("query.team", "required: the team whose jobs to list")]
        )
    if not caller or team_member(policy, team, caller) is None:
        raise ListForbiddenError(f"{caller or '(anonymous)'} may not list the jobs of {team!r}")
    faults: list[tuple[str, str]] = []
    keep = _state_filter(state, faults)
    size = DEFAULT_LIMIT if limit is None else limit
    if not 1 <= size <= MAX_LIMIT:
        faults.append(("query.limit", f"{size} is outside 1-{MAX_LIMIT}"))
    start = _decode(next_token, team, faults) if next_token else None
    if faults:
        raise InvalidRequestError("invalid query", faults)
    try:
        records, key = jobs.list_team(team, limit=size, start=start, keep=keep)
    except ValueError:  # the repository refused the start key: not this team's
        raise InvalidRequestError(
            "invalid query", [("query.nextToken", "not a token of this listing")]
        ) from None
    return {
        "jobs": [_summary(r) for r in records],
        "nextToken": _encode(team, key) if key else None,
    }


def _state_filter(
    state: str | None, faults: list[tuple[str, str]]
) -> Callable[[JobRecord], bool] | None:
    if not state:
        return None
    if state in SubmissionState.__members__:
        return lambda r: r.state.value == state
    if state in SERVICE_JOB_STATUSES:
        return lambda r: _batch_status(r) == state
    known = ", ".join(dict.fromkeys([*SubmissionState.__members__, *SERVICE_JOB_STATUSES]))
    faults.append(("query.state", f"unknown state {state!r} (one of {known})"))
    return None


def _batch_status(record: JobRecord) -> str | None:
    return record.jobState.status if record.jobState and record.jobState.status else None


def _summary(record: JobRecord) -> dict[str, Any]:
    return {
        "submissionId": record.pk,
        "jobName": record.jobName,
        "state": record.state.value,
        "batchStatus": _batch_status(record),
        "quotaShareName": record.quotaShareName,
        "schedulingPriority": record.schedulingPriority,
        "priorityLevel": record.priorityLevel,
        "principal": record.principal,
        "createdAt": api_times.from_seconds(record.createdAt),
        "updatedAt": api_times.from_seconds(record.updatedAt),
        "preemptionCount": record.jobState.preemptionCount if record.jobState else 0,
    }


def _encode(team: str, key: dict[str, Any]) -> str:
    raw = json.dumps({"team": team, "key": key}, sort_keys=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode(token: str, team: str, faults: list[tuple[str, str]]) -> dict[str, Any] | None:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        key = data["key"]
        ok = (
            data["team"] == team
            and isinstance(key, dict)
            and all(isinstance(v, str | int) and not isinstance(v, bool) for v in key.values())
        )
    except (ValueError, KeyError, TypeError, binascii.Error):
        ok = False
    if not ok:
        faults.append(("query.nextToken", "not a token of this listing"))
        return None
    return dict(key)
