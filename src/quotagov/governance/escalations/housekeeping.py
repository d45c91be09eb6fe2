"""The scheduled runs: expiry of undecided requests, and retries of failed applications.

- :func:`expire_due` moves PENDING requests past ``expiresAt`` to EXPIRED (conditional
  write, so a click racing the schedule is decided exactly once) and shows it in
  their Slack messages.
- :func:`retry_failed` applies APPLY_FAILED requests again, up to
  :data:`~.context.MAX_APPLY_ATTEMPTS` attempts in all, then gives up on them (the
  request stays APPLY_FAILED and frees its job). An APPROVED request whose claim
  lease (:func:`claim_lease`) has lapsed belonged to an invocation that died before
  recording the outcome; it is released to APPLY_FAILED first, then retried.
"""

from __future__ import annotations

import logging

from quotagov.governance.escalations.applying import apply_approved, refuse_apply
from quotagov.governance.escalations.applying import apply_failed as fail_apply
from quotagov.governance.escalations.authority import approval_refusal
from quotagov.governance.escalations.context import (
    MAX_APPLY_ATTEMPTS,
    STALE_APPROVAL_SECONDS,
    EscalationDeps,
)
from quotagov.governance.escalations.job_lock import free_job
from quotagov.governance.escalations.messages import update_message
from quotagov.governance.escalations.preview_check import recheck_before_apply
from quotagov.governance.escalations.proof import unproven
from quotagov.governance.lease import Lease
from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.ports import BatchError
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR

logger = logging.getLogger(__name__)


def expire(deps: EscalationDeps, escalation: Escalation, now: float) -> Escalation | None:
    """PENDING -> EXPIRED at ``now`` (epoch seconds), decided by quotagov; frees the job,
    audits ``EscalationExpired`` and updates the Slack message.

    Returns:
        The expired escalation, or None when it was no longer PENDING.
    """
    expired = deps.repository.transition_if_status(
        escalation.escalation_id,
        EscalationStatus.PENDING,
        {"status": EscalationStatus.EXPIRED, "decided_by": QUOTAGOV_ACTOR, "decided_at": now},
    )
    if expired is None:
        return None
    free_job(deps, expired)
    deps.record(
        "EscalationExpired",
        QUOTAGOV_ACTOR,
        escalation.escalation_id,
        f"{escalation.escalation_id}:expired",
        jobId=escalation.batch_job_id,
        requester=escalation.requester,
        expiresAt=escalation.expires_at,
    )
    update_message(deps, expired)
    return expired


def expire_due(deps: EscalationDeps) -> list[Escalation]:
    """Move every PENDING request past its expiry to EXPIRED; returns those moved."""
    now = deps.clock.now()
    moved = []
    for escalation in deps.repository.due_for_expiry(now):
        expired = expire(deps, escalation, now)
        if expired is not None:
            moved.append(expired)
    return moved


def claim_lease(escalation: Escalation) -> Lease | None:
    """The lease of the run that last claimed an APPROVED ``escalation``:
    :data:`~.context.STALE_APPROVAL_SECONDS` from ``claimed_at`` (``decided_at`` for
    records from before ``claimed_at`` existed); None when neither is set."""
    claimed = escalation.claimed_at if escalation.claimed_at is not None else escalation.decided_at
    if claimed is None:
        return None
    return Lease.since(claimed, STALE_APPROVAL_SECONDS)


def retry_failed(deps: EscalationDeps) -> list[Escalation]:
    """Call ``UpdateServiceJob`` again for APPLY_FAILED requests with attempts left.

    A request whose decision proof does not verify (:mod:`.proof`: a hand-written or
    edited item) is left as it is and audited, never claimed. Each retry first claims
    the request (APPLY_FAILED -> APPROVED, conditional, with a
    fresh ``claimed_at``), so concurrent runs never call Batch twice for the same
    request. APPROVED requests whose claim lease has lapsed are released first
    (:func:`release_stale_claims`).

    Then, like the first apply, the approval's authority is checked
    (:func:`~.authority.approval_refusal`: one the policy does not give is DENIED,
    unapplied and never reopened) and the impact is rechecked
    (:func:`~.preview_check.recheck_before_apply`): a material change reopens the
    request for the approvers instead of applying it; Batch unreadable for the
    recheck is one more failed attempt.

    Returns:
        The requests this run retried, after their ``UpdateServiceJob`` outcome.
    """
    release_stale_claims(deps)
    done = []
    for failed in deps.repository.with_status(EscalationStatus.APPLY_FAILED):
        if unproven(deps, failed):  # a table item alone is no decision: left as is
            continue
        if failed.apply_attempts >= MAX_APPLY_ATTEMPTS:
            give_up(deps, failed)
            continue
        claimed = deps.repository.transition_if_status(
            failed.escalation_id,
            EscalationStatus.APPLY_FAILED,
            {"status": EscalationStatus.APPROVED, "claimed_at": deps.clock.now()},
        )
        if claimed is None:
            continue
        # The authority first, as at the first apply (decision.settle): an approval
        # the policy does not give is DENIED and audited, never reopened by a recheck.
        why = approval_refusal(deps.policy, deps.jobs.find(claimed.job_id), claimed)
        if why is not None:
            refused = refuse_apply(deps, claimed, why)
            update_message(deps, refused)
            done.append(refused)
            continue
        if not claimed.direct:  # the impact is rechecked as at the first apply
            try:
                reopened = recheck_before_apply(deps, claimed)
            except BatchError as error:
                done.append(fail_apply(deps, claimed, error, claimed.apply_attempts + 1))
                continue
            if reopened is not None:
                done.append(reopened)
                continue
            claimed = deps.repository.get(claimed.escalation_id) or claimed
        result = apply_approved(deps, claimed)
        update_message(deps, result)
        done.append(result)
    return done


def release_stale_claims(deps: EscalationDeps) -> None:
    """APPROVED -> APPLY_FAILED for every request whose claim lease has lapsed.

    The write repeats the test on the stored value (``claimedAt``, else ``decidedAt``,
    must be before ``now - STALE_APPROVAL_SECONDS``, strictly), so a run never takes
    over a request that an overlapping run has just claimed.
    """
    now = deps.clock.now()
    cutoff = now - STALE_APPROVAL_SECONDS
    for stuck in deps.repository.with_status(EscalationStatus.APPROVED):
        if unproven(deps, stuck):  # a table item alone is no decision: left as is
            continue
        lease = claim_lease(stuck)
        if lease is not None and not lease.held(now):
            deps.repository.release_stale_claim(
                stuck.escalation_id,
                cutoff,
                "interrupted before UpdateServiceJob was recorded",
            )


def give_up(deps: EscalationDeps, exhausted: Escalation) -> None:
    """An APPLY_FAILED request with no attempts left stays APPLY_FAILED for the
    record, frees its job for a new request, and is audited once
    (``EscalationAbandoned``). Safe to call on every run: only the run that frees the
    lock records it."""
    try:
        freed = deps.repository.release_job(exhausted.job_id, exhausted.escalation_id)
    except Exception:  # retried by the next run
        logger.exception("could not free the lock of job %s", exhausted.job_id)
        return
    if freed:
        deps.record(
            "EscalationAbandoned",
            QUOTAGOV_ACTOR,
            exhausted.escalation_id,
            f"{exhausted.escalation_id}:abandoned",
            jobId=exhausted.batch_job_id,
            attempts=exhausted.apply_attempts,
            error=exhausted.error,
        )
