"""Use cases behind ``quotagov audit``: verify the chains, and show the history to a person.

``verify`` walks every chain (see :func:`quotagov.governance.audit.chain.verify_chain`)
and reports the first broken record of each. It finds the chains both in the registry
(``ChainStore.chains``) and from the stored records and dedup markers themselves
(``ChainStore.stored_chains``, a scan of the store), so deleting a chain's registry
item does not hide the chain: a chain with records or markers but no registry item is
reported as broken, and so is a registered chain holding nothing at all.
``history`` selects records by quota share and time, and :func:`describe_record`
renders one with its difference and findings.

What the table alone cannot show: a writer of the table who knows the
record format can recompute every hash and dedup marker after an edit, truncate a
chain's tail with its markers, or wipe a chain with its registry item, and the table is
consistent in itself. Two more checks close that:

- **digests** (:mod:`quotagov.governance.audit.digests`): every signed digest in the
  digest bucket is checked (signature with the public key, chain of digests), and
  the table must still hold exactly the records each covers; chains that only the
  digests still name are verified too (wiped chains);
- **seals** (:mod:`quotagov.governance.audit.seals`): one seal per run of records (an
  audit queue batch), and the writer seals a run only on top of a head it has proven,
  so a seal that holds proves every record before it: one ``VerifyMac`` per intact
  chain; when the last seal fails, a bisection over the seals finds the first run that
  is not proven. This covers the records appended since the last digest, at the
  precision of a run (which record of the run changed, only a digest can tell).

The first fault of a chain (lowest seq) is reported. An ``anchors`` entry (a head
``(seq, hash)`` kept elsewhere, ``--anchor``) must also still be in the chain.
What stays unprovable: whole runs appended after the last digest *and* deleted with
their markers before the next one (at most 15 minutes; publish a digest on demand to
close the window). Deleting part of a run leaves records no seal covers, which is
reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from quotagov.governance.audit.chain import ChainBreak, verify_chain
from quotagov.governance.audit.digests import check_digests
from quotagov.governance.audit.seals import SealCheck, first_unsealed
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
        sealed_runs: how many records carry a seal (one per sealed run; 0 when seals
            were not checked).
    """

    chain: str
    records: int
    first_break: ChainBreak | None
    registered: bool = True
    head: ChainHead | None = None
    digests: int | None = None
    digested_to: int = 0
    seal_checks: int | None = None
    sealed_runs: int = 0

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


def _read_chain(
    store: ChainStore, name: str
) -> tuple[list[dict[str, Any]], dict[str, tuple[int, str]]]:
    """The records and dedup markers of ``name`` as one consistent view of a chain the
    writer may be appending to while it is read.

    Markers are read before records, so every marker read names a record that exists
    when the records are read (a run and its markers are written in one transaction).
    A record read without its marker was appended in between: the markers are read
    again and only those records' markers are taken from the second read (taking all of
    them would bring markers of records appended after the records were read).
    """
    markers = store.markers(name)
    records = list(store.records(name))
    unmarked = {str(r.get("dedupKey")) for r in records} - set(markers)
    if unmarked:
        again = store.markers(name)
        markers.update({key: again[key] for key in unmarked if key in again})
    return records, markers


def _seal_break(
    name: str, sealing: SealCheck, digest_proven: int, digest_break: ChainBreak | None
) -> ChainBreak | None:
    """The seal fault, narrowed by what the signed digests prove (records
    ``1..digest_proven`` are exactly as digested, so a run is unproven only after that).

    A run wholly inside the digested records while a digest names a later fault (e.g.
    the record that sealed the run was deleted, and a digest covers it) is explained by
    that fault; wholly inside them with no digest fault, only a seal field was altered.
    """
    if sealing.bad_seq is None or sealing.through is None:
        return None
    first = max(sealing.bad_seq, digest_proven + 1)
    if first <= sealing.through:
        return ChainBreak(name, first, sealing.reason_from(first))
    if digest_break is not None:
        return None
    state = "does not verify" if sealing.sealing_fails else "is missing"
    return ChainBreak(
        name,
        sealing.through,
        f"its seal {state} although records {sealing.bad_seq}-{sealing.through} match the "
        "signed digests (the seal field was removed or altered)",
    )


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
    :func:`~quotagov.governance.audit.seals.first_unsealed` on a chain whose links hold
    (one ``VerifyMac`` when the last seal holds). The break with the lowest seq wins; a
    seal fault (which names a run of records) starts after the records the digests
    prove.

    A chain may be appended to while it is verified: its digests are listed first, then
    its markers, then its records (:func:`_read_chain`), so nothing appended meanwhile
    looks like a deletion or a record without its marker. A chain found broken is read
    and checked once more before it is reported: DynamoDB's ``Query`` is read-committed
    per item, so a run being written (one transaction) may be visible in part to the
    first read (its markers without its records, or its records without the one that
    seals them).

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
        report = _verify_chain(store, name, name in registry, anchors.get(name), digests, sealer)
        if report.first_break is not None:  # a run may have been half visible: read again
            report = _verify_chain(
                store, name, name in registry, anchors.get(name), digests, sealer
            )
        reports.append(report)
    return reports


def _verify_chain(
    store: ChainStore,
    name: str,
    registered: bool,
    anchor: tuple[int, str] | None,
    digests: DigestSource | None,
    sealer: RecordSealer | None,
) -> ChainReport:
    """One chain's report (see :func:`verify`)."""
    stored_digests = digests.store.digests(name) if digests is not None else []
    records, markers = _read_chain(store, name)
    count, first = verify_chain(name, records, markers)
    exists = count > 0 or bool(markers)
    if first is None and not exists and registered:
        first = ChainBreak(
            name, 1, "missing: the chain is registered but holds no records (deleted)"
        )
    if first is None and anchor is not None:
        first = _anchor_break(name, records, anchor)
    links_hold = first is None
    candidates = [first] if first is not None else []
    digest_count: int | None = None
    digested_to = 0
    digest_break: ChainBreak | None = None
    if digests is not None:
        checked = check_digests(name, records, stored_digests, digests.checker)
        digest_count, digested_to = checked.digests, checked.covered
        digest_break = checked.first_break
        if digest_break is not None:
            candidates.append(digest_break)
    digest_proven = digested_to if digest_break is None else min(digested_to, digest_break.seq - 1)
    seal_checks: int | None = None
    sealed_runs = 0
    if sealer is not None and links_hold and records:
        sealing = first_unsealed(records, sealer)
        seal_checks, sealed_runs = sealing.checks, sealing.seals
        seal_break = _seal_break(name, sealing, digest_proven, digest_break)
        if seal_break is not None:
            candidates.append(seal_break)
    first = min(candidates, key=lambda b: b.seq) if candidates else None
    last = records[-1] if records else None
    head = None
    if first is None and last is not None:  # seq is a number in an intact chain
        head = ChainHead(int(last["seq"]), str(last.get("hash")))
    return ChainReport(
        name,
        count,
        first,
        registered=registered or not exists,
        head=head,
        digests=digest_count,
        digested_to=digested_to,
        seal_checks=seal_checks,
        sealed_runs=sealed_runs,
    )


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
        if "text" in change:  # a policy change, in governance terms
            lines.append(f"    {change['text']}")
            continue
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
