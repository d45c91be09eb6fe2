"""Use case: the owner's decision on a job whose disposition is ``pending-owner``.

Called by ``POST /jobs/{jobId}/disposition`` and by the Slack interactions handler
(``block_actions`` with ``action_id`` ``disposition_<choice>``, value = the job id).
"""

from __future__ import annotations

import logging

from quotagov.governance.apply_messages import disposition_message
from quotagov.governance.dispositions import notify, steps
from quotagov.governance.dispositions.deps import DispositionDeps
from quotagov.governance.dispositions.errors import (
    DispositionConflictError,
    DispositionForbiddenError,
    DispositionNotFoundError,
    InvalidChoiceError,
)
from quotagov.governance.dispositions.outcome import DispositionOutcome
from quotagov.governance.dispositions.record import (
    CHOICES,
    Choice,
    DispositionRecord,
    DispositionStatus,
)
from quotagov.governance.dispositions.rules import authorize, decided
from quotagov.governance.model.job import JobRecord
from quotagov.governance.ports.handoff import HandoffError
from quotagov.governance.slack.dispositions import ACTION_ID_PREFIX

logger = logging.getLogger(__name__)

#: Conditional writes lost to concurrent changes before giving up with a conflict.
MAX_DECISION_ATTEMPTS = 3


def decide_disposition(
    job_id: str,
    choice: str,
    actor: str,
    *,
    deps: DispositionDeps,
    source: str = "api",
) -> DispositionOutcome:
    """Apply the owner's decision on a job whose disposition is ``pending-owner``.

    Applies once: the first decision moves the record out of ``pending-owner`` with a
    conditional write; repeating the same decision returns it again with
    ``changed=False``; a different decision afterwards is a conflict.

    Args:
        job_id: the submission id (``JobsTable.pk``).
        choice: ``resubmit``, ``reclassify`` or ``abandon`` (a ``disposition_`` prefix is
            accepted and stripped).
        actor: who decides: a principal ARN (API) or a Slack user id (Slack). Allowed:
            the submitter, members of the job's team (principal or Slack id), and the
            team's and the share's approvers
            (:func:`quotagov.governance.access.may_decide_disposition`).
        deps: dependencies (a function's ``dispositions``, :mod:`quotagov.composition`).
        source: ``api`` or ``slack`` (recorded in the audit log).

    Raises:
        InvalidChoiceError: choice unknown or not offered.
        DispositionNotFoundError: unknown job, or one ``actor`` may not decide for
            (the same answer, so that ids cannot be probed across teams).
        DispositionConflictError: nothing pending, or decided differently already.

    A Batch failure while submitting the successor does not raise: the decision is kept
    (``applying``), the outcome carries ``error``, and the same call finishes it. With
    ``deps.handoff`` (the Slack function) no Batch call is made at all: the decision,
    and the same decision repeated while it is ``applying``, is sent to the apply
    function, which submits the successor.
    """
    name = choice.removeprefix(ACTION_ID_PREFIX)
    if name not in CHOICES:
        raise InvalidChoiceError(f"choice: {name!r} is not one of {', '.join(CHOICES)}")
    job = deps.store.get(job_id)
    not_found = DispositionNotFoundError(f"jobId: no job {job_id!r}")
    if job is None:
        raise not_found
    try:
        authorize(job, actor, deps.policy)
    except DispositionForbiddenError:
        # Authorization before existence: the same answer as for an unknown job.
        raise not_found from None
    for _ in range(MAX_DECISION_ATTEMPTS):
        current = steps.disposition_of(job)
        if current is None:
            raise DispositionConflictError(f"job {job_id!r} has no disposition to decide", None)
        if current.status is not DispositionStatus.PENDING_OWNER:
            return _decided_before(job, current, Choice(name), deps)
        if name not in current.offered:
            offered = ", ".join(current.offered)
            raise InvalidChoiceError(
                f"choice: {name!r} is not offered for job {job_id!r} (offered: {offered})"
            )
        now = deps.clock.now()
        moved = decided(
            job, current, Choice(name), by=actor, policy=deps.policy, now=now, source=source
        )
        if deps.handoff is not None and moved.lease is not None:
            moved = moved.with_changes(lease=None)  # the apply function takes the lease
        if steps.write(deps, job_id, current, moved):
            return _record_decision(job, moved, deps)
        job = deps.store.get(job_id) or job
    raise DispositionConflictError(f"job {job_id!r}: disposition keeps changing", None)


def _decided_before(
    job: JobRecord, current: DispositionRecord, choice: Choice, deps: DispositionDeps
) -> DispositionOutcome:
    """The same decision again: report (or finish) it; another one: a conflict."""
    if current.choice is not choice:
        decided_as = f" ({current.choice})" if current.choice else ""
        raise DispositionConflictError(
            f"job {job.pk!r}: disposition is {current.status}{decided_as}", current.to_item()
        )
    steps.audit(job, current, deps)  # idempotent re-assertion, see state_changes.on_job_state
    if current.status is DispositionStatus.APPLYING:
        if deps.handoff is not None:
            # The recording side (the Slack function) never calls Batch: the apply
            # function takes the lease and submits the successor.
            return _hand_off(job, current, deps, changed=False)
        return steps.resume(job, current, deps, report=True)
    return DispositionOutcome.of(job.pk, current, changed=False)


def _hand_off(
    job: JobRecord, disposition: DispositionRecord, deps: DispositionDeps, *, changed: bool
) -> DispositionOutcome:
    """Send the decided disposition to the apply function (``deps.handoff``); a failed
    send is reported in the outcome's ``error`` (the decision stays recorded)."""
    assert deps.handoff is not None
    try:
        deps.handoff.send(disposition_message(job.pk))
    except HandoffError as error:
        # Recorded, not lost: an ``applying`` disposition without a lease is taken
        # over by the owner's next click or POST /jobs/{jobId}/disposition.
        logger.warning("disposition of %s recorded, hand-off failed: %s", job.pk, error)
        return DispositionOutcome.of(job.pk, disposition, changed=changed, error=str(error))
    return DispositionOutcome.of(job.pk, disposition, changed=changed)


def _record_decision(
    job: JobRecord, moved: DispositionRecord, deps: DispositionDeps
) -> DispositionOutcome:
    """After the decision was written: audit it, apply it, update the Slack question
    (or, with a hand-off, send it to the apply function, which does the last two)."""
    steps.audit(job, moved, deps)
    if deps.handoff is not None:
        return _hand_off(job, moved, deps, changed=True)
    if moved.status is DispositionStatus.ABANDONED:
        outcome = DispositionOutcome.of(job.pk, moved, changed=True)
    else:
        outcome = steps.apply_or_report(job, moved, deps, changed=True)
    notify.update_question(moved, outcome, deps)
    return outcome


def settle_disposition(job_id: str, deps: DispositionDeps) -> DispositionOutcome | None:
    """Finish an owner's decision the Slack function recorded (the apply function).

    An ``applying`` disposition gets its successor submitted (taking the lease, a
    conditional write, so a redelivered message submits nothing twice); every decided
    disposition's question message is then replaced by the decision.

    Args:
        job_id: the submission id of the job whose disposition was decided.
        deps: dependencies with Batch and Slack (``ApplyDecisions.dispositions``).

    Returns:
        The outcome, or None when the job or its disposition does not exist (a stale
        or forged message: nothing is done).

    Raises:
        DispositionInProgressError: another invocation holds the lease (retry later).
        BatchError: ``SubmitServiceJob`` failed; the disposition stays ``applying``
            without a new successor and the message is retried (SQS).
    """
    job = deps.store.get(job_id)
    current = steps.disposition_of(job)
    if job is None or current is None:
        return None
    if current.status is DispositionStatus.APPLYING:
        outcome = steps.resume(job, current, deps, report=False)
    else:
        outcome = DispositionOutcome.of(job_id, current, changed=False)
    if current.status is not DispositionStatus.PENDING_OWNER:
        latest = steps.disposition_of(deps.store.get(job_id)) or current
        notify.update_question(latest, outcome, deps)
    return outcome
