"""One open escalation per job: taking the job's lock with the PENDING record, freeing it.

A job has at most one open escalation (PENDING, APPROVED or APPLY_FAILED). The lock is
taken in the same transaction as the PENDING record and the budget unit
(:meth:`~quotagov.governance.ports.EscalationRepository.create_pending`), and freed
when the escalation closes (DENIED, EXPIRED, APPLIED, SUPERSEDED, or APPLY_FAILED with
no attempts left). A lock left behind by an invocation that died after closing its
escalation is freed by the next request for the job.
"""

from __future__ import annotations

import logging

from quotagov.governance.escalations.context import MAX_APPLY_ATTEMPTS, EscalationDeps
from quotagov.governance.escalations.errors import EscalationPolicyRefusedError
from quotagov.governance.model.escalation import (
    FINAL_STATUSES,
    Escalation,
    EscalationStatus,
)
from quotagov.governance.ports.escalations import OpenEscalationError

logger = logging.getLogger(__name__)


def holder_closed(escalation: Escalation) -> bool:
    """Final, or APPLY_FAILED with no attempts left (no run will retry it)."""
    if escalation.status in FINAL_STATUSES:
        return True
    return (
        escalation.status is EscalationStatus.APPLY_FAILED
        and escalation.apply_attempts >= MAX_APPLY_ATTEMPTS
    )


def open_pending(
    deps: EscalationDeps, escalation: Escalation, budget_key: str, budget: int
) -> None:
    """Store the PENDING ``escalation`` with one unit of ``budget_key`` and the job's lock.

    A lock whose holder is closed (or gone) was left by an invocation that died
    between closing it and freeing the lock: it is freed (conditionally on that
    holder) and the write tried once more.

    Raises:
        EscalationPolicyRefusedError: the job has an open escalation (named when the
            lock names one that is still open).
        BudgetSpentError: from the repository (``budget`` units already taken).
    """
    for _ in range(2):
        try:
            deps.repository.create_pending(escalation, budget_key=budget_key, budget_limit=budget)
            return
        except OpenEscalationError as held:
            holder = deps.repository.get(held.escalation_id) if held.escalation_id else None
            if holder is not None and not holder_closed(holder):
                raise EscalationPolicyRefusedError(
                    f"jobId: job {escalation.job_name!r} already has an open escalation "
                    f"{holder.escalation_id} (level {holder.requested_level!r}, "
                    f"{holder.status.value}); wait until it is closed"
                ) from None
            deps.repository.release_job(escalation.job_id, held.escalation_id)
    raise EscalationPolicyRefusedError(
        f"jobId: job {escalation.job_name!r} already has an open escalation; "
        "wait until it is closed"
    )


def free_job(deps: EscalationDeps, closed: Escalation) -> None:
    """Free the job's lock held by ``closed`` (now DENIED, EXPIRED, APPLIED or
    SUPERSEDED). A failure is logged only: the next request frees a lock whose holder
    is closed."""
    try:
        deps.repository.release_job(closed.job_id, closed.escalation_id)
    except Exception:  # the lock is cleared by the next request for the job
        logger.exception("could not free the open-escalation lock of job %s", closed.job_id)
