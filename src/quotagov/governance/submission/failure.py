"""Telling submitters that their submission failed: the owner DM of a ``FAILED`` record.

Two functions fail submissions after the API accepted them: the submit worker (Batch
refused ``SubmitServiceJob``, the policy changed since, the stored request is no longer
usable) and the reconciler (still ``QUEUED`` after every re-queue). Neither holds the
Slack secret (least privilege, ``docs/design.md``, "Trust model"), so each hands a notice
(:func:`quotagov.governance.apply_messages.submission_failed_message`) to the
``OwnerNoticeQueue``; ``ApplyDecisionsFunction``, which holds the secret, reads it and
tells the owner (:func:`tell_owner_of_failure`). Without a notice queue (a process that
has Slack itself, tests) :func:`announce_failure` calls the notifier directly.

Once per failure: the DM's event is ``refused`` (one per submission) in the owner
notification log, so a notice sent twice, or delivered twice, tells the owner once
(:class:`~quotagov.governance.notifications.OwnerNotifier`). The consumer trusts the
record, never the message: a notice about a record that is not ``FAILED`` (or that
failed only because the submission queue refused it, which the API answered with a
503) tells nobody.
"""

from __future__ import annotations

from enum import StrEnum

from quotagov.governance.apply_messages import submission_failed_message
from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.notifications import OwnerEvent, OwnerNotifier, refused
from quotagov.governance.ports import JobsRepository
from quotagov.governance.ports.handoff import DecisionHandoff
from quotagov.governance.submission.deps import is_enqueue_failure, is_stale_failure


class NoticeOutcome(StrEnum):
    """What the notice of a failed submission came to (the apply function's answer)."""

    POSTED = "posted"  #: a new DM to the owner
    NOT_POSTED = "not-posted"  #: logged without a DM: opted out, no Slack id, Slack failed
    ALREADY_TOLD = "already-told"  #: the owner was told of this failure before
    NOT_FAILED = "not-failed"  #: the record is not FAILED (or only enqueue-failed)
    UNKNOWN = "unknown"  #: no record has this id


def failure_event(record: JobRecord) -> OwnerEvent:
    """The owner DM of a ``FAILED`` submission: its stored reasons, at its last write
    (``updatedAt``, epoch seconds), said to come from the reconciler when it gave up
    on a submission stuck ``QUEUED``, else from Batch or the policy."""
    by = (
        "quotagov, which could not submit it to Batch"
        if is_stale_failure(record)
        else "Batch or the policy"
    )
    return refused(record, at=float(record.updatedAt), reasons=record.reasons, by=by)


def announce_failure(
    record: JobRecord,
    *,
    notices: DecisionHandoff | None,
    notifier: OwnerNotifier | None,
) -> None:
    """Make sure the owner of the ``FAILED`` ``record`` is told: a notice on the owner
    notice queue when one is configured, else the DM at once (nobody when neither).

    Raises:
        quotagov.governance.ports.handoff.HandoffError: the notice queue refused the
            notice (the caller's step is retried, and sends it again).
    """
    if notices is not None:
        notices.send(submission_failed_message(record.pk))
    elif notifier is not None:
        notifier.notify(record, failure_event(record))


def tell_owner_of_failure(
    submission_id: str, *, jobs: JobsRepository, notifier: OwnerNotifier
) -> NoticeOutcome:
    """Tell the owner of submission ``submission_id`` that it failed, if it did, once.

    Args:
        submission_id: the id the notice names (only the stored record is believed).
        jobs: the job records.
        notifier: the owner notifier (Slack, the notification log, the policy).

    Returns:
        The :class:`NoticeOutcome`.

    Raises:
        Whatever ``jobs.get`` raises when the record cannot be read (the notice is
        then retried). Slack and the notification log never raise here (best effort,
        :class:`~quotagov.governance.notifications.OwnerNotifier`).
    """
    record = jobs.get(submission_id)
    if record is None:
        return NoticeOutcome.UNKNOWN
    if record.state is not SubmissionState.FAILED or is_enqueue_failure(record):
        return NoticeOutcome.NOT_FAILED
    entry = notifier.notify(record, failure_event(record))
    if entry is None:
        return NoticeOutcome.ALREADY_TOLD
    return NoticeOutcome.POSTED if entry.delivery == "posted" else NoticeOutcome.NOT_POSTED
