"""Messages from the functions that record decisions to ``ApplyDecisionsFunction``.

The Slack function (internet-facing, no Batch mutations, no audit-table write) records
a decision with its conditional write and hands the rest over through a
:class:`~quotagov.governance.ports.handoff.DecisionHandoff`. Three kinds of message,
each a JSON object with ``kind``:

* ``{"kind": "escalation", "escalationId": "esc-..."}``: an escalation was decided
  (APPROVED or DENIED); the apply function calls ``UpdateServiceJob`` for an approval
  and updates the Slack message.
* ``{"kind": "disposition", "jobId": "<submission id>"}``: the owner chose a
  disposition; the apply function submits the successor (if any) and updates the
  question message.
* ``{"kind": "audit", "decision": {...}}``: a :class:`ControllerDecision` of the
  sending function, appended to the audit chain by the apply function
  (:class:`HandoffAuditSink`), so that the sender needs no audit-table write.

Every message is safe to process twice: the apply steps are conditional writes on the
record's status and the audit append is idempotent on ``decision_id``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quotagov.governance.ports.audit import ControllerDecision
from quotagov.governance.ports.handoff import DecisionHandoff

ESCALATION = "escalation"
DISPOSITION = "disposition"
AUDIT = "audit"
KINDS = (ESCALATION, DISPOSITION, AUDIT)


class HandoffMessageError(ValueError):
    """A hand-off message that is not one of the three shapes (names the field)."""


def escalation_message(escalation_id: str) -> dict[str, Any]:
    """The hand-off of a decided escalation."""
    return {"kind": ESCALATION, "escalationId": escalation_id}


def disposition_message(job_id: str) -> dict[str, Any]:
    """The hand-off of a disposition the owner chose."""
    return {"kind": DISPOSITION, "jobId": job_id}


def audit_message(decision: ControllerDecision) -> dict[str, Any]:
    """The hand-off of an audit record (``details`` must be JSON-ready)."""
    return {
        "kind": AUDIT,
        "decision": {
            "action": decision.action,
            "actor": decision.actor,
            "jobQueue": decision.job_queue,
            "resource": decision.resource,
            "decisionId": decision.decision_id,
            "details": dict(decision.details),
        },
    }


@dataclass(frozen=True)
class HandoffMessage:
    """A parsed hand-off message: ``kind`` and the one id or decision it carries."""

    kind: str
    record_id: str = ""
    decision: ControllerDecision | None = None


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise HandoffMessageError(f"{where}{key}: must be a non-empty string")
    return value


def parse_message(data: Any) -> HandoffMessage:
    """Check a decoded message body.

    Raises:
        HandoffMessageError: naming the field and the fault (not an object, unknown
            ``kind``, missing id, a ``decision`` without its fields).
    """
    if not isinstance(data, Mapping):
        raise HandoffMessageError("(body): must be a JSON object")
    kind = data.get("kind")
    if kind not in KINDS:
        raise HandoffMessageError(f"kind: must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == ESCALATION:
        return HandoffMessage(kind, _text(data, "escalationId", ""))
    if kind == DISPOSITION:
        return HandoffMessage(kind, _text(data, "jobId", ""))
    raw = data.get("decision")
    if not isinstance(raw, Mapping):
        raise HandoffMessageError("decision: must be an object")
    details = raw.get("details", {})
    if not isinstance(details, Mapping):
        raise HandoffMessageError("decision.details: must be an object")
    decision = ControllerDecision(
        action=_text(raw, "action", "decision."),
        actor=_text(raw, "actor", "decision."),
        job_queue=_text(raw, "jobQueue", "decision."),
        resource=_text(raw, "resource", "decision."),
        decision_id=_text(raw, "decisionId", "decision."),
        details=dict(details),
    )
    return HandoffMessage(kind, decision.decision_id, decision)


class HandoffAuditSink:
    """An :class:`~quotagov.governance.ports.AuditSink` that hands each decision to the
    apply function (which appends it to the chain), for functions whose role has no
    audit-table write.

    Args:
        handoff: the hand-off queue.
    """

    def __init__(self, handoff: DecisionHandoff) -> None:
        self._handoff = handoff

    def record_decision(self, decision: ControllerDecision) -> None:
        """Send ``decision``; idempotent downstream on ``decision.decision_id``.

        Raises:
            HandoffError: the queue refused it.
        """
        self._handoff.send(audit_message(decision))
