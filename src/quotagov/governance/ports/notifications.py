"""Notification port: the log of owner messages, one entry per event.

``docs/design.md``, "People and operators are told".

Adapter: :class:`quotagov.adapters.dynamodb_notifications.DynamoDBNotificationLog`
(items in ``JobsTable``). The log is what makes "one message per event, however often
the event is delivered" hold: an entry is claimed with a conditional write before the
message is posted, so a redelivered event finds its entry and posts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


class NotificationKind(StrEnum):
    """The events an owner is told about (owner notifications)."""

    PREEMPTED = "preempted"
    FAILED = "failed"
    RESUBMITTED = "resubmitted"
    RECLASSIFIED = "reclassified"
    REFUSED = "refused"
    PRIORITY_CHANGED = "priority-changed"


@dataclass(frozen=True)
class NotificationEntry:
    """One owner notification as logged.

    Attributes:
        submission_id: the job's submission id.
        event_key: what happened, unique per job (``preempted:<attempt key>``,
            ``failed``, ``disposition:<successor id>``, ``refused``,
            ``priority:<escalation id>``).
        kind: ``preempted``, ``failed``, ``resubmitted``, ``reclassified``,
            ``refused`` or ``priority-changed``.
        job_name: the Batch job name.
        team: the owning team.
        recipient: the owner's Slack user id (a DM goes to the user id), or "" when
            nobody could be told.
        text: the message as the owner reads it.
        at: when the event was noted, epoch seconds.
        delivery: ``posted`` (a new DM), ``digest`` (folded into an earlier DM,
            updated in place), ``opted-out`` (team opted out), ``no-recipient``,
            ``failed`` (Slack refused; ``error`` says why: retried by
            :meth:`~quotagov.governance.notifications.owner.OwnerNotifier.retry_failed`),
            ``retrying`` (a retry holds it), ``parked`` (every try failed; alarmed) or
            ``pending``.
        channel / ts: where the message landed (the DM's channel id and ``ts``).
        error: Slack's error code when ``delivery`` is ``failed``.
        details: the event's facts (JSON-ready: lost seconds, target share, ...).
        attempts: Slack posts tried so far (1 after the first delivery).
        retry_at: when the latest retry claimed the entry (epoch seconds), or None.
    """

    submission_id: str
    event_key: str
    kind: str
    job_name: str
    team: str
    recipient: str
    text: str
    at: float
    delivery: str = "pending"
    channel: str | None = None
    ts: str | None = None
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    attempts: int = 1
    retry_at: float | None = None


#: Deliveries that leave the owner untold and are retried (``retrying``: a retry that
#: died holding it is taken over once :data:`RETRY_LEASE_SECONDS` have passed).
UNDELIVERED = ("failed", "retrying")

#: How long a retry holds an entry before another retry may take it over (seconds).
RETRY_LEASE_SECONDS = 600


@dataclass(frozen=True)
class DigestState:
    """The message a job's repeated preemptions are folded into.

    Attributes:
        submission_id: the job.
        channel / ts: the DM that is updated in place.
        first_at: epoch seconds of the first preemption in the digest.
        lines: one line per preemption in it, oldest first.
        version: optimistic-lock counter (every save bumps it).
    """

    submission_id: str
    channel: str
    ts: str
    first_at: float
    lines: tuple[str, ...]
    version: int = 0


class DigestConflictError(Exception):
    """Another writer changed the digest since it was read (re-read and retry)."""


class NotificationLog(Protocol):
    """Where owner notifications are claimed, completed and listed."""

    def claim(self, entry: NotificationEntry) -> bool:
        """Store ``entry`` unless its ``(submission_id, event_key)`` exists.

        Returns True when this call stored it (so this caller sends the message),
        False when the event was already claimed (a redelivery: send nothing).
        """
        ...

    def complete(self, entry: NotificationEntry) -> None:
        """Overwrite the claimed entry with its delivery outcome (``delivery``,
        ``channel``, ``ts``, ``error``, final ``text``)."""
        ...

    def entries(self, submission_id: str | None = None) -> list[NotificationEntry]:
        """Logged entries (of one job, or all), oldest first."""
        ...

    def undelivered(self) -> list[NotificationEntry]:
        """Every entry whose delivery is one of :data:`UNDELIVERED`, oldest first
        (without reading every job's log: a :meth:`complete` with ``failed`` notes the
        entry in a retry list, any other outcome removes it)."""
        ...

    def claim_retry(self, entry: NotificationEntry, *, now: float) -> NotificationEntry | None:
        """Take ``entry`` for a retry: a conditional write that the stored entry still has
        ``entry.attempts`` and is ``failed`` (or ``retrying`` with a ``retry_at`` older
        than :data:`RETRY_LEASE_SECONDS`). Returns the claimed entry (``retrying``,
        ``attempts`` + 1, ``retry_at`` = ``now``), or None when another retry took it or
        it was delivered meanwhile."""
        ...

    def digest(self, submission_id: str) -> DigestState | None:
        """The job's preemption digest message, or None."""
        ...

    def save_digest_if_version(self, state: DigestState, *, expected_version: int | None) -> None:
        """Write ``state``; ``expected_version`` None = must not exist yet.

        Raises:
            DigestConflictError: the stored version is not the expected one.
        """
        ...
