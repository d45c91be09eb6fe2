"""Use cases behind ``quotagov audit``: verify the chains, and show the history to a person.

``verify`` walks every chain (see :func:`quotagov.governance.audit.chain.verify_chain`)
and reports the first broken record of each. It finds the chains both in the registry
(``ChainStore.chains``) and from the stored records and dedup markers themselves
(``ChainStore.stored_chains``, a scan of the store), so deleting a chain's registry
item does not hide the chain: a chain with records or markers but no registry item is
reported as broken, and so is a registered chain holding nothing at all.
``history`` selects records by quota share and time, and :func:`describe_record`
renders one with its difference and findings.

What verification from inside the store cannot see: deleting the newest record of a
chain together with its dedup marker (and, for record 1, the registry item) leaves a
shorter chain that is consistent in itself, so truncating a chain's tail, or deleting a
whole chain with everything it wrote, is not detected from the table alone. Detecting
it needs an anchor kept outside the table that the table's writers cannot change: each
report carries the chain's head ``(seq, hash)``; publish it (e.g. periodically to an S3
bucket with Object Lock, or to a separate account's log) and pass it back as an
``anchors`` entry, which must still be in the chain (``quotagov audit verify --anchor
CHAIN=SEQ:HASH``). Records appended after the last published head stay unprotected.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from quotagov.governance.audit.chain import ChainBreak, verify_chain
from quotagov.governance.ports import ChainHead, ChainStore


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
    """

    chain: str
    records: int
    first_break: ChainBreak | None
    registered: bool = True
    head: ChainHead | None = None

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


def verify(
    store: ChainStore,
    chains: Iterable[str] | None = None,
    anchors: Mapping[str, tuple[int, str]] | None = None,
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
    """
    anchors = anchors or {}
    registry = set(store.chains())
    if chains is not None:
        names = sorted(set(chains))
    else:
        names = sorted(registry | set(store.stored_chains()) | set(anchors))
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
        last = records[-1] if records else None
        head = None
        if first is None and last is not None:  # seq is a number in an intact chain
            head = ChainHead(int(last["seq"]), str(last.get("hash")))
        reports.append(
            ChainReport(name, count, first, registered=name in registry or not exists, head=head)
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
