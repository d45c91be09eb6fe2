"""Messages from the functions that record decisions to ``ApplyDecisionsFunction``.

The Slack function (internet-facing, no Batch mutations, no audit-table write) records
a decision with its conditional write and hands the rest over through a
:class:`~quotagov.governance.ports.handoff.DecisionHandoff`. Two kinds of message,
each a JSON object with ``kind``:

* ``{"kind": "escalation", "escalationId": "esc-...", "round": 1700000000.0}``: an
  escalation was decided (APPROVED or DENIED; ``round`` optional, the decision round:
  the computation time of the preview the approver saw); the apply function rechecks
  the impact of an approval, calls ``UpdateServiceJob`` and updates the Slack message.
* ``{"kind": "disposition", "jobId": "<submission id>"}``: the owner chose a
  disposition; the apply function submits the successor (if any) and updates the
  question message.
Those two travel on the ``ApplyQueue`` (:data:`APPLY_KINDS`). One more travels on
the ``OwnerNoticeQueue`` (:data:`NOTICE_KINDS`), whose only senders are the submit
worker and the reconciler, which fail submissions but hold no Slack secret:

* ``{"kind": "submission-failed", "submissionId": "<submission id>"}``: the apply
  function reads the record and, if it is ``FAILED``, tells its owner in Slack
  (:func:`quotagov.governance.submission.failure.tell_owner_of_failure`).

The apply function accepts from each queue only that queue's kinds, so neither sender
group can hand the apply function the other's work. Decisions for the audit log do not
travel here: every function sends them to the one writer on the audit queue
(:mod:`quotagov.governance.audit.queued_decisions`).

Every message is safe to process twice: the apply steps are conditional writes on the
record's status and an owner is told of a failure once (the notification log's claim).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ESCALATION = "escalation"
DISPOSITION = "disposition"
SUBMISSION_FAILED = "submission-failed"
#: The kinds of the ``ApplyQueue`` (the Slack and escalation API functions send them).
APPLY_KINDS = (ESCALATION, DISPOSITION)
#: The kinds of the ``OwnerNoticeQueue`` (the submit worker and the reconciler).
NOTICE_KINDS = (SUBMISSION_FAILED,)


class HandoffMessageError(ValueError):
    """A hand-off message that is not one of the shapes its queue carries (names the
    field)."""


def escalation_message(escalation_id: str, round_: float | None = None) -> dict[str, Any]:
    """The hand-off of a decided escalation.

    ``round_`` names the decision round: the computation time (epoch seconds) of the
    impact preview the approver saw. A request reopened by a changed preview carries a
    newer preview, so its next approval is a new round and the apply function's
    idempotency key (kind, id, round) does not take it for a repeat.
    """
    message: dict[str, Any] = {"kind": ESCALATION, "escalationId": escalation_id}
    if round_ is not None:
        message["round"] = round_
    return message


def disposition_message(job_id: str) -> dict[str, Any]:
    """The hand-off of a disposition the owner chose."""
    return {"kind": DISPOSITION, "jobId": job_id}


def submission_failed_message(submission_id: str) -> dict[str, Any]:
    """The notice of a submission the sender failed (its owner is told from the record)."""
    return {"kind": SUBMISSION_FAILED, "submissionId": submission_id}


@dataclass(frozen=True)
class HandoffMessage:
    """A parsed hand-off message: ``kind`` and the one id it carries (``round``: the
    decision round of an escalation, ``repr`` of epoch seconds, or empty)."""

    kind: str
    record_id: str = ""
    round: str = ""


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise HandoffMessageError(f"{where}{key}: must be a non-empty string")
    return value


def parse_message(data: Any, kinds: tuple[str, ...] = APPLY_KINDS) -> HandoffMessage:
    """Check a decoded message body.

    Args:
        data: the decoded JSON body.
        kinds: the kinds the queue it came from carries (:data:`APPLY_KINDS` or
            :data:`NOTICE_KINDS`).

    Raises:
        HandoffMessageError: naming the field and the fault (not an object, a ``kind``
            not in ``kinds``, a missing id).
    """
    if not isinstance(data, Mapping):
        raise HandoffMessageError("(body): must be a JSON object")
    kind = data.get("kind")
    if kind not in kinds:
        raise HandoffMessageError(f"kind: must be one of {', '.join(kinds)}, got {kind!r}")
    if kind == SUBMISSION_FAILED:
        return HandoffMessage(kind, _text(data, "submissionId", ""))
    if kind == ESCALATION:
        given = data.get("round")
        if given is not None and (isinstance(given, bool) or not isinstance(given, (int, float))):
            raise HandoffMessageError("round: must be a number (epoch seconds)")
        round_ = "" if given is None else repr(float(given))
        return HandoffMessage(kind, _text(data, "escalationId", ""), round=round_)
    return HandoffMessage(kind, _text(data, "jobId", ""))
