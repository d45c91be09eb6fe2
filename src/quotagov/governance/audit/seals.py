"""Record seals: a keyed MAC over each record's hash, from a key only the writer may use.

Issue 14, "Records an outsider cannot forge". A record's ``hash`` (SHA-256 of its
canonical content, which includes ``prevHash``) is public arithmetic: anyone who can
put an item can recompute it. Its ``seal`` is ``MAC(key, "quotagov-audit-seal/v1\\n" +
hash)`` with a KMS HMAC_256 key whose ``kms:GenerateMac`` only the audit writer's role
holds; verifiers need ``kms:VerifyMac`` only. The ``seal`` field is outside the hashed
content (:data:`~quotagov.governance.audit.chain.UNHASHED_FIELDS`).

Because each hash covers the previous one, a valid seal on record ``k`` of a chain
whose links are intact vouches for records ``1..k`` too (SHA-256 second preimages
aside). Verification uses that: :func:`first_unsealed` finds the first record whose
seal fails by bisection, with ``ceil(log2(n + 1))`` ``VerifyMac`` calls for ``n``
records instead of ``n``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quotagov.governance.ports.audit import RecordSealer

#: The record field holding the seal (base64 of the MAC).
SEAL_FIELD = "seal"

#: Domain prefix of the MAC message (the key seals nothing else).
SEAL_CONTEXT = b"quotagov-audit-seal/v1\n"


def seal_message(record_hash: str) -> bytes:
    """The bytes the MAC covers for a record whose ``hash`` is ``record_hash`` (64 hex)."""
    return SEAL_CONTEXT + record_hash.encode("ascii")


def sealed(record: Mapping[str, Any], sealer: RecordSealer) -> dict[str, Any]:
    """``record`` (already hashed) with its ``seal`` (one MAC call)."""
    return {**record, SEAL_FIELD: sealer.seal(seal_message(str(record["hash"])))}


@dataclass(frozen=True)
class SealCheck:
    """Outcome of :func:`first_unsealed`.

    Attributes:
        bad_seq: the first record whose seal is missing or wrong, None when all hold.
        reason: why, for a person.
        checks: how many MACs were verified (the KMS ``VerifyMac`` calls).
    """

    bad_seq: int | None
    reason: str
    checks: int


def _holds(record: Mapping[str, Any], sealer: RecordSealer) -> bool:
    seal = record.get(SEAL_FIELD)
    if not isinstance(seal, str) or not seal:
        return False
    return sealer.check(seal_message(str(record.get("hash"))), seal)


def first_unsealed(records: Sequence[Mapping[str, Any]], sealer: RecordSealer) -> SealCheck:
    """The first of ``records`` (a chain's records, links already verified intact, in
    seq order) whose seal does not hold, by bisection.

    "Seal holds at ``i``" is monotone on a linked chain: true up to the last authentic
    record, false after the first forged or re-hashed one (a forger cannot make a later
    seal hold without the key). So the first failing record is found with about
    ``log2(len(records))`` checks.

    Raises:
        whatever ``sealer.check`` raises for a failing KMS call (e.g. no
        ``kms:VerifyMac`` right): an unverifiable seal is not reported as forged.
    """
    low, high = 0, len(records)  # records[:low] hold; the answer lies in [low, high]
    checks = 0
    while low < high:
        middle = (low + high) // 2
        checks += 1
        if _holds(records[middle], sealer):
            low = middle + 1
        else:
            high = middle
    if low == len(records):
        return SealCheck(None, "", checks)
    record = records[low]
    why = (
        "has no seal (written without the audit key)"
        if not record.get(SEAL_FIELD)
        else "seal does not verify with the audit key (forged, or re-hashed after sealing)"
    )
    return SealCheck(int(record.get("seq") or low + 1), why, checks)
