"""Use case: append the controller's own decisions to the audit chain of their job queue.

This is the :class:`~quotagov.governance.ports.AuditSink` other use cases call
(``deps.audit.record_decision(ControllerDecision(...))``). A decision is
stored once per ``decision_id``, as a record::

    {recordType: "Decision", kind: "DECISION", time, recordedAt, decisionId,
     actor: {principalArn, type: "quotagov", quotagov: true, decisionId, decisionAction},
     action, resource: {type: "decision-subject", name}, jobQueue, details,
     before: null, after: null, difference: [], findings: []}

and indexed by its subject (``resource`` and ``details["jobId"]``) so that the
controller's own Batch call for it, arriving later through CloudTrail, names it. A
``details`` holding ``jobId`` and ``schedulingPriority`` also becomes the job's last
known priority (used to name the decision behind the controller's own calls; the
"before" of a change made around quotagov comes from the recorded CloudTrail calls,
:meth:`~.trail.AuditTrail.record_call`).

A decision id is an idempotency key built from known values (``<escalation>:approved``),
so a record can be planted under an id before the real decision arrives. A decision
whose id is stored with other content (:func:`content_digest`: action, actor, subject,
details, findings) is not dropped as a repeat: it is appended as a
``DecisionIdConflict`` record that keeps the received content and carries the finding
``DECISION_ID_CONFLICT`` (high) with both digests, once per received content, and
counted in :attr:`DecisionLog.conflicts` (metric ``DecisionIdConflicts``, alarmed).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quotagov.batch_semantics import queue_name
from quotagov.clock import Clock
from quotagov.governance.audit import findings as rules
from quotagov.governance.audit.chain import Appended, ChainWriter
from quotagov.governance.audit.cloudtrail_calls import iso_utc
from quotagov.governance.audit.known import CONFIG, DECISION
from quotagov.governance.canonical import canonical_json
from quotagov.governance.ports import ControllerDecision, VersionStore
from quotagov.governance.provenance import refusal_findings

#: The record fields that are a decision's content (not when or how it was received).
CONTENT_FIELDS = ("action", "actor", "resource", "details", "findings")

#: The action of the record that keeps a conflicting decision's content.
CONFLICT_ACTION = "DecisionIdConflict"


def content_digest(record: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of a decision record's :data:`CONTENT_FIELDS`
    (numbers read back from DynamoDB as ``Decimal`` are compared as the numbers they are).

    Raises:
        CanonicalFormError: a field is not JSON data.
    """
    content = {name: record.get(name) for name in CONTENT_FIELDS}
    return hashlib.sha256(canonical_json(content).encode()).hexdigest()


@dataclass(frozen=True)
class QueuedEntry:
    """One decision as the writer received it from the audit queue.

    Attributes:
        decision: the decision.
        decided_at: when it was taken (epoch seconds; None: now), the record's ``time``.
        queued_by: the sender the message's verified proof names (the sending
            function, :mod:`quotagov.governance.provenance`), stored as ``queuedBy``
            (None: not stored)."""

    decision: ControllerDecision
    decided_at: float | None = None
    queued_by: str | None = None


class DecisionLog:
    """An :class:`~quotagov.governance.ports.AuditSink` writing to the audit chains.

    Args:
        writer: the chain writer over the audit table.
        versions: the version store (decision index, last known priorities).
        clock: for ``time``/``recordedAt``.
    """

    def __init__(self, writer: ChainWriter, versions: VersionStore, clock: Clock) -> None:
        self._writer = writer
        self._versions = versions
        self._clock = clock
        #: How many ``DecisionIdConflict`` records this log appended (ever, this process).
        self.conflicts = 0

    def record_decision(
        self,
        decision: ControllerDecision,
        *,
        decided_at: float | None = None,
        queued_by: str | None = None,
    ) -> None:
        """Append ``decision`` to the chain of ``decision.job_queue``, once per decision id
        (a run of one record, sealed on its own).

        Args:
            decision: the decision.
            decided_at: when it was taken (epoch seconds; default now), the record's
                ``time``; ``recordedAt`` is always now.
            queued_by: the sender the message's verified proof names, stored as
                ``queuedBy``.

        Raises:
            ValueError: ``job_queue`` or ``decision_id`` is empty.
            CanonicalFormError: ``details`` is not JSON data.
            ChainContentionError: the chain head kept moving (retry).
            ChainIntegrityError: the chain's head is not sealed by the audit key.
        """
        [failure] = self.record_decisions([QueuedEntry(decision, decided_at, queued_by)])
        if failure is not None:
            raise failure

    def record_decisions(self, entries: Sequence[QueuedEntry]) -> list[Exception | None]:
        """Append a batch of decisions: per chain, one run of records in ``entries``'
        order, sealed once (:meth:`ChainWriter.append_run`), each stored once per
        decision id.

        Returns:
            per entry, None when its record is stored (now or before), else the error
            that kept it out: ``ValueError``/``CanonicalFormError`` for that entry alone
            (it is malformed; the others are appended), or, for every entry of a chain
            whose run failed, the ``ChainContentionError``/``ChainIntegrityError``/
            store error that failed it (retry them). Errors are returned, not raised,
            so that one chain's failure does not fail another chain's entries.
        """
        outcome: list[Exception | None] = [None] * len(entries)
        by_chain: dict[str, list[tuple[int, str, dict[str, Any], float]]] = {}
        for index, entry in enumerate(entries):
            try:
                chain, body, taken = self._body(entry)
                canonical_json(body)
            except ValueError as exc:  # CanonicalFormError is a ValueError
                outcome[index] = exc
                continue
            key = f"decision:{entry.decision.decision_id}"
            by_chain.setdefault(chain, []).append((index, key, body, taken))
        for chain, items in by_chain.items():
            try:
                appended = self._writer.append_run(chain, [(k, body) for _, k, body, _ in items])
                for (index, _key, body, taken), stored in zip(items, appended, strict=True):
                    if not stored.created and not self._same_content(chain, body, stored):
                        continue  # the conflict is recorded; the planted record is not indexed
                    self._index(entries[index].decision, chain, stored.record, taken)
            except Exception as exc:  # reported per entry; the caller retries them
                for item in items:
                    outcome[item[0]] = exc
        return outcome

    def _same_content(self, chain: str, body: Mapping[str, Any], stored: Appended) -> bool:
        """True when ``body`` repeats the stored record's content (a redelivery); else
        append the ``DecisionIdConflict`` record (once per received content) and return
        False.

        Raises:
            as :meth:`ChainWriter.append`.
        """
        received, kept = content_digest(body), content_digest(stored.record)
        if received == kept:
            return True
        decision_id = str(body["decisionId"])
        seq = int(stored.record["seq"])
        conflict = {
            **{k: v for k, v in body.items() if k not in CONTENT_FIELDS},
            "action": CONFLICT_ACTION,
            "actor": {**body["actor"], "decisionAction": CONFLICT_ACTION},
            "resource": body["resource"],
            "details": {
                "decisionId": decision_id,
                "storedSeq": seq,
                "storedDigest": kept,
                "receivedDigest": received,
                "received": {name: body.get(name) for name in CONTENT_FIELDS},
            },
            "findings": rules.decision_id_conflict(decision_id, kept, received, seq),
        }
        appended = self._writer.append(chain, f"conflict:{decision_id}:{received}", conflict)
        if appended.created:
            self.conflicts += 1
        return False

    def _body(self, entry: QueuedEntry) -> tuple[str, dict[str, Any], float]:
        """The chain, the record body of ``entry`` and when it was decided (epoch s).

        Raises:
            ValueError: ``job_queue`` or ``decision_id`` is empty.
        """
        decision = entry.decision
        chain = queue_name(decision.job_queue)
        if not chain:
            raise ValueError("decision.job_queue: empty, the audit chain is per job queue")
        if not decision.decision_id:
            raise ValueError("decision.decision_id: empty, it is the idempotency key")
        now = self._clock.now()
        taken = now if entry.decided_at is None else entry.decided_at
        body: dict[str, Any] = {
            "recordType": "Decision",
            "kind": "DECISION",
            "time": iso_utc(taken),
            "recordedAt": iso_utc(now),
            "decisionId": decision.decision_id,
            "actor": {
                "principalArn": decision.actor,
                "type": "quotagov",
                "sessionIssuerArn": None,
                "quotagov": True,
                "decisionId": decision.decision_id,
                "decisionAction": decision.action,
            },
            "action": decision.action,
            "resource": {"type": "decision-subject", "name": decision.resource},
            "jobQueue": chain,
            "details": dict(decision.details),
            "before": None,
            "after": None,
            "difference": [],
            "findings": refusal_findings(decision),
        }
        if entry.queued_by is not None:
            body["queuedBy"] = entry.queued_by
        return chain, body, taken

    def _index(
        self, decision: ControllerDecision, chain: str, record: Mapping[str, Any], taken: float
    ) -> None:
        """Index the stored decision by its subjects at ``taken`` (epoch seconds); a
        priority becomes the job's last known one."""
        at_ms = int(taken * 1000)
        details = dict(decision.details)
        index = {
            "decisionId": decision.decision_id,
            "action": decision.action,
            "chain": chain,
            "seq": record["seq"],
        }
        job_id = details.get("jobId")
        subjects = {decision.resource} | ({job_id} if isinstance(job_id, str) and job_id else set())
        for subject in sorted(subjects):
            self._versions.put(DECISION, subject, at_ms, decision.decision_id, index)
        priority = details.get("schedulingPriority")
        if isinstance(job_id, str) and job_id and isinstance(priority, int):
            self._versions.put(
                CONFIG,
                f"service-job/{job_id}",
                at_ms,
                decision.decision_id,
                {"schedulingPriority": priority},
            )
