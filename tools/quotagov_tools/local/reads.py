"""What an operator would look at in the local runtime: stored escalations, the audit and
the owner notifications.

Plain reads through the governance ports (the runtime passes the stores its wiring
built for the functions' environment, see ``LocalRuntime.stored_escalation``,
``audit_records`` and ``audit_verify``); used by the demo's checks and the tests.
"""

from __future__ import annotations

from typing import Any

from quotagov.governance.audit.review import ChainReport, DigestSource, verify
from quotagov.governance.ports import (
    ChainStore,
    EscalationRepository,
    NotificationLog,
    RecordSealer,
)


def stored_escalation(table: EscalationRepository, escalation_id: str) -> dict[str, Any]:
    """The escalation as stored (its API shape), ``{}`` when there is none."""
    found = table.get(escalation_id)
    return {} if found is None else dict(found.to_api())


def audit_records(store: ChainStore) -> list[dict[str, Any]]:
    """Every record of every audit hash chain, chain by chain in ``seq`` order."""
    return [record for chain in store.chains() for record in store.records(chain)]


def audit_reports(
    store: ChainStore, digests: DigestSource | None, sealer: RecordSealer | None
) -> list[ChainReport]:
    """``quotagov audit verify``'s reports: chains, seals and signed digests."""
    return verify(store, digests=digests, sealer=sealer)


def chains_intact(reports: list[ChainReport]) -> bool:
    """True when every chain is intact (and one exists)."""
    return bool(reports) and all(report.intact for report in reports)


def notifications(log: NotificationLog) -> list[dict[str, Any]]:
    """Every owner notification logged, oldest first: ``{kind, jobName, recipient, text,
    submissionId, eventKey, delivery, channel, ts, at, details}``."""
    return [
        {
            "kind": e.kind,
            "jobName": e.job_name,
            "recipient": e.recipient,
            "text": e.text,
            "submissionId": e.submission_id,
            "eventKey": e.event_key,
            "delivery": e.delivery,
            "channel": e.channel,
            "ts": e.ts,
            "at": e.at,
            "details": e.details,
        }
        for e in log.entries()
    ]
