"""Use cases behind ``quotagov audit``: verify the chains, and show the history to a person.

``verify`` walks every chain (see :func:`quotagov.governance.audit.chain.verify_chain`)
and reports the first broken record of each. It finds the chains both in the registry
(``ChainStore.chains``) and from the stored records and dedup markers themselves
(``ChainStore.stored_chains``, a scan of the store), so deleting a chain's registry
item does not hide the chain: a chain with records or markers but no registry item is
reported as broken, and so is a registered chain holding nothing at all.
``history`` selects records by quota share and time, and :func:`describe_record`
renders one with its difference and findings.

What the table alone cannot show (issue 14): a writer of the table who knows the
record format can recompute every hash and dedup marker after an edit, truncate a
chain's tail with its markers, or wipe a chain with its registry item, and the table is
consistent in itself. Two more checks close that:

- **digests** (:mod:`quotagov.governance.audit.digests`): every signed digest in the
  digest bucket is checked (signature with the public key, chain of digests), and
  the table must still hold exactly the records each covers; chains that only the
  digests still name are verified too (wiped chains);
- **seals** (:mod:`quotagov.governance.audit.seals`): the first record whose KMS MAC
  does not hold is found by bisection (``log2(n)`` ``VerifyMac`` calls per chain),
  which covers the records appended since the last digest.

The first fault of a chain (lowest seq) is reported. An ``anchors`` entry (a head
``(seq, hash)`` kept elsewhere, ``--anchor``) must also still be in the chain.
What stays unprovable: records appended after the last digest *and* deleted with
their markers before the next one (at most 15 minutes; publish a digest on demand to
close the window).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from quotagov.governance.audit.chain import ChainBreak, verify_chain
from quotagov.governance.audit.digests import check_digests
from quotagov.governance.audit.seals import first_unsealed
from quotagov.governance.ports import (
    ChainHead,
    ChainStore,
    DigestStore,
    RecordSealer,
    SignatureChecker,
)


@dataclass(frozen=True)
class ChainReport:
    """Verification of one chain.

    Attributes:
        chain: the chain (job queue) name.
        records: how many records were walked.
        first_break: the first broken record, None when the records are intact.
        registered: False when the chain holds records or dedup markers but its
            registry item (written with record 1) is gone: someone deleted it.
        head: the last stored record's ``(seq, hash)`` (None for an empty chain), to
            publish as an anchor.
        digests: how many signed digests were checked (None: digests not checked).
        digested_to: the last record the digests cover (0: none).
        seal_checks: how many record seals were verified (None: seals not checked).
    """

    chain: str
    records: int
    first_break: ChainBreak | None
    registered: bool = True
    head: ChainHead | None = None
    digests: int | None = None
    digested_to: int = 0
    seal_checks: int | None = None

    @property
    def intact(self) -> bool:
        """True when no record is broken and the chain is in the registry."""
        return self.first_break is None and self.registered


def _anchor_break(
    chain: str, records: list[dict[str, Any]], anchor: tuple[int, str]
) -> ChainBreak | None:
    seq, expected = anchor
    if seq < 1:
        return ChainBreak(chain, seq, "the anchor names no record (seq < 1)")
    if seq > len(records):
        return ChainBreak(
            chain,
            seq,
            f"missing: the anchor names record {seq} but the chain ends at record "
            f"{len(records)} (its tail was deleted)",
        )
    if records[seq - 1].get("hash") != expected:
        return ChainBreak(
            chain, seq, f"hash differs from the anchor {expected[:12]}... (chain rewritten)"
        )
    return None


@dataclass(frozen=True)
class DigestSource:
    """Where :func:`verify` reads the signed digests from, and how it checks them.

    Attributes:
        store: the digest bucket (read only: ``s3:ListBucket``, ``s3:GetObject*``).
        checker: the digest public key (``kms:GetPublicKey`` once, or a PEM file).
    """

    store: DigestStore
    checker: SignatureChecker


def verify(
    store: ChainStore,
    chains: Iterable[str] | None = None,
    anchors: Mapping[str, tuple[int, str]] | None = None,
    *,
    digests: DigestSource | None = None,
    sealer: RecordSealer | None = None,
) -> list[ChainReport]:
    """Verify ``chains`` (default: every chain in the store), in name order.

    The default set is the registry's chains together with every chain found from its
    records and dedup markers (:meth:`ChainStore.stored_chains`, which may scan the
    whole store), and the anchored chains. For each chain, besides
    :func:`verify_chain`: a chain that holds records or markers but is missing from the
    registry has ``registered=False``; a registered chain holding neither gets a break
    at record 1 (its records deleted); an intact chain with an anchor (chain ->
    ``(seq, hash)``, a head published earlier) must still hold record ``seq`` with that
    hash, else a break at ``seq``. A named chain that exists nowhere and has no anchor
    is reported as 0 intact records.

    With ``digests``, every chain that has a digest is verified too, and for each chain
    :func:`~quotagov.governance.audit.digests.check_digests`; with ``sealer``,
    :func:`~quotagov.governance.audit.seals.first_unsealed` on a chain whose links hold.
    The break with the lowest seq wins.

    Raises:
        whatever the stores or KMS raise (a failing read is never reported as tamper).
    """
    anchors = anchors or {}
    registry = set(store.chains())
    digested = set(digests.store.chains()) if digests is not None else set()
    if chains is not None:
        names = sorted(set(chains))
    else:
        names = sorted(registry | set(store.stored_chains()) | set(anchors) | digested)
    reports = []
    for name in names:
        markers = store.markers(name)
        records = list(store.records(name))
        count, first = verify_chain(name, records, markers)
        exists = count > 0 or bool(markers)
        if first is None and not exists and name in registry:
            first = ChainBreak(
                name, 1, "missing: the chain is registered but holds no records (deleted)"
            )
        if first is None and name in anchors:
            first = _anchor_break(name, records, anchors[name])
        links_hold = first is None
        candidates = [first] if first is not None else []
        digest_count: int | None = None
        digested_to = 0
        if digests is not None:
            checked = check_digests(name, records, digests.store.digests(name), digests.checker)
            digest_count, digested_to = checked.digests, checked.covered
            if checked.first_break is not None:
                candidates.append(checked.first_break)
        seal_checks: int | None = None
        if sealer is not None and links_hold and records:
            sealing = first_unsealed(records, sealer)
            seal_checks = sealing.checks
            if sealing.bad_seq is not None:
                candidates.append(ChainBreak(name, sealing.bad_seq, sealing.reason))
        first = min(candidates, key=lambda b: b.seq) if candidates else None
        last = records[-1] if records else None
        head = None
        if first is None and last is not None:  # seq is a number in an intact chain
            head = ChainHead(int(last["seq"]), str(last.get("hash")))
        reports.append(
            ChainReport(
                name,
                count,
                first,
                registered=name in registry or not exists,
                head=head,
                digests=digest_count,
                digested_to=digested_to,
                seal_checks=seal_checks,
            )
        )
    return reports


def parse_time(text: str) -> float:
    """``--since`` value: ISO-8601 (``2026-05-04T10:00:00Z``, date only = midnight UTC)
    or epoch seconds. Returns epoch seconds.

    Raises:
        ValueError: naming the accepted forms.
    """
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"--since: {text!r} is neither ISO-8601 (2026-05-04T10:00:00Z) nor epoch seconds"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _record_seconds(record: Mapping[str, Any]) -> float:
    try:
        return parse_time(str(record.get("time", "")))
    except ValueError:
        return 0.0


def _about_share(record: Mapping[str, Any], share: str) -> bool:
    resource = record.get("resource") or {}
    if resource.get("type") == "quota-share":
        return bool(resource.get("name") == share)
    if resource.get("quotaShareName") == share:
        return True
    details = record.get("details") or {}
    return bool(details.get("quotaShareName") == share)


def history(
    store: ChainStore,
    *,
    share: str | None = None,
    since: float | None = None,
    chains: Iterable[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Records of ``chains`` (default all) in chain then ``seq`` order, filtered by quota
    share (records about the share or its jobs) and by ``time >= since`` (epoch seconds)."""
    names = sorted(chains) if chains is not None else store.chains()
    for name in names:
        for record in store.records(name):
            if share is not None and not _about_share(record, share):
                continue
            if since is not None and _record_seconds(record) < since:
                continue
            yield record


def _show(value: Any) -> str:
    if value is None:
        return "(none)"
    return str(value)


def describe_record(record: Mapping[str, Any]) -> str:
    """A few lines for a person: when, who, what, the difference and the findings."""
    actor = record.get("actor") or {}
    resource = record.get("resource") or {}
    who = str(actor.get("principalArn"))
    if actor.get("quotagov"):
        decision = actor.get("decisionId")
        who += f" (quotagov{f', decision {decision}' if decision else ''})"
    lines = [
        f"#{record.get('seq')} {record.get('time')} {record.get('kind')} "
        f"{record.get('action')} {resource.get('type')} {resource.get('name')}",
        f"    by {who}",
    ]
    error = record.get("error")
    if error:
        lines.append(f"    failed: {error.get('code')}: {error.get('message')}")
    for change in record.get("difference") or []:
        lines.append(f"    {change['path']}: {_show(change['before'])} -> {_show(change['after'])}")
    if record.get("beforeSource") in ("policy", "unknown") and record.get("difference"):
        lines.append(f"    (before taken from: {record['beforeSource']})")
    for item in record.get("findings") or []:
        lines.append(f"    ! {item['code']} [{item['severity']}] {item['message']}")
    details = record.get("details")
    if details:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(details.items()))
        lines.append(f"    details: {shown}")
    return "\n".join(lines)
