"""What every step of the escalation use case shares: its collaborators (all ports),
the one way it writes an audit record, and the constants of the life cycle."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from quotagov.clock import Clock
from quotagov.governance.notifications import OwnerNotifier
from quotagov.governance.ports import AuditSink, BatchPort, ChatNotifier, ControllerDecision
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.ports.escalations import (
    EscalationRepository,
    GovernedJobs,
    ImpactPreviewer,
)
from quotagov.governance.ports.handoff import DecisionHandoff
from quotagov.governance.ports.messages import MessageMac
from quotagov.policy.models import Policy

#: How many apply attempts (``DescribeServiceJob``, then ``UpdateServiceJob`` unless
#: Batch already has the priority) an approved escalation gets before it stays
#: APPLY_FAILED for a person to look at.
MAX_APPLY_ATTEMPTS = 5

#: An APPROVED request claimed longer ago than this (seconds, measured from
#: ``claimed_at``) whose ``UpdateServiceJob`` never finished belongs to an invocation
#: that died (Lambda's longest timeout is 900 s); the retry run takes it over.
STALE_APPROVAL_SECONDS = 900

#: How many failed ``chat.update`` calls (each after slack_sdk's own retries of HTTP
#: 429, which wait ``Retry-After``) a card gets before its update is parked: the
#: scheduled run (every 5 minutes) retries it, so a card is retried for about an hour
#: before the ``CardUpdatesParked`` alarm asks a person to look.
MAX_CARD_UPDATE_ATTEMPTS = 12


class MissingHandoffError(RuntimeError):
    """A decision or a direct level reached a function wired without a hand-off (the
    apply and expiry functions only settle decisions): a wiring fault, raised before
    anything is stored."""


def handoff_of(deps: EscalationDeps) -> DecisionHandoff:
    """``deps.handoff``, the one way a recorded decision reaches the apply function.

    Raises:
        MissingHandoffError: ``deps.handoff`` is None (nothing was stored).
    """
    if deps.handoff is None:
        raise MissingHandoffError(
            "this function records no escalation decisions: it has no hand-off to the "
            "apply function (ApplyQueue)"
        )
    return deps.handoff


def new_escalation_id() -> str:
    """A fresh escalation id: ``esc-`` and 32 hex digits."""
    return f"esc-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class EscalationDeps:
    """The collaborators of the escalation use case. Nothing here talks to AWS itself.

    Attributes:
        policy: the governance policy.
        jobs: quotagov's job records, as governed jobs.
        batch: the Batch port (``DescribeServiceJob``, ``UpdateServiceJob``).
        repository: escalation storage (``EscalationsTable``).
        chat: Slack messages.
        audit: the audit log.
        clock: time source (epoch seconds).
        previewer: computes the impact preview.
        default_channel: ``APPROVAL_CHANNEL``, for shares without ``approvalChannel``.
        new_id: makes escalation ids.
        notifier: tells the job's owner when its priority changed (None: nobody).
        handoff: the hand-off to the apply function, the only one that calls
            ``UpdateServiceJob``: a decided or direct escalation is recorded, then
            handed off (:func:`handoff_of`). Required by the functions that record
            decisions (the Slack and escalation API functions); None in those that
            only settle or expire them (the apply and expiry functions), where a
            decision or a direct level raises :class:`MissingHandoffError`.
        proofs: the message key proving decisions (:mod:`.proof`); None (tests
            without KMS): decisions are stored and applied without proof.
        sender: the running function's name, named by the proofs it makes.
    """

    policy: Policy
    jobs: GovernedJobs
    batch: BatchPort
    repository: EscalationRepository
    chat: ChatNotifier
    audit: AuditSink
    clock: Clock
    previewer: ImpactPreviewer
    default_channel: str = ""
    new_id: Callable[[], str] = field(default=new_escalation_id)
    notifier: OwnerNotifier | None = None
    handoff: DecisionHandoff | None = None
    proofs: MessageMac | None = None
    sender: Callable[[], str] = field(default=lambda: QUOTAGOV_ACTOR)

    def record(
        self, action: str, actor: str, resource: str, decision_id: str, **details: Any
    ) -> None:
        """Append a controller decision to the audit chain of the governed job queue.

        Args:
            action: e.g. ``EscalationApproved``.
            actor: IAM principal ARN, Slack user id, or ``QUOTAGOV_ACTOR``
                (``governance.ports.audit``).
            resource: the escalation id, or the job id for a refused request.
            decision_id: idempotency key of the record (the same id is recorded once).
            details: the record's ``details`` (JSON-ready values).
        """
        self.audit.record_decision(
            ControllerDecision(
                action=action,
                actor=actor,
                job_queue=self.policy.jobQueue,
                resource=resource,
                decision_id=decision_id,
                details=details,
            )
        )
