"""Handing decision records to the one audit writer over a queue.

One writer: only the audit function's role may write the audit table.
Every other function hands its decisions to it through the audit queue (SQS with a
DLQ, at-least-once); the writer appends each to the chain once per ``decisionId``
(the dedup marker), so a redelivered or twice-sent message stores one record.

Message body (JSON)::

    {"version": 1, "decidedAt": <epoch seconds>, "decision": {action, actor,
     jobQueue, resource, decisionId, details}}

A decision whose message cannot be queued raises
:class:`~quotagov.governance.ports.AuditQueueError` from ``record_decision``: the use
case stops before applying it (or its event is retried), so no applied decision is
missing from the log.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from quotagov.clock import Clock
from quotagov.governance.canonical import canonical_json
from quotagov.governance.ports.audit import AuditQueue, ControllerDecision

#: Format version of the audit queue messages.
MESSAGE_VERSION = 1


class QueuedDecisionBody(BaseModel):
    """The ``decision`` of an audit queue message (the :class:`ControllerDecision` fields)."""

    model_config = ConfigDict(extra="forbid")

    action: str = Field(min_length=1)
    actor: str = Field(min_length=1)
    jobQueue: str = Field(min_length=1)
    resource: str
    decisionId: str = Field(min_length=1)
    details: dict[str, Any] = Field(default_factory=dict)


class QueuedDecision(BaseModel):
    """One audit queue message (see the module doc)."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(ge=1, le=MESSAGE_VERSION)
    decidedAt: float = Field(ge=0)
    decision: QueuedDecisionBody

    def controller_decision(self) -> ControllerDecision:
        """The decision as the use cases built it."""
        d = self.decision
        return ControllerDecision(
            action=d.action,
            actor=d.actor,
            job_queue=d.jobQueue,
            resource=d.resource,
            decision_id=d.decisionId,
            details=d.details,
        )


def message_body(decision: ControllerDecision, decided_at: float) -> str:
    """The queue message of ``decision`` taken at ``decided_at`` (epoch seconds).

    Raises:
        CanonicalFormError: ``details`` is not JSON data (refused before queueing).
    """
    return canonical_json(
        {
            "version": MESSAGE_VERSION,
            "decidedAt": decided_at,
            "decision": {
                "action": decision.action,
                "actor": decision.actor,
                "jobQueue": decision.job_queue,
                "resource": decision.resource,
                "decisionId": decision.decision_id,
                "details": dict(decision.details),
            },
        }
    )


def parse_message(body: str) -> QueuedDecision:
    """Parse an audit queue message.

    Raises:
        pydantic.ValidationError: naming each field at fault (not JSON included).
    """
    return QueuedDecision.model_validate(json.loads(body) if body.strip() else {})


class QueuedAuditSink:
    """The :class:`~quotagov.governance.ports.AuditSink` of every function but the writer.

    Args:
        queue: the audit queue.
        clock: stamps ``decidedAt`` (the record's ``time``).
    """

    def __init__(self, queue: AuditQueue, clock: Clock) -> None:
        self._queue = queue
        self._clock = clock

    def record_decision(self, decision: ControllerDecision) -> None:
        """Queue ``decision`` for the writer.

        Raises:
            ValueError: ``job_queue`` or ``decision_id`` is empty.
            CanonicalFormError: ``details`` is not JSON data.
            AuditQueueError: the queue did not take it: do not apply the decision.
        """
        if not decision.job_queue:
            raise ValueError("decision.job_queue: empty, the audit chain is per job queue")
        if not decision.decision_id:
            raise ValueError("decision.decision_id: empty, it is the idempotency key")
        self._queue.send(message_body(decision, self._clock.now()))
