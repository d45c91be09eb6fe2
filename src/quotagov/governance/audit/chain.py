"""The audit hash chain: canonical JSON, record hashes, appending with retries, verification.

One chain per job queue (design.md, "Audit of policy changes"; issue 7). Record ``n``
(``seq`` 1, 2, ...) carries ``prevHash`` = the ``hash`` of record ``n - 1`` (64 zeros for
the first record) and its own ``hash`` = SHA-256 of the canonical JSON form of every
other field of the record. A changed record no longer matches its own hash, a deleted
record leaves a gap in ``seq`` (or, at the end, a dedup marker with no record), and an
inserted record breaks the ``prevHash`` link of the record after it.

Canonical JSON: keys sorted, no whitespace, UTF-8 (non-ASCII kept as is), numbers
normalized so that a value written as ``int``/``float`` and read back from DynamoDB as
``Decimal`` hashes the same (integral numbers as integers, others as the shortest
decimal form). ``NaN`` and infinities are refused (DynamoDB refuses them too).

Pure Python: the storage is behind :class:`ChainStore` (adapter:
``quotagov.adapters.dynamodb_audit``).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from quotagov.governance.audit.errors import ChainContentionError as ChainContentionError
from quotagov.governance.audit.errors import ChainIntegrityError as ChainIntegrityError
from quotagov.governance.audit.seals import SEAL_FIELD, sealed
from quotagov.governance.canonical import CanonicalFormError, canonical_json, normalize
from quotagov.governance.ports.audit import AppendOutcome, ChainStore, RecordSealer

#: ``prevHash`` of the first record of a chain.
GENESIS_HASH = "0" * 64

#: Fields a sealed record carries besides the caller's body.
CHAIN_FIELDS = ("chain", "seq", "dedupKey", "prevHash", "hash", SEAL_FIELD)

#: Fields outside the hashed content: the hash itself and the seal over it.
UNHASHED_FIELDS = frozenset({"hash", SEAL_FIELD})


def record_hash(record: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical UTF-8 JSON of ``record`` without its ``hash`` and
    ``seal`` fields."""
    body = {k: v for k, v in record.items() if k not in UNHASHED_FIELDS}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def seal(
    body: Mapping[str, Any], *, chain: str, seq: int, prev_hash: str, dedup_key: str
) -> dict[str, Any]:
    """Return ``body`` as record ``seq`` of ``chain``, linked to ``prev_hash`` and hashed.

    Raises:
        ValueError: when ``body`` uses a chain field name, or ``seq`` < 1.
        CanonicalFormError: when ``body`` is not JSON data.
    """
    clash = [name for name in CHAIN_FIELDS if name in body]
    if clash:
        raise ValueError(f"record body may not set chain fields {clash}")
    if seq < 1:
        raise ValueError(f"seq must be >= 1, got {seq}")
    record: dict[str, Any] = normalize(dict(body))
    record.update(chain=chain, seq=seq, dedupKey=dedup_key, prevHash=prev_hash)
    record["hash"] = record_hash(record)
    return record


@dataclass(frozen=True)
class Appended:
    """Result of :meth:`ChainWriter.append`: the stored record, and whether it is new."""

    record: dict[str, Any]
    created: bool


class ChainWriter:
    """Appends records to chains without forking them, exactly once per dedup key.

    The writer reads the head (seq ``n``), seals the body as ``n + 1`` and asks the
    store to put it only if slot ``n + 1`` and the dedup marker are both free. A writer
    that loses the race learns the winner's hash (or re-reads the head) and tries the
    next slot, after a short jittered pause from the second loss on (full jitter,
    ``base_delay`` doubling up to ``max_delay`` seconds). A lost dedup race returns the
    record that won it.

    With a ``sealer``, each record also gets its ``seal`` (one KMS ``GenerateMac`` per
    slot tried, so one per record unless the writer loses a race).

    Args:
        store: where chains live.
        sealer: the record MAC (None: records are hashed, not sealed; tests only).
        max_attempts: attempts before :class:`ChainContentionError`.
        sleep: how to wait (seconds); injectable for tests.
    """

    def __init__(
        self,
        store: ChainStore,
        *,
        sealer: RecordSealer | None = None,
        max_attempts: int = 60,
        base_delay: float = 0.005,
        max_delay: float = 0.2,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._store = store
        self._sealer = sealer
        self._max_attempts = max_attempts
        self._base_delay = base_delay
        self._max_delay = max_delay
        self._sleep = sleep

    def append(self, chain: str, dedup_key: str, body: Mapping[str, Any]) -> Appended:
        """Append ``body`` to ``chain`` once; a repeated ``dedup_key`` returns the first record.

        Raises:
            ChainContentionError: when no slot was won in ``max_attempts`` attempts.
            ChainIntegrityError: the dedup marker exists without its record (tampering).
            CanonicalFormError: when ``body`` is not JSON data.
        """
        head = self._store.head(chain)
        for attempt in range(self._max_attempts):
            seq, prev = (head.seq + 1, head.hash) if head else (1, GENESIS_HASH)
            record = seal(body, chain=chain, seq=seq, prev_hash=prev, dedup_key=dedup_key)
            if self._sealer is not None:
                record = sealed(record, self._sealer)
            result = self._store.try_append(record)
            if result.outcome is AppendOutcome.APPENDED:
                return Appended(record, created=True)
            if result.outcome is AppendOutcome.DUPLICATE:
                found = self._store.find(chain, dedup_key)
                if found is None:
                    raise ChainIntegrityError(
                        f"chain {chain!r}: dedup marker {dedup_key!r} exists but its record "
                        "does not (run quotagov audit verify)"
                    )
                return Appended(found, created=False)
            if result.outcome is AppendOutcome.SLOT_TAKEN and result.taken_by is not None:
                head = result.taken_by
            else:
                head = self._store.head(chain)
            if attempt >= 1:
                cap = min(self._max_delay, self._base_delay * 2 ** min(attempt, 10))
                self._sleep(random.uniform(0, cap))
        raise ChainContentionError(
            f"chain {chain!r}: no free slot after {self._max_attempts} attempts for {dedup_key!r}"
        )


@dataclass(frozen=True)
class ChainBreak:
    """The first broken record of a chain.

    Attributes:
        chain: the chain name.
        seq: the sequence number of the broken record (the missing one for a deletion).
        reason: what is wrong, for a person.
    """

    chain: str
    seq: int
    reason: str

    def __str__(self) -> str:
        return f"chain {self.chain}: record {self.seq}: {self.reason}"


def verify_chain(
    chain: str,
    records: Iterable[Mapping[str, Any]],
    markers: Mapping[str, tuple[int, str]] | None = None,
) -> tuple[int, ChainBreak | None]:
    """Walk ``records`` (in stored order) and find the first broken one.

    For the record at position ``i`` (1-based):

    - its ``seq`` is ``i``: a larger one means record ``i`` was deleted, a smaller one
      that a record was inserted before it;
    - its ``hash`` matches its content: otherwise it was changed (or forged);
    - its ``prevHash`` is the ``hash`` of record ``i - 1``: when it is the hash of an
      earlier record ``j``, records ``j + 1 .. i - 1`` were inserted (the first is
      named); otherwise record ``i - 1`` was replaced by one with a recomputed hash;
    - when ``markers`` are given (dedup key -> ``(seq, hash)``, written in the same
      transaction as each record), the record's marker holds its seq and hash (a
      replaced record with a recomputed hash, even the last one, is caught here).

    Finally every marker must name a record that exists: a record deleted at the end
    of the chain leaves its marker behind.

    Returns:
        ``(number of records walked, first break or None)``.
    """
    prev_hash = GENESIS_HASH
    count = 0
    keys: dict[int, str] = {}
    seen: dict[str, int] = {}
    for expected, record in enumerate(records, start=1):
        count = expected
        fault = _position_fault(chain, expected, record) or _link_fault(
            chain, expected, record, prev_hash, seen
        )
        if fault is not None:
            return count, fault
        actual = str(record["hash"])
        key = str(record.get("dedupKey"))
        if markers is not None and markers.get(key) != (expected, actual):
            return count, ChainBreak(
                chain,
                expected,
                f"its dedup marker {key!r} holds {markers.get(key)!r}, not this record "
                "(replaced or forged)",
            )
        prev_hash = actual
        seen[actual] = expected
        keys[expected] = key
    return count, _orphan_marker(chain, keys, markers or {})


def _position_fault(chain: str, expected: int, record: Mapping[str, Any]) -> ChainBreak | None:
    """Record ``expected`` has that seq, names ``chain`` and matches its own hash."""
    seq = record.get("seq")
    try:
        seq_number = int(seq)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ChainBreak(chain, expected, f"seq {seq!r} is not a number")
    if seq_number > expected:
        return ChainBreak(
            chain, expected, f"missing: the next stored record is {seq_number} (deleted)"
        )
    if seq_number < expected:
        return ChainBreak(
            chain,
            expected,
            f"an extra record claiming seq {seq_number} is stored after record "
            f"{expected - 1} (inserted)",
        )
    if record.get("chain") != chain:
        return ChainBreak(chain, expected, f"names chain {record.get('chain')!r}")
    try:
        actual = record_hash(record)
    except CanonicalFormError as exc:
        return ChainBreak(chain, expected, f"content is not canonical JSON: {exc}")
    if record.get("hash") != actual:
        return ChainBreak(chain, expected, "hash does not match its content (changed)")
    return None


def _link_fault(
    chain: str,
    expected: int,
    record: Mapping[str, Any],
    prev_hash: str,
    seen: Mapping[str, int],
) -> ChainBreak | None:
    """Record ``expected`` links to the record before it (``prev_hash``)."""
    if record.get("prevHash") == prev_hash:
        return None
    linked = seen.get(str(record.get("prevHash")))
    if linked is not None:
        span = f"{linked + 1}" + (f"-{expected - 1}" if expected - 1 > linked + 1 else "")
        return ChainBreak(
            chain,
            linked + 1,
            f"inserted: record {expected} links to record {linked}, so record(s) "
            f"{span} were put in between",
        )
    return ChainBreak(
        chain,
        max(1, expected - 1),
        f"replaced: record {expected} links to a different record {expected - 1} "
        "(its hash was recomputed)",
    )


def _orphan_marker(
    chain: str, keys: Mapping[int, str], markers: Mapping[str, tuple[int, str]]
) -> ChainBreak | None:
    """A dedup marker naming a record the chain does not hold (deleted at the end)."""
    for key, (seq, _hash) in sorted(markers.items(), key=lambda kv: kv[1]):
        if keys.get(seq) != key:
            where = "holds another record there" if seq in keys else "has no such record"
            return ChainBreak(
                chain,
                seq,
                f"missing: dedup marker {key!r} names it but the chain {where} (deleted)",
            )
    return None
