"""Signed digests of the audit chains, kept where nobody can change them.

Digests that nobody can change; the model is CloudTrail's log file
integrity validation (hourly digest files, each signed and chained to the previous
one, checked by ``aws cloudtrail validate-logs``). A scheduled function (every 15
minutes, and on demand) writes, for each chain that moved since its last digest, one
object to an S3 bucket with Object Lock in COMPLIANCE mode::

    {"header": {version: 1, chain, firstSeq, headSeq, headHash, recordsSha256,
                previousDigest: <key>|null, previousSignature: <base64>|null,
                time: <ISO-8601 UTC>, keyId, signingAlgorithm},
     "records": [<hash of record firstSeq>, ..., <hash of record headSeq>],
     "signature": <base64>}

``signature`` signs the canonical JSON of ``header`` (a few hundred bytes, within
KMS ``Sign``'s 4096-byte RAW limit) with an asymmetric KMS key (ECC_NIST_P256,
ECDSA_SHA_256) whose ``kms:Sign`` only the digest function's role holds;
``recordsSha256`` is the SHA-256 of the canonical JSON of ``records``. So each digest
names exactly which records (seq and hash) the table must still hold, and the chain
of ``previousSignature`` shows that no digest was left out.

Before signing, the publisher checks what it is about to vouch for: the new records
follow the last digest's head, each matches its hash and links to the one before, and
their seals hold (:func:`~quotagov.governance.audit.seals.first_unsealed`). A chain
that fails is not digested (reported, so an alarm fires), never blessed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from quotagov.clock import Clock
from quotagov.governance.audit.chain import GENESIS_HASH, ChainBreak, record_hash
from quotagov.governance.audit.errors import MalformedDigestError as MalformedDigestError
from quotagov.governance.audit.seals import first_unsealed
from quotagov.governance.canonical import canonical_json
from quotagov.governance.ports.audit import (
    ChainStore,
    DigestSigner,
    DigestStore,
    RecordSealer,
    SignatureChecker,
    StoredDigest,
)

#: Format version of the digest objects.
DIGEST_VERSION = 1

#: KMS ``Sign`` accepts at most this many bytes with ``MessageType=RAW``.
MAX_SIGNED_BYTES = 4096


def digest_key(chain: str, first_seq: int, head_seq: int, at: float) -> str:
    """Object key (without the store's prefix):
    ``<chain>/<12-digit head>-<12-digit first>-<UTC time>.json``.

    Keys sort by head seq, then first seq (an on-demand digest of an unmoved chain has
    ``first = head + 1``), then time, so the greatest key is the latest digest.
    """
    moment = datetime.fromtimestamp(at, tz=UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{chain}/{head_seq:012d}-{first_seq:012d}-{moment}.json"


def records_sha256(hashes: Sequence[str]) -> str:
    """SHA-256 (hex) of the canonical JSON list of record hashes a digest covers."""
    return hashlib.sha256(canonical_json(list(hashes)).encode("utf-8")).hexdigest()


def signed_message(header: Mapping[str, Any]) -> bytes:
    """The bytes the digest signature covers: the header's canonical JSON, UTF-8.

    Raises:
        ValueError: when it exceeds :data:`MAX_SIGNED_BYTES` (a chain name too long).
    """
    message = canonical_json(dict(header)).encode("utf-8")
    if len(message) > MAX_SIGNED_BYTES:
        raise ValueError(f"digest header is {len(message)} bytes, over {MAX_SIGNED_BYTES}")
    return message


@dataclass(frozen=True)
class Digest:
    """A parsed digest object.

    Attributes:
        key: its object key.
        header: the signed header (see the module doc).
        records: the hashes of records ``firstSeq..headSeq``.
        signature: base64 signature over :func:`signed_message` of ``header``.
        versions: how many versions its key holds in the store.
    """

    key: str
    header: dict[str, Any]
    records: list[str]
    signature: str
    versions: int = 1

    @property
    def head_seq(self) -> int:
        """The last record the digest covers (0: none yet)."""
        return int(self.header.get("headSeq") or 0)

    @property
    def first_seq(self) -> int:
        """The first record the digest covers."""
        return int(self.header.get("firstSeq") or 0)

    def body(self) -> bytes:
        """The object's content (canonical JSON)."""
        return canonical_json(
            {"header": self.header, "records": self.records, "signature": self.signature}
        ).encode("utf-8")


def parse_digest(stored: StoredDigest) -> Digest:
    """Parse a stored object.

    Raises:
        MalformedDigestError: not JSON, or ``header``/``records``/``signature`` missing
            or of the wrong type.
    """
    try:
        document = json.loads(stored.body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedDigestError(f"digest {stored.key}: not JSON ({exc})") from None
    if not isinstance(document, dict):
        raise MalformedDigestError(f"digest {stored.key}: not a JSON object")
    header, records, signature = (
        document.get("header"),
        document.get("records"),
        document.get("signature"),
    )
    if not isinstance(header, dict):
        raise MalformedDigestError(f"digest {stored.key}: header: missing or not an object")
    if not isinstance(records, list) or not all(isinstance(h, str) for h in records):
        raise MalformedDigestError(f"digest {stored.key}: records: not a list of hashes")
    if not isinstance(signature, str):
        raise MalformedDigestError(f"digest {stored.key}: signature: missing")
    for name in ("firstSeq", "headSeq"):
        if not isinstance(header.get(name), int) or isinstance(header.get(name), bool):
            raise MalformedDigestError(f"digest {stored.key}: header.{name}: not a whole number")
    return Digest(stored.key, header, records, signature, stored.versions)


@dataclass(frozen=True)
class PublishOutcome:
    """What :meth:`DigestPublisher.publish` did for one chain.

    Attributes:
        chain: the chain.
        status: ``published``, ``unchanged`` (no new record since the last digest) or
            ``refused`` (the table contradicts the last digest or the new records are
            broken: nothing signed, see ``reason``).
        key: the new digest's key (``published``).
        head_seq: the head the digest covers (``published``), or the last digest's.
        reason: why it was refused.
    """

    chain: str
    status: str
    key: str | None = None
    head_seq: int = 0
    reason: str = ""


@dataclass
class DigestPublisher:
    """Writes one signed digest per chain that moved (the scheduled digest function).

    Args:
        chains: the audit chains (read only).
        store: the digest bucket.
        signer: the digest key (``kms:Sign``).
        sealer: the record MAC key, to check the seals of the records about to be
            digested (``kms:VerifyMac``); None skips that check (tests only).
        clock: for ``time`` and the key.
    """

    chains: ChainStore
    store: DigestStore
    signer: DigestSigner
    clock: Clock
    sealer: RecordSealer | None = None

    def publish(
        self, *, force: bool = False, only: Iterable[str] | None = None
    ) -> list[PublishOutcome]:
        """Digest every chain (or ``only`` these) that moved since its last digest.

        ``force`` also digests chains that did not move (an empty ``records`` list, a
        fresh ``time``): on-demand proof that the head is still the head.

        Raises:
            whatever the store, the chains or the signer raise (the scheduled run is
            retried; chains already digested in this run stay digested).
        """
        names = sorted(set(only) if only is not None else set(self.chains.chains()))
        return [self._publish_chain(name, force) for name in names]

    def _publish_chain(self, chain: str, force: bool) -> PublishOutcome:
        latest = self.store.latest(chain)
        last = parse_digest(latest) if latest is not None else None
        last_seq = last.head_seq if last is not None else 0
        last_hash = str(last.header.get("headHash")) if last is not None else GENESIS_HASH
        head = self.chains.head(chain)
        head_seq = head.seq if head is not None else 0
        if head_seq < last_seq:
            return PublishOutcome(
                chain,
                "refused",
                head_seq=last_seq,
                reason=f"the chain ends at record {head_seq} but its last digest covers "
                f"record {last_seq} (records deleted; run quotagov audit verify)",
            )
        if head_seq == last_seq and not force:
            return PublishOutcome(chain, "unchanged", head_seq=last_seq)
        new = [r for r in self.chains.records(chain, after_seq=last_seq) if _seq(r) <= head_seq]
        fault = self._fault(chain, new, last_seq, last_hash)
        if fault is not None:
            return PublishOutcome(chain, "refused", head_seq=last_seq, reason=str(fault))
        hashes = [str(r["hash"]) for r in new]
        now = self.clock.now()
        header: dict[str, Any] = {
            "version": DIGEST_VERSION,
            "chain": chain,
            "firstSeq": last_seq + 1,
            "headSeq": last_seq + len(new),
            "headHash": hashes[-1] if hashes else last_hash,
            "recordsSha256": records_sha256(hashes),
            "previousDigest": last.key if last is not None else None,
            "previousSignature": last.signature if last is not None else None,
            "time": datetime.fromtimestamp(now, tz=UTC).isoformat().replace("+00:00", "Z"),
            "keyId": self.signer.key_id,
            "signingAlgorithm": self.signer.algorithm,
        }
        signature = self.signer.sign(signed_message(header))
        key = digest_key(chain, int(header["firstSeq"]), int(header["headSeq"]), now)
        digest = Digest(key, header, hashes, signature)
        self.store.put(key, digest.body())
        return PublishOutcome(chain, "published", key=key, head_seq=int(header["headSeq"]))

    def _fault(
        self, chain: str, new: Sequence[Mapping[str, Any]], last_seq: int, last_hash: str
    ) -> ChainBreak | None:
        prev = last_hash
        for offset, record in enumerate(new, start=1):
            seq = last_seq + offset
            if _seq(record) != seq:
                return ChainBreak(chain, seq, f"missing: the next stored record is {_seq(record)}")
            if record.get("hash") != record_hash(record):
                return ChainBreak(chain, seq, "hash does not match its content (changed)")
            if record.get("prevHash") != prev:
                return ChainBreak(chain, seq, "does not link to the record before it")
            prev = str(record["hash"])
        if self.sealer is not None and new:
            check = first_unsealed(new, self.sealer)
            if check.bad_seq is not None:
                return ChainBreak(chain, check.bad_seq, check.reason)
        return None


def _seq(record: Mapping[str, Any]) -> int:
    try:
        return int(record.get("seq"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return -1


@dataclass(frozen=True)
class DigestCheck:
    """Outcome of :func:`check_digests` for one chain.

    Attributes:
        first_break: the first fault (a record the table no longer holds as digested,
            or a digest that is forged, overwritten or out of sequence), None if none.
        digests: how many digests were checked.
        covered: the last record seq the digests cover (0: none).
    """

    first_break: ChainBreak | None
    digests: int
    covered: int


def check_digests(
    chain: str,
    records: Sequence[Mapping[str, Any]],
    digests: Sequence[StoredDigest],
    checker: SignatureChecker,
) -> DigestCheck:
    """Check every digest of ``chain`` and that ``records`` (as stored, in seq order;
    position ``i`` is record ``i + 1``) still hold exactly what each digest covers.

    Per digest, in key order: one version only (else overwritten); it parses; it names
    ``chain``; its signature verifies with the public key; ``recordsSha256``,
    ``headSeq`` and ``headHash`` agree with its ``records``; it follows the previous
    digest (``previousDigest``/``previousSignature``, ``firstSeq`` = previous
    ``headSeq`` + 1; the first digest starts at record 1). Then each covered record
    ``seq`` must be stored with the digested hash. The first fault is returned: the
    record that differs (by seq) or, for a digest fault, the digest's first record.
    """
    faults: list[ChainBreak] = []
    previous: Digest | None = None
    covered = 0
    for count, stored in enumerate(digests, start=1):
        if stored.versions > 1:
            reason = (
                f"digest {stored.key} has {stored.versions} versions "
                "(overwritten after it was written)"
            )
            return DigestCheck(ChainBreak(chain, covered + 1, reason), count, covered)
        try:
            digest = parse_digest(stored)
        except MalformedDigestError as exc:
            return DigestCheck(ChainBreak(chain, covered + 1, str(exc)), count, covered)
        fault = _digest_fault(chain, digest, previous, covered, checker)
        if fault is not None:
            return DigestCheck(
                ChainBreak(chain, digest.first_seq or covered + 1, fault), count, covered
            )
        for offset, digested in enumerate(digest.records):
            seq = digest.first_seq + offset
            stored_record = records[seq - 1] if seq - 1 < len(records) else None
            if stored_record is None:
                faults.append(
                    ChainBreak(
                        chain,
                        seq,
                        f"missing: digest {digest.key} covers it (hash {digested[:12]}...) "
                        "but the table no longer holds it (deleted)",
                    )
                )
                break
            if stored_record.get("hash") != digested:
                faults.append(
                    ChainBreak(
                        chain,
                        seq,
                        f"differs from digest {digest.key}: stored hash "
                        f"{str(stored_record.get('hash'))[:12]}..., digested {digested[:12]}... "
                        "(changed after it was digested)",
                    )
                )
                break
        covered = digest.head_seq
        previous = digest
    first = min(faults, key=lambda b: b.seq) if faults else None
    return DigestCheck(first, len(digests), covered)


def _digest_fault(
    chain: str,
    digest: Digest,
    previous: Digest | None,
    covered: int,
    checker: SignatureChecker,
) -> str | None:
    header = digest.header
    name = f"digest {digest.key}"
    if header.get("chain") != chain:
        return f"{name} names chain {header.get('chain')!r}"
    try:
        message = signed_message(header)
    except ValueError as exc:
        return f"{name}: {exc}"
    if not checker.check(message, digest.signature):
        return f"{name}: signature does not verify with the digest public key (forged)"
    if header.get("recordsSha256") != records_sha256(digest.records):
        return f"{name}: its record list does not match the signed recordsSha256"
    if digest.first_seq != covered + 1:
        return (
            f"{name} starts at record {digest.first_seq}, not {covered + 1} "
            "(a digest is missing before it)"
        )
    if digest.head_seq != digest.first_seq + len(digest.records) - 1:
        return f"{name}: headSeq {digest.head_seq} does not match its {len(digest.records)} records"
    if digest.records and header.get("headHash") != digest.records[-1]:
        return f"{name}: headHash is not its last record's hash"
    want_key = previous.key if previous is not None else None
    want_signature = previous.signature if previous is not None else None
    if (
        header.get("previousDigest") != want_key
        or header.get("previousSignature") != want_signature
    ):
        return (
            f"{name} does not follow "
            f"{'digest ' + want_key if want_key else 'nothing (it should be the first)'} "
            "(previousDigest/previousSignature differ)"
        )
    return None
