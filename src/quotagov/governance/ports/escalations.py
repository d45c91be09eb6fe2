"""Escalation ports: the escalations table, the governed jobs and the impact previewer.

Adapters: ``quotagov.adapters.dynamodb_escalations`` (:class:`EscalationRepository`),
``quotagov.governance.escalations.JobRecordLookup`` (:class:`GovernedJobs` over the
jobs repository), ``quotagov.governance.escalations.preview`` (:class:`ImpactPreviewer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.model.impact_preview import ImpactPreview


class BudgetSpentError(Exception):
    """The team's escalation budget for the current period is used up (repository)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"escalation budget of {limit} is spent")
        self.limit = limit


class EscalationConflictError(Exception):
    """An escalation with this id already exists (repository)."""


class OpenEscalationError(Exception):
    """The job already has an open escalation (repository, :meth:`create_pending`).

    Attributes:
        escalation_id: the id of the escalation holding the job's lock ("" when the
            lock names none).
    """

    def __init__(self, escalation_id: str) -> None:
        super().__init__(f"escalation {escalation_id!r} is open for this job")
        self.escalation_id = escalation_id


@dataclass(frozen=True)
class GovernedJob:
    """What escalations need to know about a job quotagov submitted.

    Attributes:
        job_id: quotagov's id of the job (the id in ``/jobs/{jobId}``).
        batch_job_id: the Batch service job id (None until submitted to Batch).
        job_name: the Batch job name.
        team: the owning team (policy ``teams`` key).
        quota_share_name: the quota share it was routed to.
        owner: the principal who submitted it.
        checkpoint_interval_seconds: how often it saves its work (seconds), None if
            it does not checkpoint (a preemption then loses the whole attempt).
    """

    job_id: str
    batch_job_id: str | None
    job_name: str
    team: str
    quota_share_name: str
    owner: str = ""
    checkpoint_interval_seconds: float | None = None


class GovernedJobs(Protocol):
    """Lookup of quotagov's own job records."""

    def find(self, job_id: str) -> GovernedJob | None:
        """The job whose quotagov id *or* Batch service job id is ``job_id``, or None."""
        ...

    def find_by_batch_job_id(self, batch_job_id: str) -> GovernedJob | None:
        """The job whose Batch service job id is ``batch_job_id``, or None."""
        ...

    def record_priority(self, job_id: str, level: str, priority: int) -> None:
        """Note on the job's record that Batch now runs it at ``priority`` (``level``).

        Raises:
            Exception: whatever the store raises; callers log it and go on, since
                Batch already holds the new priority.
        """
        ...


@dataclass(frozen=True)
class CardUpdate:
    """An escalation whose Slack message (its "card") does not show its current state
    yet: the last ``chat.update`` failed and a scheduled run retries it.

    Attributes:
        escalation_id: the escalation whose card is out of date.
        attempts: failed ``chat.update`` calls so far (each after slack_sdk's own 429
            retries).
        error: Slack's last error code (e.g. ``ratelimited``) or the transport fault.
        first_failed_at: epoch seconds of the first failure.
        parked: True once :data:`~quotagov.governance.escalations.context.MAX_CARD_UPDATE_ATTEMPTS`
            attempts failed: no longer retried, counted in the ``CardUpdatesParked``
            metric (alarmed).
    """

    escalation_id: str
    attempts: int
    error: str
    first_failed_at: float
    parked: bool = False


class EscalationRepository(Protocol):
    """Storage of escalation requests (``EscalationsTable``; see the DynamoDB adapter)."""

    def create_pending(self, escalation: Escalation, *, budget_key: str, budget_limit: int) -> None:
        """Store ``escalation``, take one budget unit and the lock of its job
        (``escalation.job_id``), atomically.

        Raises :class:`OpenEscalationError` (the job's lock is held),
        :class:`BudgetSpentError` or :class:`EscalationConflictError`."""
        ...

    def release_job(self, job_id: str, escalation_id: str) -> bool:
        """Free job ``job_id``'s lock if ``escalation_id`` holds it; whether it did."""
        ...

    def refund_budget(self, budget_key: str) -> None:
        """Give one budget unit back."""
        ...

    def put_new(self, escalation: Escalation) -> None:
        """Store ``escalation`` (no budget); raises :class:`EscalationConflictError`."""
        ...

    def transition_if_status(
        self, escalation_id: str, expected: EscalationStatus, changes: Mapping[str, Any]
    ) -> Escalation | None:
        """Apply ``changes`` if the status is ``expected``; the new record, or None."""
        ...

    def set_message(self, escalation_id: str, channel: str, ts: str) -> None:
        """Record the Slack message's channel and ts."""
        ...

    def release_stale_claim(
        self, escalation_id: str, claimed_before: float, error: str
    ) -> Escalation | None:
        """APPROVED -> APPLY_FAILED (with ``error``) only if the request's claim time
        (``claimed_at``, else ``decided_at``) is before ``claimed_before``; the new
        record, or None."""
        ...

    def get(self, escalation_id: str) -> Escalation | None:
        """The escalation, read consistently, or None."""
        ...

    def due_for_expiry(self, now: float) -> list[Escalation]:
        """PENDING escalations with ``expires_at < now``."""
        ...

    def with_status(self, status: EscalationStatus) -> list[Escalation]:
        """Every escalation in ``status``."""
        ...

    def note_card_update_failed(self, escalation_id: str, error: str, now: float) -> CardUpdate:
        """Record one more failed ``chat.update`` of the escalation's card (creating the
        pending card update at the first); returns it after."""
        ...

    def card_updates_due(self) -> list[CardUpdate]:
        """Every pending (not parked) card update."""
        ...

    def card_updated(self, escalation_id: str) -> None:
        """The card shows the current state: forget its pending update (idempotent)."""
        ...

    def park_card_update(self, escalation_id: str) -> None:
        """Stop retrying the card's update (kept, ``parked``, for the operators)."""
        ...


class ImpactPreviewer(Protocol):
    """Computes what raising a job's priority would do now (see ``impact_preview``)."""

    def preview(
        self, job: GovernedJob, description: Mapping[str, Any], new_priority: int
    ) -> ImpactPreview:
        """``description`` is the job's ``DescribeServiceJob`` response."""
        ...
