"""Audit ports: the decision sink the use cases write to, and the audit storage.

- :class:`AuditSink` (with :class:`ControllerDecision`): how a use case hands one of
  the controller's own decisions to the audit log.
- :class:`ChainStore` (with :class:`ChainHead`, :class:`AppendAttempt`,
  :class:`AppendOutcome`): the hash chains' append-only slots and dedup markers
  (adapter: ``quotagov.adapters.dynamodb_audit``).
- :class:`VersionStore` (with :class:`Version`): add-only versions of configurations
  and decisions (adapter: ``quotagov.adapters.dynamodb_known``).
- :class:`AuditQueue`: how a function that may not write the audit table hands a
  decision record to the one writer (adapter: ``quotagov.adapters.sqs_audit``).
- :class:`RecordSealer`: the keyed MAC that seals each record (adapter:
  ``quotagov.adapters.kms_audit``, KMS HMAC_256 ``GenerateMac``/``VerifyMac``).
- :class:`DigestSigner`, :class:`SignatureChecker`, :class:`DigestStore` (with
  :class:`StoredDigest`): signed digests of the chains and where they are kept
  (adapters: ``quotagov.adapters.kms_audit``, ``quotagov.adapters.s3_digests``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

#: The actor of decisions quotagov takes by itself (no person decided).
QUOTAGOV_ACTOR = "quotagov"


@dataclass(frozen=True)
class ControllerDecision:
    """One decision of the controller itself, for the audit log.

    Attributes:
        action: what was decided, e.g. ``"SubmissionRefused"``, ``"EscalationApproved"``,
            ``"DispositionApplied"``.
        actor: who decided: a principal ARN, a Slack user id, or ``"quotagov"``.
        job_queue: the governed job queue (ARN or name); the audit chain is per queue.
        resource: what it is about (a submission id, a service job id, an escalation id).
        details: JSON-serialisable facts of the decision (reasons, priorities, ...).
        decision_id: a stable id; writing the same id twice stores one record.
    """

    action: str
    actor: str
    job_queue: str
    resource: str
    decision_id: str
    details: Mapping[str, Any] = field(default_factory=dict)


class AuditSink(Protocol):
    """The one small interface through which use cases append to the audit log."""

    def record_decision(self, decision: ControllerDecision) -> None:
        """Append ``decision``; idempotent on ``decision.decision_id``."""
        ...


class NullAuditSink:
    """An :class:`AuditSink` that keeps decisions in memory (a test double; no function
    is composed with it: each sends its decisions to the audit queue)."""

    def __init__(self) -> None:
        self.decisions: list[ControllerDecision] = []

    def record_decision(self, decision: ControllerDecision) -> None:
        """Keep ``decision`` in :attr:`decisions`, once per ``decision_id``."""
        if all(d.decision_id != decision.decision_id for d in self.decisions):
            self.decisions.append(decision)


@dataclass(frozen=True)
class ChainHead:
    """The last record of a chain: its ``seq``, ``hash`` and ``seal`` (None when it has
    none, or when the reader did not ask)."""

    seq: int
    hash: str
    seal: str | None = None


class AppendOutcome(Enum):
    """What :meth:`ChainStore.try_append_run` did."""

    APPENDED = "appended"  #: every record of the run now holds its slot
    DUPLICATE = "duplicate"  #: records with some of the dedup keys exist; nothing written
    SLOT_TAKEN = "slot-taken"  #: another writer holds one of the seqs; re-read the head
    CONFLICT = "conflict"  #: the store refused for a transient reason; retry


@dataclass(frozen=True)
class AppendAttempt:
    """Result of one :meth:`ChainStore.try_append_run`.

    Attributes:
        outcome: what happened (nothing was written unless ``APPENDED``).
        duplicates: for ``DUPLICATE``, the dedup keys of the run already stored.
    """

    outcome: AppendOutcome
    duplicates: tuple[str, ...] = ()


class ChainStore(Protocol):
    """Storage of chains: append-only slots plus one dedup marker per record.

    ``try_append_run`` must write a run of consecutive records and their dedup markers
    atomically, each only if absent (each record on its ``(chain, seq)`` slot, each
    marker on ``(chain, dedupKey)``): all of them or none.
    """

    def head(self, chain: str) -> ChainHead | None:
        """The last record of ``chain`` (strongly consistent) with its seal, or None when
        it is empty."""
        ...

    def try_append_run(self, records: Sequence[Mapping[str, Any]]) -> AppendAttempt:
        """Put ``records`` (consecutive seqs of one chain, hashed, the last one sealed) on
        their slots with their dedup markers, all only if absent, atomically."""
        ...

    def find(self, chain: str, dedup_key: str) -> dict[str, Any] | None:
        """The record of ``chain`` stored under ``dedup_key``, or None."""
        ...

    def records(self, chain: str, after_seq: int = 0) -> Iterable[dict[str, Any]]:
        """Every record of ``chain`` with ``seq > after_seq`` in ``seq`` order (as stored,
        including forgeries)."""
        ...

    def markers(self, chain: str) -> dict[str, tuple[int, str]]:
        """Every dedup marker of ``chain``: dedup key -> (seq, hash) of its record."""
        ...

    def chains(self) -> list[str]:
        """Names of every chain in the registry written with each chain's record 1 (sorted)."""
        ...

    def stored_chains(self) -> list[str]:
        """Names of every chain holding a record or a dedup marker (sorted), found from
        those items rather than from the registry (may read the whole store)."""
        ...


@dataclass(frozen=True)
class Version:
    """One stored version: when (epoch ms), its tag, and the value."""

    at_ms: int
    tag: str
    value: dict[str, Any]


class VersionStore(Protocol):
    """Add-only versions of values by ``(namespace, key)``."""

    def put(self, namespace: str, key: str, at_ms: int, tag: str, value: Mapping[str, Any]) -> None:
        """Store the version unless one with the same ``(at_ms, tag)`` exists (then no-op)."""
        ...

    def latest(
        self, namespace: str, key: str, *, before_ms: int | None = None, since_ms: int = 0
    ) -> Version | None:
        """The newest version with ``since_ms <= at_ms < before_ms`` (no upper bound if None)."""
        ...

    def versions(
        self, namespace: str, key: str, *, since_ms: int = 0, before_ms: int | None = None
    ) -> list[Version]:
        """Every version with ``since_ms <= at_ms < before_ms``, oldest first (by
        ``at_ms``, then ``tag``)."""
        ...


class AuditQueueError(Exception):
    """The audit queue did not accept a decision record: the decision must not be
    applied (or must be retried until its record is queued)."""


class AuditQueue(Protocol):
    """The queue to the audit writer (at-least-once; the writer dedups by decision id)."""

    def send(self, body: str) -> None:
        """Queue one message ``body`` (JSON text).

        Raises:
            AuditQueueError: the message was not queued (after the SDK's retries).
        """
        ...


class RecordSealer(Protocol):
    """A keyed MAC over a record's hash that only the audit writer can compute.

    ``seal`` needs the key's generate right (the writer's role alone); ``check`` only
    the verify right, which readers may be given.
    """

    key_id: str

    def seal(self, message: bytes) -> str:
        """The MAC of ``message``, base64 text."""
        ...

    def check(self, message: bytes, seal: str) -> bool:
        """True when ``seal`` is the MAC of ``message`` under the key."""
        ...


class DigestSigner(Protocol):
    """Signs digests with a private key only the digest function may use."""

    key_id: str
    algorithm: str

    def sign(self, message: bytes) -> str:
        """The signature of ``message`` (at most 4096 bytes), base64 text."""
        ...


class SignatureChecker(Protocol):
    """Checks digest signatures with the public key only (no write rights needed)."""

    def check(self, message: bytes, signature: str) -> bool:
        """True when ``signature`` (base64) signs ``message``."""
        ...


@dataclass(frozen=True)
class StoredDigest:
    """One digest object as stored.

    Attributes:
        key: the object key, ``<prefix><chain>/<12-digit head seq>-<UTC time>.json``.
        body: the content of its oldest version (the one first written).
        versions: how many versions the key has (more than one: it was overwritten).
    """

    key: str
    body: bytes
    versions: int = 1


class DigestStore(Protocol):
    """Write-once storage of digests (S3 with Object Lock in compliance mode)."""

    def put(self, key: str, body: bytes) -> None:
        """Store ``body`` under ``key``."""
        ...

    def latest(self, chain: str) -> StoredDigest | None:
        """The digest of ``chain`` with the greatest key, or None."""
        ...

    def digests(self, chain: str) -> list[StoredDigest]:
        """Every digest of ``chain`` in key order."""
        ...

    def chains(self) -> list[str]:
        """Every chain that has a digest (sorted)."""
        ...
