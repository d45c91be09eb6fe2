"""The audit hash chain: canonical JSON, record hashes, appending with retries, verification.

One chain per job queue (``docs/design.md``, "Audit of policy changes"). Record ``n``
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
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quotagov.governance.audit.errors import ChainContentionError as ChainContentionError
from quotagov.governance.audit.errors import ChainIntegrityError as ChainIntegrityError
from quotagov.governance.audit.seals import MAX_RUN_RECORDS, SEAL_FIELD, seal_holds, sealed
from quotagov.governance.canonical import CanonicalFormError, canonical_json, normalize
from quotagov.governance.ports.audit import AppendOutcome, ChainHead, ChainStore, RecordSealer

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


#: At most this many bytes of canonical JSON per run, well under DynamoDB's 4 MB per
#: ``TransactWriteItems`` (each item is at most 400 KB anyway).
MAX_RUN_BYTES = 2 * 1024 * 1024


def split_runs(
    entries: Sequence[tuple[str, Mapping[str, Any]]],
    max_records: int = MAX_RUN_RECORDS,
    max_bytes: int = MAX_RUN_BYTES,
) -> list[list[tuple[str, Mapping[str, Any]]]]:
    """``entries`` (``(dedup_key, body)`` in order) cut into runs of at most
    ``max_records`` records and ``max_bytes`` of canonical JSON (a larger body is a run of
    its own).

    Raises:
        CanonicalFormError: a body is not JSON data.
    """
    runs: list[list[tuple[str, Mapping[str, Any]]]] = []
    size = 0
    for entry in entries:
        length = len(canonical_json(dict(entry[1])).encode("utf-8"))
        if not runs or len(runs[-1]) >= max_records or size + length > max_bytes:
            runs.append([])
            size = 0
        runs[-1].append(entry)
        size += length
    return runs


class ChainWriter:
    """Appends records to chains in sealed runs, without forking them, exactly once per
    dedup key.

    :meth:`append_run` reads the head (seq ``n``), hashes the bodies as records
    ``n + 1 .. n + k`` linked one to the next, seals the last one
    (:func:`~quotagov.governance.audit.seals.sealed`: one KMS ``GenerateMac`` per run,
    not per record) and asks the store to put them all, atomically, only if every slot
    and every dedup marker is free. A writer that loses the race re-reads the head and
    tries again, after a short jittered pause from the second loss on (full jitter,
    ``base_delay`` doubling up to ``max_delay`` seconds). Records whose dedup key is
    already stored are returned as they are and left out of the run.

    **Head rule** (what makes one seal prove every record before it, see
    :mod:`~quotagov.governance.audit.seals`): with a ``sealer``, the writer chains only
    onto a head it can vouch for: one it sealed itself (it remembers the last head it
    wrote per chain, in this process), or one whose seal it has just checked (one
    ``VerifyMac``; then remembered too). A head whose seal is missing or does not
    verify raises :class:`ChainIntegrityError` and nothing is written: someone replaced
    or forged the last record, and sealing on top of it would vouch for the forgery.

    Thread-safe (the remembered heads are behind a lock); one instance per process
    (``quotagov.wiring``).

    Args:
        store: where chains live.
        sealer: the record MAC (None: records are hashed, not sealed; tests only).
        max_attempts: attempts per run before :class:`ChainContentionError`.
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
        self._vouched: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()

    def append(self, chain: str, dedup_key: str, body: Mapping[str, Any]) -> Appended:
        """Append ``body`` to ``chain`` once (a run of one record, sealed);
        a repeated ``dedup_key`` returns the first record.

        Raises:
            as :meth:`append_run`.
        """
        [appended] = self.append_run(chain, [(dedup_key, body)])
        return appended

    def append_run(
        self, chain: str, entries: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> list[Appended]:
        """Append ``entries`` (``(dedup_key, body)``, in order) to ``chain`` as
        consecutive records, once per dedup key, in runs of at most
        :data:`~quotagov.governance.audit.seals.MAX_RUN_RECORDS` records, each run sealed
        once on its last record.

        Returns:
            one :class:`Appended` per entry, in order; an entry whose dedup key is already
            stored (or repeats an earlier entry's) gets that record with
            ``created=False``.

        Raises:
            ValueError: a body uses a chain field name.
            CanonicalFormError: a body is not JSON data.
            ChainContentionError: a run won no slot in ``max_attempts`` attempts; the runs
                before it are stored.
            ChainIntegrityError: the head's seal does not verify, or a dedup marker
                exists without its record (tampering: run ``quotagov audit verify``).
        """
        for _key, body in entries:
            clash = [name for name in CHAIN_FIELDS if name in body]
            if clash:
                raise ValueError(f"record body may not set chain fields {clash}")
        firsts: dict[str, int] = {}
        for index, (key, _body) in enumerate(entries):
            firsts.setdefault(key, index)
        stored: dict[str, Appended] = {}
        for run in split_runs([entries[index] for index in firsts.values()]):
            stored.update(self._append_one_run(chain, run))
        return [
            stored[key] if firsts[key] == index else Appended(stored[key].record, created=False)
            for index, (key, _body) in enumerate(entries)
        ]

    def _append_one_run(
        self, chain: str, run: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> dict[str, Appended]:
        done: dict[str, Appended] = {}
        pending = list(run)
        head = self._store.head(chain)
        for attempt in range(self._max_attempts):
            self._vouch_for(chain, head)
            records = self._link(chain, head, pending)
            result = self._store.try_append_run(records)
            if result.outcome is AppendOutcome.APPENDED:
                last = records[-1]
                with self._lock:
                    self._vouched[chain] = (int(last["seq"]), str(last["hash"]))
                done.update({str(r["dedupKey"]): Appended(r, created=True) for r in records})
                return done
            if result.outcome is AppendOutcome.DUPLICATE:
                for key in result.duplicates:
                    found = self._store.find(chain, key)
                    if found is None:
                        raise ChainIntegrityError(
                            f"chain {chain!r}: dedup marker {key!r} exists but its record "
                            "does not (run quotagov audit verify)"
                        )
                    done[key] = Appended(found, created=False)
                pending = [(key, body) for key, body in pending if key not in done]
                if not pending:
                    return done
            head = self._store.head(chain)
            if attempt >= 1:
                cap = min(self._max_delay, self._base_delay * 2 ** min(attempt, 10))
                self._sleep(random.uniform(0, cap))
        raise ChainContentionError(
            f"chain {chain!r}: no free slot after {self._max_attempts} attempts for "
            f"{[key for key, _ in pending]!r}"
        )

    def _link(
        self,
        chain: str,
        head: ChainHead | None,
        pending: Sequence[tuple[str, Mapping[str, Any]]],
    ) -> list[dict[str, Any]]:
        """``pending`` as records after ``head``, linked and hashed, the last one sealed."""
        seq, prev = (head.seq, head.hash) if head else (0, GENESIS_HASH)
        records = []
        for key, body in pending:
            seq += 1
            record = seal(body, chain=chain, seq=seq, prev_hash=prev, dedup_key=key)
            records.append(record)
            prev = record["hash"]
        if self._sealer is not None:
            records[-1] = sealed(records[-1], self._sealer)
        return records

    def _vouch_for(self, chain: str, head: ChainHead | None) -> None:
        """The head rule (see the class doc).

        Raises:
            ChainIntegrityError: the head's seal is missing or does not verify.
        """
        if self._sealer is None or head is None:
            return
        with self._lock:
            if self._vouched.get(chain) == (head.seq, head.hash):
                return
        if not seal_holds(head.hash, head.seal, self._sealer):
            state = "has no seal" if not head.seal else "has a seal that does not verify"
            raise ChainIntegrityError(
                f"chain {chain!r}: the last record {head.seq} {state} with the audit key; "
                "the writer will not seal records on top of it (run quotagov audit verify)"
            )
        with self._lock:
            self._vouched[chain] = (head.seq, head.hash)


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
