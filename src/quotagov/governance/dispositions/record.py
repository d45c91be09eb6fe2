"""The disposition record: a job's ``disposition`` map, its statuses and their moves.

Life cycle (``docs/design.md``, "Job-state handling and retry exhaustion")::

    (none) --policy resubmit/reclassify--------------------------> APPLYING
       |--policy ask-owner, or its action impossible--> PENDING_OWNER
       |--only abandon remains--> ABANDONED
       \\--thrash guard (TerminateServiceJob)--> AWAITING_TERMINATION
    PENDING_OWNER --owner: resubmit/reclassify--> APPLYING
       \\--owner: abandon--> ABANDONED
    AWAITING_TERMINATION --Batch: FAILED--> APPLYING
       \\--Batch: SUCCEEDED first--> NOT_NEEDED
    APPLYING --successor submitted--> APPLIED
       \\--successor refused by the policy as it is now--> ABANDONED

Steps inside one status (a write, no move): ``PENDING_OWNER`` records the Slack
``message``; ``AWAITING_TERMINATION`` records ``terminateRequestedAt``; ``APPLYING``
takes or releases its :class:`~quotagov.governance.lease.Lease`. :data:`MOVES` is the
table of every allowed move; the one writer of dispositions checks it.

Stored format (``JobsTable`` item, attribute ``disposition``, a map with camelCase
keys): :meth:`DispositionRecord.to_item` writes exactly the keys that are set
(``status``, ``trigger``, ``policyAction``, ``owner``, ``openedAt``,
``preemptionCount``, ``preemptionRetriesBeforeTermination``, ``reason``, ``choices``,
``choice``, ``decidedBy``, ``decidedAt``, ``decisionSource``, ``successorId``,
``targetShare``, ``leaseUntil``, ``message``, ``terminateRequestedAt``,
``terminatedAt``, ``closedAt``, ``successorBatchJobId``, ``lastError``); keys it does
not know are kept as they are. Times are epoch seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from quotagov.governance.dispositions.errors import IllegalMoveError
from quotagov.governance.lease import Lease
from quotagov.governance.ports import PostedMessage


class DispositionStatus(StrEnum):
    """Where a disposition stands (see the module docstring for the moves)."""

    PENDING_OWNER = "pending-owner"
    AWAITING_TERMINATION = "awaiting-termination"
    APPLYING = "applying"
    APPLIED = "applied"
    ABANDONED = "abandoned"
    NOT_NEEDED = "not-needed"


class Trigger(StrEnum):
    """Why a disposition was opened."""

    #: ``FAILED`` with more preemptions than ``preemptionRetriesBeforeTermination``.
    RETRIES_EXHAUSTED = "retries-exhausted"
    #: Preempted ``thrashGuard.preemptions`` times within ``thrashGuard.windowSeconds``.
    THRASH_GUARD = "thrash-guard"


class Choice(StrEnum):
    """What happens to the job: a successor in the same share, in the next share, or none."""

    RESUBMIT = "resubmit"
    RECLASSIFY = "reclassify"
    ABANDON = "abandon"


#: Every choice, in the order the buttons show them.
CHOICES: tuple[str, ...] = tuple(choice.value for choice in Choice)


#: How long a caller that moved a disposition to ``applying`` has to submit the successor
#: before another caller (a redelivered event, a second click) may take over (seconds).
APPLY_LEASE_SECONDS = 60.0

_S = DispositionStatus
#: Every allowed move: status (None: no disposition yet) -> the statuses it may become.
#: A status listed for itself allows steps inside it (module docstring).
MOVES: Mapping[DispositionStatus | None, frozenset[DispositionStatus]] = {
    None: frozenset({_S.APPLYING, _S.PENDING_OWNER, _S.ABANDONED, _S.AWAITING_TERMINATION}),
    _S.PENDING_OWNER: frozenset({_S.PENDING_OWNER, _S.APPLYING, _S.ABANDONED}),
    _S.AWAITING_TERMINATION: frozenset({_S.AWAITING_TERMINATION, _S.APPLYING, _S.NOT_NEEDED}),
    # ABANDONED: the successor was refused by the policy (steps.refuse_successor)
    _S.APPLYING: frozenset({_S.APPLYING, _S.APPLIED, _S.ABANDONED}),
    _S.APPLIED: frozenset(),
    _S.ABANDONED: frozenset(),
    _S.NOT_NEEDED: frozenset(),
}

#: Statuses after which nothing more happens (no move leaves them).
FINAL_STATUSES = frozenset(s for s, targets in MOVES.items() if s is not None and not targets)


def check_move(source: DispositionStatus | None, target: DispositionStatus) -> None:
    """Raise unless :data:`MOVES` allows ``source`` -> ``target``.

    Raises:
        IllegalMoveError: the move is not in the table.
    """
    if target not in MOVES[source]:
        raise IllegalMoveError(f"disposition: no move from {source or 'none'} to {target}")


@dataclass(frozen=True)
class DispositionRecord:
    """What happens to one job whose retries ran out or that thrashes.

    Attributes:
        status: see :class:`DispositionStatus`.
        trigger: see :class:`Trigger`.
        policy_action: what the class's policy names (``workloadClasses.<class>.
            onRetriesExhausted.action``: ``resubmit``, ``reclassify``, ``ask-owner``;
            ``reclassify`` for the thrash guard).
        owner: the submitter's principal, else ``team:<team>``.
        opened_at: epoch seconds.
        preemption_count: the job's preemptions when it was opened.
        preemption_retries_before_termination: the job's limit (retries exhausted only).
        reason: why, in words.
        choices: what the owner may choose (``pending-owner``; None = every choice).
        choice: the decision, None while pending.
        decided_by: ``quotagov`` or the owner's principal / Slack user id.
        decided_at: epoch seconds.
        decision_source: ``api`` or ``slack`` (owner decisions only).
        successor_id: the successor's submission id, once chosen.
        target_share: the successor's quota share, once chosen.
        lease: the claim of the caller submitting the successor (``leaseUntil``).
        message: the ask-owner Slack message, once posted.
        terminate_requested_at: when ``TerminateServiceJob`` was called (thrash guard).
        terminated_at: when Batch reported the terminated job ``FAILED``.
        closed_at: when it reached a final status.
        successor_batch_job_id: the successor's Batch job id (``applied``).
        last_error: why submitting the successor failed last (at most 500 characters).
        extra: stored keys this version does not know, kept unchanged.
    """

    status: DispositionStatus
    trigger: Trigger
    policy_action: str
    owner: str
    opened_at: float
    preemption_count: int
    reason: str = ""
    preemption_retries_before_termination: int | None = None
    choices: tuple[Choice, ...] | None = None
    choice: Choice | None = None
    decided_by: str | None = None
    decided_at: float | None = None
    decision_source: str | None = None
    successor_id: str | None = None
    target_share: str | None = None
    lease: Lease | None = None
    message: PostedMessage | None = None
    terminate_requested_at: float | None = None
    terminated_at: float | None = None
    closed_at: float | None = None
    successor_batch_job_id: str | None = None
    last_error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def offered(self) -> tuple[Choice, ...]:
        """The choices the owner may take: :attr:`choices`, or every choice."""
        return self.choices or tuple(Choice)

    @property
    def lease_until(self) -> float:
        """The stored ``leaseUntil`` (0 when there is none): the write condition of a
        caller taking or releasing the lease."""
        return self.lease.until if self.lease is not None else 0.0

    def with_changes(self, **changes: Any) -> DispositionRecord:
        """A copy with ``changes`` applied (field names as above); moves are checked
        by the writer (:func:`check_move`)."""
        return replace(self, **changes)

    def to_item(self) -> dict[str, Any]:
        """The stored ``disposition`` map: camelCase keys, unset (None) fields left out."""
        item = dict(self.extra)
        for name, key in _STORED.items():
            value = _encode(getattr(self, name))
            if value is not None:
                item[key] = value
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> DispositionRecord:
        """Read a stored ``disposition`` map (numbers as int/float, as read back; they
        are kept as read, so :meth:`to_item` writes back the same values).

        A map missing ``policyAction``, ``owner``, ``openedAt`` or ``preemptionCount``
        (never written so) reads them as empty / 0.

        Raises:
            ValueError: ``status`` or ``trigger`` is missing, or it or a choice is not a
                known value.
        """
        missing = [key for key in ("status", "trigger") if item.get(key) is None]
        if missing:
            raise ValueError(f"disposition: no {' and no '.join(missing)}")
        values = {
            name: _DECODE.get(name, _same)(item[key])
            for name, key in _STORED.items()
            if item.get(key) is not None
        }
        extra = {k: v for k, v in item.items() if k not in _STORED_KEYS}
        return cls(**{**_UNSET_REQUIRED, **values}, extra=extra)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


#: field name -> stored key (``lease`` is stored as ``leaseUntil``).
_STORED: dict[str, str] = {
    f.name: "leaseUntil" if f.name == "lease" else _camel(f.name)
    for f in fields(DispositionRecord)
    if f.name != "extra"
}
_STORED_KEYS = frozenset(_STORED.values())


def _encode(value: Any) -> Any:
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, Lease):
        return value.until or 0  # a released lease is stored as 0
    if isinstance(value, PostedMessage):
        return {"channel": value.channel, "ts": value.ts}
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


def _same(value: Any) -> Any:
    return value


#: Values of the required fields a stored map lacks.
_UNSET_REQUIRED: dict[str, Any] = {
    "policy_action": "",
    "owner": "",
    "opened_at": 0,
    "preemption_count": 0,
}

#: field name -> how its stored value is read (others are kept as stored).
_DECODE: dict[str, Callable[[Any], Any]] = {
    "status": DispositionStatus,
    "trigger": Trigger,
    "choice": Choice,
    "choices": lambda values: tuple(Choice(v) for v in values),
    "lease": Lease,
    "message": lambda m: PostedMessage(channel=str(m["channel"]), ts=str(m["ts"])),
}
