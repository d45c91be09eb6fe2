"""Record seals: a keyed MAC over the hash of the last record of each run, from a key
only the writer may use.

Records an outsider cannot forge. A record's ``hash`` (SHA-256 of its
canonical content, which includes ``prevHash``) is public arithmetic: anyone who can
put an item can recompute it. A ``seal`` is a MAC with a KMS HMAC_256 key whose
``kms:GenerateMac`` only the audit writer's role holds; verifiers need
``kms:VerifyMac`` only. The ``seal`` field is outside the hashed content
(:data:`~quotagov.governance.audit.chain.UNHASHED_FIELDS`).

**The rule (seal v2, run seals).** The writer appends records in *runs*: the records
of one audit queue batch (at most :data:`MAX_RUN_RECORDS`), or a single CloudTrail
record, written in one DynamoDB transaction. Only the last record of a run carries a
seal: ``"v2:" + base64(MAC(key, "quotagov-audit-seal/v2\\n" + hash))``. Before it seals
a run, the writer checks the seal of the head record the run chains onto (its
``prevHash``), unless it sealed that very head itself (see
:class:`~quotagov.governance.audit.chain.ChainWriter`), and refuses to chain onto a head
whose seal does not verify. By induction, a v2 seal that verifies on record ``k`` of a
chain whose links are intact proves records ``1..k`` are exactly what the writer wrote
(SHA-256 second preimages aside): the seal covers record ``k``, whose hash covers
``prevHash`` and so every earlier record, and the writer only chained onto records it
had proven. Records between two seals carry none; the seal after them covers them.

So :func:`first_unsealed` checks the last seal first: one ``VerifyMac`` proves a whole
intact chain. Only when it fails does it bisect over the sealed records (``log2`` of
their number) to find the last seal that holds; everything after it is not proven, and
the fault is named as the *run* that follows: records ``a..b`` sealed together by
record ``b`` whose seal fails (one of them was changed, inserted, or forged and
re-hashed; a seal covers its run as a whole, so which one only a signed digest can tell,
see :mod:`~quotagov.governance.audit.digests`), or records ``a..b`` after the last seal
with none after them (appended without the key, or the record that sealed their run
was deleted: a truncated tail).

**Before (seal v1, records written before run seals).** Every record carried
``base64(MAC(key, "quotagov-audit-seal/v1\\n" + hash))`` (no prefix), and that writer
chained onto the head without checking its seal. v1 seals still verify, with the v1
message, and take part in the same search; for them the premise above is weaker: a
v1 record replaced with a re-hashed one before the next append could be chained onto
and sealed by that writer, so only a signed digest proves v1 records. The first run
sealed by the new writer onto a v1 head checks that head's v1 seal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quotagov.governance.ports.audit import RecordSealer

#: The record field holding the seal.
SEAL_FIELD = "seal"

#: Domain prefix of the MAC message of a run seal (the key seals nothing else).
SEAL_CONTEXT = b"quotagov-audit-seal/v2\n"

#: Domain prefix of the MAC message of a v1 (per-record) seal, written before run seals.
SEAL_CONTEXT_V1 = b"quotagov-audit-seal/v1\n"

#: How a run seal starts in the ``seal`` field (a v1 seal is bare base64, which has no ``:``).
RUN_SEAL_PREFIX = "v2:"

#: Most records one run (one seal, one DynamoDB transaction of 2 items per record plus
#: the registry item: TransactWriteItems takes at most 100) may hold; the audit queue's
#: ``BatchSize`` in template.yaml is at most this (tests/deploy/test_audit_template.py).
MAX_RUN_RECORDS = 10


def seal_message(record_hash: str, version: int = 2) -> bytes:
    """The bytes the MAC covers for a record whose ``hash`` is ``record_hash`` (64 hex).

    Raises:
        ValueError: ``version`` is not 1 or 2.
    """
    if version not in (1, 2):
        raise ValueError(f"seal version {version}: only 1 and 2 exist")
    context = SEAL_CONTEXT if version == 2 else SEAL_CONTEXT_V1
    return context + record_hash.encode("ascii")


def run_seal(record_hash: str, sealer: RecordSealer) -> str:
    """The ``seal`` of the last record of a run whose ``hash`` is ``record_hash`` (one
    ``GenerateMac`` call): ``"v2:" + base64 MAC``."""
    return RUN_SEAL_PREFIX + sealer.seal(seal_message(record_hash))


def sealed(record: Mapping[str, Any], sealer: RecordSealer) -> dict[str, Any]:
    """``record`` (already hashed) with its run seal (one MAC call)."""
    return {**record, SEAL_FIELD: run_seal(str(record["hash"]), sealer)}


def seal_holds(record_hash: str, seal: object, sealer: RecordSealer) -> bool:
    """Whether ``seal`` (a v2 run seal, or a bare v1 seal) is the audit key's MAC of
    ``record_hash`` (one ``VerifyMac`` call; none for a missing seal).

    Raises:
        whatever ``sealer.check`` raises for a failing KMS call (e.g. no
        ``kms:VerifyMac`` right): an unverifiable seal is not reported as forged.
    """
    if not isinstance(seal, str) or not seal:
        return False
    if seal.startswith(RUN_SEAL_PREFIX):
        return sealer.check(seal_message(record_hash), seal[len(RUN_SEAL_PREFIX) :])
    return sealer.check(seal_message(record_hash, version=1), seal)


def _holds(record: Mapping[str, Any], sealer: RecordSealer) -> bool:
    return seal_holds(str(record.get("hash")), record.get(SEAL_FIELD), sealer)


@dataclass(frozen=True)
class SealCheck:
    """Outcome of :func:`first_unsealed`.

    Attributes:
        bad_seq: the first record no holding seal covers, None when every record is
            proven.
        reason: why, for a person.
        checks: how many MACs were verified (the KMS ``VerifyMac`` calls).
        through: the last record of the unproven run (the sealing record whose seal
            fails, or the chain's last record when no seal follows), None when proven.
        sealing_fails: True when a seal on record ``through`` fails; False when no seal
            follows the unproven records at all.
        seals: how many records of ``records`` carry a seal (the runs).
    """

    bad_seq: int | None
    reason: str
    checks: int
    through: int | None = None
    sealing_fails: bool = False
    seals: int = 0

    def reason_from(self, first: int) -> str:
        """The reason, for the unproven run starting at record ``first`` (>= ``bad_seq``,
        when records before it are proven otherwise, e.g. by a signed digest)."""
        if self.bad_seq is None or self.through is None:
            return ""
        return _reason(first, self.through, self.sealing_fails)


def _reason(first: int, through: int, sealing_fails: bool) -> str:
    if sealing_fails:
        if first == through:
            return "seal does not verify with the audit key (forged, or re-hashed after sealing)"
        return (
            f"not proven: records {first}-{through} are sealed together by record {through}, "
            "whose seal does not verify with the audit key (one of them was changed, "
            "inserted, or forged and re-hashed, or the seal was altered)"
        )
    if first == through:
        return (
            "has no seal and no later record's seal covers it (written without the audit "
            "key, or the record that sealed its run was deleted: the tail was truncated)"
        )
    return (
        f"not proven: records {first}-{through} have no seal and no later record's seal "
        "covers them (written without the audit key, or the record that sealed their run "
        "was deleted: the tail was truncated)"
    )


def _seq(record: Mapping[str, Any], fallback: int) -> int:
    try:
        return int(record.get("seq"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return fallback


def first_unsealed(records: Sequence[Mapping[str, Any]], sealer: RecordSealer) -> SealCheck:
    """The first of ``records`` (a chain's records, or the records after a digest's head;
    links already verified intact, in seq order) that no holding seal proves.

    See the module doc for the rule. The last seal is checked first (one ``VerifyMac``
    for an intact chain); when it fails, a bisection over the sealed records finds the
    last one whose seal holds ("seal holds" is true up to the last authentic sealed
    record and false after the first forged or re-hashed one: a forger cannot make a
    later seal hold without the key), with about ``log2`` of their number more checks.

    Raises:
        whatever ``sealer.check`` raises for a failing KMS call (e.g. no
        ``kms:VerifyMac`` right): an unverifiable seal is not reported as forged.
    """
    sealed_at = [i for i, record in enumerate(records) if record.get(SEAL_FIELD)]
    checks = 0
    low, high = 0, len(sealed_at)  # sealed_at[:low] hold; the first failing is in [low, high]
    if sealed_at:
        checks += 1
        if _holds(records[sealed_at[-1]], sealer):
            low = high
        else:
            high -= 1
    while low < high:
        middle = (low + high) // 2
        checks += 1
        if _holds(records[sealed_at[middle]], sealer):
            low = middle + 1
        else:
            high = middle
    proven = sealed_at[low - 1] + 1 if low > 0 else 0  # records[:proven] are proven
    if proven == len(records):
        return SealCheck(None, "", checks, seals=len(sealed_at))
    sealing_fails = low < len(sealed_at)
    end = sealed_at[low] if sealing_fails else len(records) - 1
    first = _seq(records[proven], proven + 1)
    through = _seq(records[end], end + 1)
    return SealCheck(
        first,
        _reason(first, through, sealing_fails),
        checks,
        through=through,
        sealing_fails=sealing_fails,
        seals=len(sealed_at),
    )
