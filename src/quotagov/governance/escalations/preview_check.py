"""The impact recheck before an approval is applied: is the preview the approver saw
still true? Shared by the first apply and the scheduled retry."""

from __future__ import annotations

from quotagov.governance.escalations.context import EscalationDeps
from quotagov.governance.escalations.messages import update_message
from quotagov.governance.escalations.recheck import material_change
from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR


def recheck_before_apply(deps: EscalationDeps, approved: Escalation) -> Escalation | None:
    """Recompute the preview of an APPROVED escalation before applying it; the
    escalation reopened (back to PENDING) when the approver must look again, None to go
    on (the fresh preview is then stored on the request).

    Runs before every apply, the first one (:func:`~.decision.settle`, the apply
    function) and the scheduled retry (:func:`~.housekeeping.retry_failed`) alike;
    never in the click's answer, so a slow
    Batch cannot delay the acknowledgement (Slack's 3-second limit). A material change
    (:mod:`.recheck`) moves APPROVED back to PENDING with the new preview and the old
    one (``previous_preview``), audited ``EscalationPreviewChanged``; the message shows
    both and keeps its buttons, and the next Approve click is checked the same way
    against the new numbers. A request whose job is gone from the records, or whose
    priority Batch already has, is left to :func:`~.applying.apply_approved`.

    Raises:
        BatchError: Batch could not be read; the hand-off is retried (nothing stored).
    """
    job = deps.jobs.find(approved.job_id)
    if job is None:
        return None
    description = deps.batch.describe_service_job(jobId=approved.batch_job_id)
    if int(description.get("schedulingPriority") or 0) >= approved.requested_priority:
        return None  # raised meanwhile: applying supersedes it, there is nothing to preview
    fresh = deps.previewer.preview(job, description, approved.requested_priority)
    change = material_change(approved.preview, fresh)
    if change is None:
        deps.repository.transition_if_status(
            approved.escalation_id, EscalationStatus.APPROVED, {"preview": fresh}
        )
        return None
    reopened = deps.repository.transition_if_status(
        approved.escalation_id,
        EscalationStatus.APPROVED,
        {
            "status": EscalationStatus.PENDING,
            "preview": fresh,
            "previous_preview": approved.preview,
            "decided_by": None,
            "decided_at": None,
            "claimed_at": None,
            "decision_proof": None,
        },
    )
    if reopened is None:  # moved meanwhile (a retry run took it over): leave it be
        return deps.repository.get(approved.escalation_id) or approved
    deps.record(
        "EscalationPreviewChanged",
        approved.decided_by or QUOTAGOV_ACTOR,
        approved.escalation_id,
        f"{approved.escalation_id}:preview:{fresh.computed_at}",
        # not ``jobId``: this decision makes no Batch call, so the audit must never
        # take it for the decision behind one (``docs/architecture.md``, audit items)
        serviceJobId=approved.batch_job_id,
        change=change,
        shown=approved.preview.to_dict() if approved.preview else None,
        recomputed=fresh.to_dict(),
    )
    update_message(deps, reopened)
    return reopened
