"""What a disposition use case returns: the disposition's state after the call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quotagov.governance.dispositions.record import (
    Choice,
    DispositionRecord,
    DispositionStatus,
    Trigger,
)


@dataclass(frozen=True)
class DispositionOutcome:
    """The state of a job's disposition after a call.

    Attributes:
        job_id: the submission id.
        status: see :class:`~quotagov.governance.dispositions.record.DispositionStatus`.
        trigger: ``retries-exhausted`` or ``thrash-guard``.
        policy_action: what the class's policy named (``resubmit``/``reclassify``/``ask-owner``).
        choice: the decision taken (``resubmit``/``reclassify``/``abandon``), None while pending.
        decided_by: who took it (``quotagov`` or the owner's id).
        successor_id: the successor's submission id, once chosen.
        target_share: the successor's quota share.
        choices: what the owner may still choose (while ``pending-owner``).
        reason: why, in words.
        changed: False when this call found the disposition already in that state.
        error: why the successor could not be submitted yet (status stays ``applying``;
            the same decision again, or the next event of the job, finishes it).
    """

    job_id: str
    status: DispositionStatus
    trigger: Trigger
    policy_action: str
    choice: Choice | None = None
    decided_by: str | None = None
    successor_id: str | None = None
    target_share: str | None = None
    choices: tuple[Choice, ...] = ()
    reason: str = ""
    changed: bool = True
    error: str | None = None

    @classmethod
    def of(
        cls,
        job_id: str,
        disposition: DispositionRecord,
        *,
        changed: bool,
        error: str | None = None,
    ) -> DispositionOutcome:
        """The outcome of job ``job_id`` whose disposition is now ``disposition``."""
        return cls(
            job_id=job_id,
            status=disposition.status,
            trigger=disposition.trigger,
            policy_action=disposition.policy_action,
            choice=disposition.choice,
            decided_by=disposition.decided_by,
            successor_id=disposition.successor_id,
            target_share=disposition.target_share,
            choices=disposition.choices or (),
            reason=disposition.reason,
            changed=changed,
            error=error,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON shape for the API (camelCase, statuses and choices as strings)."""
        return {
            "jobId": self.job_id,
            "status": self.status.value,
            "trigger": self.trigger.value,
            "policyAction": self.policy_action,
            "choice": self.choice.value if self.choice is not None else None,
            "decidedBy": self.decided_by,
            "successorId": self.successor_id,
            "targetShare": self.target_share,
            "choices": [choice.value for choice in self.choices],
            "reason": self.reason,
            "changed": self.changed,
            "error": self.error,
        }
