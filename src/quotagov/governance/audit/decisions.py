"""Use case: append the controller's own decisions to the audit chain of their job queue.

This is the :class:`~quotagov.governance.ports.AuditSink` other use cases call
(``services().audit.record_decision(ControllerDecision(...))``). A decision is
stored once per ``decision_id``, as a record::

    {recordType: "Decision", kind: "DECISION", time, recordedAt, decisionId,
     actor: {principalArn, type: "quotagov", quotagov: true, decisionId, decisionAction},
     action, resource: {type: "decision-subject", name}, jobQueue, details,
     before: null, after: null, difference: [], findings: []}

and indexed by its subject (``resource`` and ``details["jobId"]``) so that the
controller's own Batch call for it, arriving later through CloudTrail, names it. A
``details`` holding ``jobId`` and ``schedulingPriority`` also becomes the job's last
known priority (the "before" of a later ``UpdateServiceJob``).
"""

from __future__ import annotations

from typing import Any

from quotagov.batch_semantics import queue_name
from quotagov.clock import Clock
from quotagov.governance.audit.chain import ChainWriter
from quotagov.governance.audit.events import iso_utc
from quotagov.governance.audit.known import CONFIG, DECISION
from quotagov.governance.ports import ControllerDecision, VersionStore


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

    def record_decision(
        self,
        decision: ControllerDecision,
        *,
        decided_at: float | None = None,
        queued_by: str | None = None,
    ) -> None:
        """Append ``decision`` to the chain of ``decision.job_queue``, once per decision id.

        Args:
            decision: the decision.
            decided_at: when it was taken (epoch seconds; default now), the record's
                ``time``; ``recordedAt`` is always now.
            queued_by: the audit queue's ``SenderId`` of the message that carried it
                (the sending role's id), stored as ``queuedBy``.

        Raises:
            ValueError: ``job_queue`` or ``decision_id`` is empty.
            CanonicalFormError: ``details`` is not JSON data.
            ChainContentionError: the chain head kept moving (retry).
        """
        chain = queue_name(decision.job_queue)
        if not chain:
            raise ValueError("decision.job_queue: empty, the audit chain is per job queue")
        if not decision.decision_id:
            raise ValueError("decision.decision_id: empty, it is the idempotency key")
        now = self._clock.now()
        taken = now if decided_at is None else decided_at
        details = dict(decision.details)
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
            "details": details,
            "before": None,
            "after": None,
            "difference": [],
            "findings": [],
        }
        if queued_by is not None:
            body["queuedBy"] = queued_by
        appended = self._writer.append(chain, f"decision:{decision.decision_id}", body)
        at_ms = int(taken * 1000)
        index = {
            "decisionId": decision.decision_id,
            "action": decision.action,
            "chain": chain,
            "seq": appended.record["seq"],
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
