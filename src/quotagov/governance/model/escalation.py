"""The escalation request record and its life cycle.

Life cycle (``docs/design.md``, "Priority-escalation approvals in Slack")::

    PENDING --approve--> APPROVED --UpdateServiceJob ok--> APPLIED
       |                     |\\--UpdateServiceJob failed--> APPLY_FAILED --retry--> APPROVED
       |                     \\--Batch already at or above it--> SUPERSEDED
       |--deny--> DENIED
       \\--expiry--> EXPIRED
    (a level the team may set itself goes straight to APPLIED, ``direct`` = True)

A job has at most one *open* escalation (PENDING, APPROVED or APPLY_FAILED) at a time;
see :data:`OPEN_STATUSES`.

:data:`MOVES` is the table of every allowed move (the picture above, plus the reopening
of an approval whose impact changed: APPROVED -> PENDING, and an approval the apply
step refuses: APPROVED -> DENIED); the repository checks it before every write
(:func:`check_move`). Every move is a conditional write on the current status, so a
decision applies once however many times a button is clicked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from quotagov import api_times
from quotagov.governance.model.impact_preview import ImpactPreview


class EscalationStatus(StrEnum):
    """Status of an escalation request (see the module docstring for the moves)."""

    PENDING = "PENDING"
    APPROVED = "APPROVED"
    DENIED = "DENIED"
    EXPIRED = "EXPIRED"
    APPLIED = "APPLIED"
    APPLY_FAILED = "APPLY_FAILED"
    #: Approved, but when it was to be applied Batch already ran the job at or above
    #: the requested priority: ``UpdateServiceJob`` was not called (it would have
    #: lowered or kept the priority). ``superseded_priority`` holds what Batch had.
    SUPERSEDED = "SUPERSEDED"


#: Statuses after which nothing more happens.
FINAL_STATUSES = frozenset(
    {
        EscalationStatus.DENIED,
        EscalationStatus.EXPIRED,
        EscalationStatus.APPLIED,
        EscalationStatus.SUPERSEDED,
    }
)

#: Statuses of a request that still holds its job's one open escalation.
OPEN_STATUSES = frozenset(
    {EscalationStatus.PENDING, EscalationStatus.APPROVED, EscalationStatus.APPLY_FAILED}
)

_E = EscalationStatus

#: Every allowed move: status (None: not stored yet) -> the statuses it may become. A
#: write that keeps an open status (a new preview on an APPROVED request, a claim) is a
#: step inside it and always allowed; a final status allows nothing.
MOVES: Mapping[EscalationStatus | None, frozenset[EscalationStatus]] = {
    None: frozenset({_E.PENDING, _E.APPLIED}),
    _E.PENDING: frozenset({_E.APPROVED, _E.DENIED, _E.EXPIRED}),
    _E.APPROVED: frozenset({_E.PENDING, _E.DENIED, _E.APPLIED, _E.APPLY_FAILED, _E.SUPERSEDED}),
    _E.APPLY_FAILED: frozenset({_E.APPROVED}),
    _E.DENIED: frozenset(),
    _E.EXPIRED: frozenset(),
    _E.APPLIED: frozenset(),
    _E.SUPERSEDED: frozenset(),
}


class IllegalEscalationMoveError(ValueError):
    """A write would move an escalation along a path :data:`MOVES` does not have."""


def check_move(source: EscalationStatus | None, target: EscalationStatus) -> None:
    """Raise unless :data:`MOVES` allows ``source`` -> ``target`` (``source`` == ``target``
    is a step inside an open status).

    Raises:
        IllegalEscalationMoveError: the move is not in the table (nothing was written).
    """
    if source is not None and source == target and source in OPEN_STATUSES:
        return
    if target not in MOVES[source]:
        raise IllegalEscalationMoveError(
            f"escalation: no move from {source.value if source else 'nothing'} to {target.value}"
        )


@dataclass(frozen=True)
class Escalation:
    """One request to raise a service job's ``schedulingPriority``.

    Attributes:
        escalation_id: unique id (DynamoDB ``pk``).
        job_id: quotagov's id of the job, as in ``POST /jobs/{jobId}/escalations``.
        batch_job_id: the Batch service job id ``UpdateServiceJob`` is called with.
        job_name: the Batch job name.
        job_queue: the governed job queue (audit chain key).
        team: the job's team (policy ``teams`` key).
        quota_share_name: the job's quota share.
        requester: IAM principal ARN of the caller.
        requester_slack_id: the requester's Slack user id from the policy, if known.
        reason: why, as given (non-empty).
        current_priority: ``schedulingPriority`` when requested (0-9999).
        requested_level: policy priority level name.
        requested_priority: that level's ``schedulingPriority`` (0-9999).
        status: see :class:`EscalationStatus`.
        created_at: epoch seconds.
        expires_at: epoch seconds after which a PENDING request expires.
        direct: True when the level is one of the team's ``directLevels`` (no approval).
        preview: the impact preview (None for direct levels).
        channel, ts: where the Slack message is (None until posted).
        decided_by: Slack user id of the approver/denier (or :data:`QUOTAGOV_ACTOR` for
            expiry, withdrawal and direct application).
        decided_at: epoch seconds.
        applied_at: epoch seconds of the successful ``UpdateServiceJob``.
        error: the last ``UpdateServiceJob`` error (APPLY_FAILED).
        apply_attempts: how many apply attempts were made (each a
            ``DescribeServiceJob``, then ``UpdateServiceJob`` unless Batch already
            had the priority).
        claimed_at: epoch seconds when a run last moved the request to APPROVED (the
            approval itself, or a retry claiming it from APPLY_FAILED); an APPROVED
            request whose claim is older than ``STALE_APPROVAL_SECONDS`` belongs to a
            run that died.
        superseded_priority: SUPERSEDED only: the ``schedulingPriority`` (0-9999)
            Batch already ran the job at when the approval was to be applied.
        previous_preview: set when an Approve click found the impact changed
            materially (:mod:`quotagov.governance.escalations.recheck`): the preview
            the approvers had seen; ``preview`` then holds the recomputed one, which
            the next Approve click confirms.
        decision_proof: the proof of the decision (``{"v", "sender", "mac"}``, a KMS
            MAC by the function that recorded the click or the direct level,
            :mod:`quotagov.governance.escalations.proof`); None while undecided. An
            approval is applied only when it verifies.
    """

    escalation_id: str
    job_id: str
    batch_job_id: str
    job_name: str
    job_queue: str
    team: str
    quota_share_name: str
    requester: str
    reason: str
    current_priority: int
    requested_level: str
    requested_priority: int
    status: EscalationStatus
    created_at: float
    expires_at: float
    requester_slack_id: str | None = None
    direct: bool = False
    preview: ImpactPreview | None = None
    channel: str | None = None
    ts: str | None = None
    decided_by: str | None = None
    decided_at: float | None = None
    applied_at: float | None = None
    error: str | None = None
    apply_attempts: int = 0
    claimed_at: float | None = None
    superseded_priority: int | None = None
    previous_preview: ImpactPreview | None = None
    decision_proof: dict[str, Any] | None = None

    def with_changes(self, **changes: Any) -> Escalation:
        """A copy with ``changes`` applied (field names as above)."""
        return replace(self, **changes)

    def to_api(self) -> dict[str, Any]:
        """The JSON shape returned by the API (camelCase; instants ISO 8601 UTC,
        :mod:`quotagov.api_times`)."""
        body: dict[str, Any] = {
            "escalationId": self.escalation_id,
            "jobId": self.job_id,
            "batchJobId": self.batch_job_id,
            "jobName": self.job_name,
            "team": self.team,
            "quotaShareName": self.quota_share_name,
            "requester": self.requester,
            "reason": self.reason,
            "currentPriority": self.current_priority,
            "requestedLevel": self.requested_level,
            "requestedPriority": self.requested_priority,
            "status": self.status.value,
            "direct": self.direct,
            "createdAt": api_times.from_seconds(self.created_at),
            "expiresAt": api_times.from_seconds(self.expires_at),
        }
        optional: Mapping[str, Any] = {
            "preview": _preview(self.preview.to_dict()) if self.preview else None,
            "message": {"channel": self.channel, "ts": self.ts} if self.channel else None,
            "decidedBy": self.decided_by,
            "decidedAt": api_times.from_seconds(self.decided_at),
            "appliedAt": api_times.from_seconds(self.applied_at),
            "error": self.error,
            "supersededPriority": self.superseded_priority,
            "previousPreview": (
                _preview(self.previous_preview.to_dict()) if self.previous_preview else None
            ),
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        return body


def _preview(preview: dict[str, Any]) -> dict[str, Any]:
    return api_times.convert(preview, seconds=("computedAt",))
