"""Is the impact preview the approvers saw still true when Approve is clicked?

The preview of an escalation is computed when it is requested; the click may come
much later (the walkthrough's approval came 120 s after a preview of 180 s of unsaved
work, and 300 s were lost). So an Approve click recomputes it
(:func:`~.decision.decide`), and :func:`material_change` says whether the approver
must confirm the new numbers before anything is applied (the preview at decision
time).

A change is material when any of these holds:

* the outcome differs (e.g. ``STARTS`` became ``PREEMPTS``);
* the set of jobs approval would preempt differs (a victim more, fewer or another);
* the unsaved work of the victims grew or shrank by more than
  :data:`UNSAVED_TOLERANCE_SECONDS` and by more than :data:`UNSAVED_TOLERANCE_RATIO`
  of what was shown (unsaved work grows by itself while nobody clicks; a few seconds
  are not news, a doubling is).
"""

from __future__ import annotations

from quotagov.governance.model.impact_preview import ImpactPreview
from quotagov.governance.slack.blocks import format_seconds

#: Unsaved work may drift by this many seconds without asking again.
UNSAVED_TOLERANCE_SECONDS = 60.0
#: ...and by this fraction of the unsaved work shown.
UNSAVED_TOLERANCE_RATIO = 0.25


def material_change(shown: ImpactPreview | None, fresh: ImpactPreview) -> str | None:
    """Why ``fresh`` differs materially from the ``shown`` preview, in words, or None.

    Args:
        shown: the preview the approvers saw (None: none was shown, so any preview
            that preempts somebody is news).
        fresh: the preview recomputed at the click.
    """
    if shown is None:
        return "the impact was not previewed before" if fresh.would_preempt else None
    if shown.outcome is not fresh.outcome:
        return f"the outcome is now {fresh.outcome.value} (was {shown.outcome.value})"
    before = {job.job_id: job for job in shown.preempted}
    after = {job.job_id: job for job in fresh.preempted}
    if set(before) != set(after):
        was = ", ".join(sorted(j.job_name for j in shown.preempted)) or "nobody"
        now = ", ".join(sorted(j.job_name for j in fresh.preempted)) or "nobody"
        return f"approval would now preempt {now} (was {was})"
    old, new = shown.unsaved_seconds, fresh.unsaved_seconds
    drift = abs(new - old)
    if drift > UNSAVED_TOLERANCE_SECONDS and drift > UNSAVED_TOLERANCE_RATIO * old:
        return (
            f"the unsaved work approval would lose is now {format_seconds(new)} "
            f"(was {format_seconds(old)})"
        )
    return None
