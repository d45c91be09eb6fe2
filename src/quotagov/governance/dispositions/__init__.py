"""Dispositions: what happens to a job that ran out of preemption retries or thrashes.

``docs/design.md``, "Job-state handling and retry exhaustion": when a job fails because
its preemption retries ran out (or is preempted too often in a window), quotagov applies
the policy's disposition: resubmit, reclassify into another share, or ask the owner in
Slack. Every disposition has an
owner (the submitter, else the team) and ends in a recorded decision; each step is
written to the job's record with a conditional write on the previous status (so it
applies once however many events or clicks arrive) and to the audit log.

Use cases:

- :func:`on_job_state`: open or advance a job's disposition after an event
  (job-state handler).
- :func:`decide_disposition`: the owner's decision (``POST /jobs/{jobId}/disposition``,
  Slack ``disposition_<choice>`` buttons).
- :func:`settle_disposition`: the apply function's half of a decision the Slack
  function recorded and handed off.

Modules, one concern each:

- :mod:`.record`: the :class:`DispositionRecord` (stored ``disposition`` map), its
  :class:`DispositionStatus` and the table of allowed moves.
- :mod:`.rules`: the pure rules (retries exhausted, thrash guard, choices, next share,
  owner, authorization).
- :mod:`.successor`: the successor record and its ``SubmitServiceJob``.
- :mod:`.steps`: the one writer of dispositions, and applying them (lease, successor).
- :mod:`.state_changes` (after a job-state change), :mod:`.decide` (an owner's
  choice): the two use cases.
- :mod:`.audit`: the audit decision of each step; :mod:`.notify`: the owner's Slack
  messages (built by :mod:`quotagov.governance.slack.dispositions`).
- :mod:`.errors`: every error raised; :mod:`.outcome`: what the use cases return;
  :mod:`.deps`: what they talk to.

Example::

    outcome = decide_disposition("sub-1", "resubmit", "U0FRANK", deps=current(JobsApi).dispositions)
    outcome.status  # DispositionStatus.APPLIED
"""

from __future__ import annotations

from quotagov.governance.dispositions.decide import decide_disposition, settle_disposition
from quotagov.governance.dispositions.deps import DispositionDeps
from quotagov.governance.dispositions.errors import (
    DispositionConflictError,
    DispositionError,
    DispositionForbiddenError,
    DispositionInProgressError,
    DispositionNotFoundError,
    IllegalMoveError,
    InvalidChoiceError,
)
from quotagov.governance.dispositions.outcome import DispositionOutcome
from quotagov.governance.dispositions.record import (
    APPLY_LEASE_SECONDS,
    CHOICES,
    FINAL_STATUSES,
    MOVES,
    Choice,
    DispositionRecord,
    DispositionStatus,
    Trigger,
)
from quotagov.governance.dispositions.rules import (
    available_choices,
    next_share,
    thrash_detected,
)
from quotagov.governance.dispositions.state_changes import on_job_state
from quotagov.governance.dispositions.successor import submit_with_batch
from quotagov.governance.slack.dispositions import ACTION_ID_PREFIX

__all__ = [
    "ACTION_ID_PREFIX",
    "APPLY_LEASE_SECONDS",
    "CHOICES",
    "FINAL_STATUSES",
    "MOVES",
    "Choice",
    "DispositionConflictError",
    "DispositionDeps",
    "DispositionError",
    "DispositionForbiddenError",
    "DispositionInProgressError",
    "DispositionNotFoundError",
    "DispositionOutcome",
    "DispositionRecord",
    "DispositionStatus",
    "IllegalMoveError",
    "InvalidChoiceError",
    "Trigger",
    "available_choices",
    "decide_disposition",
    "next_share",
    "on_job_state",
    "settle_disposition",
    "submit_with_batch",
    "thrash_detected",
]
