"""Dispositions: what happens to a job that ran out of preemption retries or thrashes.

Rules (issue 5, ``design.md`` §3; Batch facts from ``aws-and-slack-facts.md`` §1.5):

* **Retry exhaustion** is recognised from the status and ``preemptionSummary`` only:
  ``status == FAILED`` and ``preemptedAttemptCount > preemptionRetriesBeforeTermination``
  (the value sent at submission). The ``statusReason`` text is not documented by AWS
  and is never read.
* The **disposition** is the one the job's workload class names in the policy
  (``workloadClasses.<class>.onRetriesExhausted``):

  - ``resubmit``: a successor with the same ``serviceRequestPayload`` (kept in the
    submission record) in the same quota share;
  - ``reclassify``: a successor in the next share of the class's ``shares`` list;
  - ``ask-owner``: a Slack message to the owner with buttons ``disposition_resubmit``,
    ``disposition_reclassify``, ``disposition_abandon`` (value = submission id); the
    decision stays ``pending-owner`` in the record until :func:`decide_disposition`
    is called (Slack interaction or ``POST /jobs/{jobId}/disposition``).

  One original job gets at most ``onRetriesExhausted.maxResubmits`` successors, counted
  along the predecessor chain. When the policy's action is impossible (cap reached, no
  next share) the owner is asked with the choices that remain; when only ``abandon``
  remains the disposition ends ``abandoned`` and the owner is told.
* **Thrash guard**: a job preempted ``thrashGuard.preemptions`` times within
  ``thrashGuard.windowSeconds`` seconds, still running or waiting, is reclassified
  early when its class has a thrash guard and a next share (and the cap allows a
  successor). The service job is stopped with ``TerminateServiceJob`` first and the
  successor is only submitted once Batch reports the old job ``FAILED``: both attempts
  would otherwise run at once on the same ``CheckpointConfig.S3Uri`` (two writers of one
  checkpoint prefix) and hold capacity in two shares. If the job ``SUCCEEDED`` before
  the termination took effect, the disposition ends ``not-needed``.

Every disposition has an owner (the submitter, else the team) and ends in a recorded
decision; each step is written to the record with a conditional write on the previous
disposition status (so it applies once however many events or clicks arrive) and to
the audit log through :class:`~quotagov.governance.ports.AuditSink`.

Record fields used (:class:`quotagov.governance.records.JobRecord`): ``pk``, ``team``,
``workloadClass``, ``principal``, ``ownerSlackUserId``, ``quotaShareName``,
``preemptionRetriesBeforeTermination``, ``serviceRequestPayload``, ``batchJobId``,
``resubmitCount``, ``originalId``; written: ``disposition`` (map), ``successorIds`` and,
on the successor, ``predecessorId``/``originalId``/``resubmitCount``.

Disposition statuses: ``pending-owner`` -> ``applying`` -> ``applied``;
``pending-owner`` -> ``abandoned``; ``awaiting-termination`` -> ``applying`` |
``not-needed``; a fresh disposition may also start directly in ``applying`` or
``abandoned``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quotagov.batch_semantics import failed_on_retries
from quotagov.clock import Clock
from quotagov.governance.access import may_decide_disposition
from quotagov.governance.errors import (
    ConflictError,
    ForbiddenError,
    GovernanceError,
    InvalidRequestError,
    NotFoundError,
)
from quotagov.governance.job_state import JobTracking
from quotagov.governance.ports import (
    AuditSink,
    BatchClientError,
    BatchError,
    BatchPort,
    ChatError,
    ChatNotifier,
    ControllerDecision,
    PostedMessage,
)
from quotagov.governance.ports.jobs import JobStateStore, SuccessorSubmitter
from quotagov.governance.records import client_token_for
from quotagov.governance.slack import dispositions as slack_blocks
from quotagov.governance.slack.dispositions import ACTION_ID_PREFIX
from quotagov.policy.models import Policy, ThrashGuard, WorkloadClass

logger = logging.getLogger(__name__)

CHOICES = ("resubmit", "reclassify", "abandon")

PENDING_OWNER = "pending-owner"
AWAITING_TERMINATION = "awaiting-termination"
APPLYING = "applying"
APPLIED = "applied"
ABANDONED = "abandoned"
NOT_NEEDED = "not-needed"
FINAL_STATUSES = frozenset({APPLIED, ABANDONED, NOT_NEEDED})

#: How long a caller that moved a disposition to ``applying`` has to submit the successor
#: before another caller (a redelivered event, a second click) may take over (seconds).
APPLY_LEASE_SECONDS = 60.0

RETRIES_EXHAUSTED = "retries-exhausted"
THRASH_GUARD = "thrash-guard"
SYSTEM_ACTOR = "quotagov"


class DispositionError(GovernanceError):
    """Base of the errors :func:`decide_disposition` raises."""


class DispositionNotFoundError(DispositionError, NotFoundError):
    """No job record with that submission id."""


class DispositionConflictError(DispositionError, ConflictError):
    """No decision is pending, or another decision was already taken.

    Attributes:
        current: the disposition as recorded (dict), or None when there is none.
    """

    def __init__(self, message: str, current: Mapping[str, Any] | None) -> None:
        super().__init__(message)
        self.current = dict(current) if current else None


class DispositionInProgressError(Exception):
    """Another call holds the lease on an ``applying`` disposition (retry the event later).

    Not a :class:`DispositionError`: the job-state handler lets it fail the event so that
    EventBridge/SQS redelivers it, which finishes the work if the other call died.
    """


class DispositionForbiddenError(DispositionError, ForbiddenError):
    """The actor may not decide for this job."""


class InvalidChoiceError(DispositionError, InvalidRequestError):
    """The choice is not one of the choices offered for this job.

    The message reads ``choice: <fault>``; ``faults`` is ``[("choice", "<fault>")]``.
    """

    def __init__(self, message: str) -> None:
        path, _, fault = message.partition(": ")
        super().__init__(message, [(path, fault)])


@dataclass
class DispositionDeps:
    """What the disposition use cases talk to.

    Attributes:
        store: the job records.
        batch: ``TerminateServiceJob`` (thrash guard) and, by default, ``SubmitServiceJob``.
        policy: the governance policy.
        audit: the audit log (``NullAuditSink`` without an audit table).
        clock: epoch seconds.
        chat: Slack; None = no message is posted (the decision stays on the API).
        job_queue: the governed job queue (ARN), used for successors and audit.
        platform_channel: where to ask when the owner has no Slack user id.
        submit: how successors reach Batch; default :func:`submit_with_batch`.
    """

    store: JobStateStore
    batch: BatchPort
    policy: Policy
    audit: AuditSink
    clock: Clock
    chat: ChatNotifier | None = None
    job_queue: str = ""
    platform_channel: str = ""
    submit: SuccessorSubmitter | None = None

    def submitter(self) -> SuccessorSubmitter:
        """The configured :class:`SuccessorSubmitter` or the default Batch one."""
        if self.submit is not None:
            return self.submit
        batch, queue = self.batch, self.job_queue

        def _submit(successor: Mapping[str, Any]) -> dict[str, Any]:
            return submit_with_batch(batch, successor, job_queue=queue)

        return _submit


@dataclass(frozen=True)
class DispositionOutcome:
    """The state of a job's disposition after a call.

    Attributes:
        job_id: the submission id.
        status: one of the disposition statuses (module docstring).
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
    status: str
    trigger: str
    policy_action: str
    choice: str | None = None
    decided_by: str | None = None
    successor_id: str | None = None
    target_share: str | None = None
    choices: tuple[str, ...] = ()
    reason: str = ""
    changed: bool = True
    error: str | None = None

    @classmethod
    def from_record(
        cls,
        job_id: str,
        disposition: Mapping[str, Any],
        *,
        changed: bool,
        error: str | None = None,
    ) -> DispositionOutcome:
        """Build from a record's ``disposition`` map."""
        return cls(
            job_id=job_id,
            status=str(disposition["status"]),
            trigger=str(disposition.get("trigger", "")),
            policy_action=str(disposition.get("policyAction", "")),
            choice=disposition.get("choice"),
            decided_by=disposition.get("decidedBy"),
            successor_id=disposition.get("successorId"),
            target_share=disposition.get("targetShare"),
            choices=tuple(disposition.get("choices") or ()),
            reason=str(disposition.get("reason", "")),
            changed=changed,
            error=error,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON shape for the API (camelCase)."""
        return {
            "jobId": self.job_id,
            "status": self.status,
            "trigger": self.trigger,
            "policyAction": self.policy_action,
            "choice": self.choice,
            "decidedBy": self.decided_by,
            "successorId": self.successor_id,
            "targetShare": self.target_share,
            "choices": list(self.choices),
            "reason": self.reason,
            "changed": self.changed,
            "error": self.error,
        }


# --- pure rules -----------------------------------------------------------------------


def thrash_detected(stop_times_ms: Sequence[int], guard: ThrashGuard) -> bool:
    """True when ``guard.preemptions`` preemptions stopped within ``guard.windowSeconds``.

    ``stop_times_ms`` are the preempted attempts' ``stoppedAt`` (epoch ms), any order.
    """
    times = sorted(stop_times_ms)
    k = guard.preemptions
    window_ms = guard.windowSeconds * 1000
    return any(times[i + k - 1] - times[i] <= window_ms for i in range(len(times) - k + 1))


def next_share(workload_class: WorkloadClass, current: str) -> str | None:
    """The share after ``current`` in the class's ``shares`` list, or None.

    A job in a share the class does not list (policy changed since) moves to the first
    share of the list that is not ``current``.
    """
    shares = workload_class.shares
    if current in shares:
        i = shares.index(current)
        return shares[i + 1] if i + 1 < len(shares) else None
    return next((s for s in shares if s != current), None)


def successor_id_for(record: Mapping[str, Any]) -> str:
    """Deterministic id of a record's successor: ``<original id>-r<resubmitCount + 1>``.

    The chain is linear (a record gets at most one successor), so the pair (original,
    generation) names one record; a retried disposition finds the same successor.
    """
    return f"{original_id(record)}-r{generation(record) + 1}"


def original_id(record: Mapping[str, Any]) -> str:
    """The submission id of the first job of the chain."""
    return str(record.get("originalId") or record["pk"])


def generation(record: Mapping[str, Any]) -> int:
    """``resubmitCount``: 0 for an original submission, n for its n-th successor."""
    return int(record.get("resubmitCount") or 0)


def available_choices(
    record: Mapping[str, Any], workload_class: WorkloadClass, current_share: str
) -> tuple[str, ...]:
    """Choices still possible for a job: resubmit/reclassify within the cap, abandon always."""
    choices: list[str] = []
    if generation(record) < workload_class.onRetriesExhausted.maxResubmits:
        choices.append("resubmit")
        if next_share(workload_class, current_share) is not None:
            choices.append("reclassify")
    choices.append("abandon")
    return tuple(choices)


def submit_with_batch(
    batch: BatchPort, successor: Mapping[str, Any], *, job_queue: str = ""
) -> dict[str, Any]:
    """Send ``successor`` with ``SubmitServiceJob`` (reference §2.3); return the response.

    The request is the submission path's own
    (:func:`quotagov.governance.submission.service_job_request`): the record's
    ``serviceRequestPayload`` unchanged, its ``schedulingPriority`` and
    ``preemptionRetriesBeforeTermination``, the successor's ``quotaShareName``, its
    deterministic ``clientToken`` (a retried call is one job) and the
    ``quotagov:submissionId`` tag. The policy is not re-applied: routing would put a
    reclassified job back in its class's first share.

    Raises:
        BatchError: from the port.
    """
    from quotagov.governance.records import JobRecord
    from quotagov.governance.submission import service_job_request

    record = JobRecord.from_item(successor)
    return batch.submit_service_job(
        **service_job_request(record, job_queue or str(successor.get("jobQueue") or ""))
    )


# --- use cases --------------------------------------------------------------------------


def on_job_state(
    record: Mapping[str, Any], tracking: JobTracking, deps: DispositionDeps
) -> DispositionOutcome | None:
    """Open or advance the job's disposition after its tracked state changed.

    Called by the job-state use case for every event (also duplicates: each step is
    conditional, so a re-delivered event resumes work a crash left half done).

    Returns:
        The disposition after this call, or None when the job needs none.

    Raises:
        BatchError: a transient Batch failure; the event should be retried.
        DispositionInProgressError: another invocation is submitting the successor;
            retry the event later (it finishes the work if that invocation died).
    """
    disposition = record.get("disposition")
    status = disposition.get("status") if disposition else None
    if disposition is not None:
        # re-assert the current step in the audit log (idempotent on its decision id), so
        # a step whose audit write failed after the record moved is written on redelivery
        _audit(record, disposition, deps)
    if disposition is not None and status == APPLYING:
        return _resume(record, disposition, deps, report=False)
    if (
        disposition is not None
        and status == AWAITING_TERMINATION
        and not tracking.is_terminal
        and not disposition.get("terminateRequestedAt")
    ):
        # the TerminateServiceJob of the first try failed transiently: repeat it
        _terminate(record, disposition, deps)
        return DispositionOutcome.from_record(str(record["pk"]), disposition, changed=False)
    if disposition is not None and status == AWAITING_TERMINATION and tracking.is_terminal:
        if tracking.status == "FAILED":
            moved = {
                **disposition,
                "status": APPLYING,
                "terminatedAt": deps.clock.now(),
                "leaseUntil": deps.clock.now() + APPLY_LEASE_SECONDS,
            }
            return _advance(record, disposition, moved, deps)
        done = {
            **disposition,
            "status": NOT_NEEDED,
            "reason": disposition.get("reason", "")
            + "; the job SUCCEEDED before the termination took effect",
            "closedAt": deps.clock.now(),
        }
        return _advance(record, disposition, done, deps)
    if disposition is not None:
        return None
    workload_class = deps.policy.workloadClasses.get(str(record.get("workloadClass")))
    if workload_class is None:
        return None
    retries = record.get("preemptionRetriesBeforeTermination")
    retries = None if retries is None else int(retries)
    if failed_on_retries(tracking.status, tracking.preemption_count, retries):
        return _open_exhausted(record, tracking, workload_class, deps)
    guard = workload_class.thrashGuard
    if guard is not None and not tracking.is_terminal:
        stops = [a.stopped_at_ms for a in tracking.preempted() if a.stopped_at_ms is not None]
        if thrash_detected(stops, guard):
            return _open_thrash(record, tracking, workload_class, guard, deps)
    return None


def decide_disposition(
    job_id: str,
    choice: str,
    actor: str,
    *,
    deps: DispositionDeps,
    source: str = "api",
) -> DispositionOutcome:
    """Apply the owner's decision on a job whose disposition is ``pending-owner``.

    Called by ``POST /jobs/{jobId}/disposition`` and by the Slack interactions handler
    (``block_actions`` with ``action_id`` ``disposition_<choice>``, value = ``job_id``).
    Applies once: the first decision moves the record out of ``pending-owner`` with a
    conditional write; repeating the same decision returns it again with
    ``changed=False``; a different decision afterwards is a conflict.

    Args:
        job_id: the submission id (``JobsTable.pk``).
        choice: ``resubmit``, ``reclassify`` or ``abandon`` (a ``disposition_`` prefix is
            accepted and stripped).
        actor: who decides: a principal ARN (API) or a Slack user id (Slack). Allowed:
            the submitter, members of the job's team (principal or Slack id), and the
            team's and the share's approvers.
        deps: dependencies (the composition root's ``services().dispositions``).
        source: ``api`` or ``slack`` (recorded in the audit log).

    Raises:
        DispositionNotFoundError: unknown job.
        DispositionForbiddenError: actor not allowed.
        InvalidChoiceError: choice not offered.
        DispositionConflictError: nothing pending, or decided differently already.

    A Batch failure while submitting the successor does not raise: the decision is kept
    (``applying``), the outcome carries ``error``, and the same call finishes it.
    """
    choice = choice.removeprefix(ACTION_ID_PREFIX)
    if choice not in CHOICES:
        raise InvalidChoiceError(f"choice: {choice!r} is not one of {', '.join(CHOICES)}")
    record = deps.store.get(job_id)
    if record is None:
        raise DispositionNotFoundError(f"jobId: no job {job_id!r}")
    _authorize(record, actor, deps.policy)
    for _ in range(3):
        disposition = record.get("disposition")
        if disposition is None:
            raise DispositionConflictError(f"job {job_id!r} has no disposition to decide", None)
        status = disposition["status"]
        if status != PENDING_OWNER:
            if disposition.get("choice") != choice:
                raise DispositionConflictError(
                    f"job {job_id!r}: disposition is {status}"
                    + (f" ({disposition.get('choice')})" if disposition.get("choice") else ""),
                    disposition,
                )
            _audit(record, disposition, deps)  # idempotent re-assertion, see on_job_state
            if status == APPLYING:
                return _resume(record, disposition, deps, report=True)
            return DispositionOutcome.from_record(job_id, disposition, changed=False)
        offered = tuple(disposition.get("choices") or CHOICES)
        if choice not in offered:
            raise InvalidChoiceError(
                f"choice: {choice!r} is not offered for job {job_id!r} "
                f"(offered: {', '.join(offered)})"
            )
        decided = {
            **disposition,
            "choice": choice,
            "decidedBy": actor,
            "decidedAt": deps.clock.now(),
            "decisionSource": source,
        }
        if choice == "abandon":
            decided.update(status=ABANDONED, closedAt=deps.clock.now())
        else:
            decided.update(
                status=APPLYING,
                leaseUntil=deps.clock.now() + APPLY_LEASE_SECONDS,
                **_successor_plan(record, choice, deps.policy),
            )
        if deps.store.transition_disposition(
            job_id, expected_status=PENDING_OWNER, disposition=decided
        ):
            _audit(record, decided, deps)
            outcome = (
                _apply_or_report({**record, "disposition": decided}, decided, deps, changed=True)
                if choice != "abandon"
                else DispositionOutcome.from_record(job_id, decided, changed=True)
            )
            _update_owner_message(decided, outcome, deps)
            return outcome
        record = deps.store.get(job_id) or record
    raise DispositionConflictError(f"job {job_id!r}: disposition keeps changing", None)


# --- steps ----------------------------------------------------------------------------


def _open_exhausted(
    record: Mapping[str, Any],
    tracking: JobTracking,
    workload_class: WorkloadClass,
    deps: DispositionDeps,
) -> DispositionOutcome | None:
    share = str(record.get("quotaShareName") or tracking.quota_share_name or "")
    action = workload_class.onRetriesExhausted.action
    choices = available_choices(record, workload_class, share)
    base = {
        "trigger": RETRIES_EXHAUSTED,
        "policyAction": action,
        "owner": _owner(record),
        "openedAt": deps.clock.now(),
        "preemptionCount": tracking.preemption_count,
        "preemptionRetriesBeforeTermination": record.get("preemptionRetriesBeforeTermination"),
    }
    why = (
        f"FAILED after {tracking.preemption_count} preemption(s), more than "
        f"preemptionRetriesBeforeTermination={record.get('preemptionRetriesBeforeTermination')}"
    )
    automatic = {"resubmit": "resubmit", "reclassify": "reclassify"}.get(action)
    if automatic is not None and automatic in choices:
        disposition = {
            **base,
            "status": APPLYING,
            "leaseUntil": deps.clock.now() + APPLY_LEASE_SECONDS,
            "choice": automatic,
            "decidedBy": SYSTEM_ACTOR,
            "decidedAt": deps.clock.now(),
            "reason": f"{why}; class {record.get('workloadClass')!r} policy: {action}",
            **_successor_plan(record, automatic, deps.policy),
        }
    elif choices == ("abandon",):
        disposition = {
            **base,
            "status": ABANDONED,
            "choice": "abandon",
            "decidedBy": SYSTEM_ACTOR,
            "decidedAt": deps.clock.now(),
            "closedAt": deps.clock.now(),
            "reason": f"{why}; policy action {action} impossible: "
            f"maxResubmits={workload_class.onRetriesExhausted.maxResubmits} reached "
            f"for original job {original_id(record)!r}",
        }
    else:
        reason = f"{why}; class {record.get('workloadClass')!r} policy: {action}"
        if action != "ask-owner":
            reason += f" (impossible from share {share!r}, so the owner decides)"
        disposition = {**base, "status": PENDING_OWNER, "choices": list(choices), "reason": reason}
    return _start(record, disposition, deps)


def _open_thrash(
    record: Mapping[str, Any],
    tracking: JobTracking,
    workload_class: WorkloadClass,
    guard: ThrashGuard,
    deps: DispositionDeps,
) -> DispositionOutcome | None:
    share = str(record.get("quotaShareName") or tracking.quota_share_name or "")
    if "reclassify" not in available_choices(record, workload_class, share):
        return None
    disposition = {
        "trigger": THRASH_GUARD,
        "policyAction": "reclassify",
        "owner": _owner(record),
        "openedAt": deps.clock.now(),
        "status": AWAITING_TERMINATION,
        "choice": "reclassify",
        "decidedBy": SYSTEM_ACTOR,
        "decidedAt": deps.clock.now(),
        "preemptionCount": tracking.preemption_count,
        "reason": f"thrash guard: {guard.preemptions} preemptions within "
        f"{guard.windowSeconds} s while in share {share!r}",
        **_successor_plan(record, "reclassify", deps.policy),
    }
    outcome = _start(record, disposition, deps)
    if outcome is not None and outcome.changed:
        _terminate(record, disposition, deps)
    return outcome


def _terminate(
    record: Mapping[str, Any], disposition: Mapping[str, Any], deps: DispositionDeps
) -> None:
    batch_job_id = record.get("batchJobId")
    if not batch_job_id:
        return
    try:
        deps.batch.terminate_service_job(
            jobId=str(batch_job_id),
            reason=f"quotagov {disposition['reason']}; moving to share "
            f"{disposition['targetShare']!r}"[:1000],
        )
    except BatchClientError as error:
        # Already finished or unknown to Batch: the job's terminal event settles it.
        logger.warning("TerminateServiceJob refused for %s: %s", batch_job_id, error)
    # mark the request as made, so later events of the job do not repeat it
    deps.store.transition_disposition(
        str(record["pk"]),
        expected_status=AWAITING_TERMINATION,
        disposition={**disposition, "terminateRequestedAt": deps.clock.now()},
    )


def _start(
    record: Mapping[str, Any], disposition: dict[str, Any], deps: DispositionDeps
) -> DispositionOutcome | None:
    job_id = str(record["pk"])
    if not deps.store.transition_disposition(job_id, expected_status=None, disposition=disposition):
        return _reloaded(job_id, deps)
    _audit(record, disposition, deps)
    if disposition["status"] == PENDING_OWNER:
        _ask_owner(record, disposition, deps)
    elif disposition["status"] == ABANDONED:
        _tell_owner(record, disposition, deps)
    elif disposition["status"] == APPLYING:
        return _apply({**record, "disposition": disposition}, disposition, deps)
    return DispositionOutcome.from_record(job_id, disposition, changed=True)


def _advance(
    record: Mapping[str, Any],
    current: Mapping[str, Any],
    moved: dict[str, Any],
    deps: DispositionDeps,
) -> DispositionOutcome | None:
    job_id = str(record["pk"])
    if not deps.store.transition_disposition(
        job_id, expected_status=str(current["status"]), disposition=moved
    ):
        return _reloaded(job_id, deps)
    _audit(record, moved, deps)
    if moved["status"] == APPLYING:
        return _apply({**record, "disposition": moved}, moved, deps)
    return DispositionOutcome.from_record(job_id, moved, changed=True)


def _apply(
    record: Mapping[str, Any], disposition: Mapping[str, Any], deps: DispositionDeps
) -> DispositionOutcome:
    """Create and submit the successor, then mark the disposition ``applied`` (idempotent)."""
    job_id = str(record["pk"])
    successor_id = str(disposition["successorId"])
    successor = _successor_item(record, disposition, deps)
    deps.store.put_successor(successor)
    stored = deps.store.get(successor_id) or successor
    successor_batch_job_id = stored.get("batchJobId")
    if not successor_batch_job_id:
        try:
            response = deps.submitter()(stored)
        except BatchError as error:
            # release the lease so the next click or redelivered event retries at once
            released = {**disposition, "leaseUntil": 0, "lastError": str(error)[:500]}
            deps.store.transition_disposition(
                job_id,
                expected_status=APPLYING,
                expected_lease=_lease(disposition),
                disposition=released,
            )
            raise
        successor_batch_job_id = str(response["jobId"])
        deps.store.set_batch_job_id(
            successor_id, successor_batch_job_id, batch_job_arn=response.get("jobArn")
        )
    applied = {
        **disposition,
        "status": APPLIED,
        "closedAt": deps.clock.now(),
        "successorBatchJobId": str(successor_batch_job_id),
    }
    if deps.store.transition_disposition(
        job_id, expected_status=APPLYING, disposition=applied, successor_id=successor_id
    ):
        _audit(record, applied, deps)
        return DispositionOutcome.from_record(job_id, applied, changed=True)
    current = (deps.store.get(job_id) or {}).get("disposition") or applied
    return DispositionOutcome.from_record(job_id, current, changed=False)


def _lease(disposition: Mapping[str, Any]) -> float:
    return float(disposition.get("leaseUntil") or 0)


def _resume(
    record: Mapping[str, Any],
    disposition: Mapping[str, Any],
    deps: DispositionDeps,
    *,
    report: bool,
) -> DispositionOutcome:
    """Finish an ``applying`` disposition another call started, unless it still holds the
    lease (then it is in progress: report it unchanged). Taking the lease is a conditional
    write, so of many concurrent callers one submits the successor."""
    job_id = str(record["pk"])
    lease = _lease(disposition)
    now = deps.clock.now()
    if now < lease:
        if not report:
            raise DispositionInProgressError(
                f"job {job_id!r}: another invocation is submitting the successor "
                f"(lease for {lease - now:.0f} s more); retry the event later"
            )
        return DispositionOutcome.from_record(job_id, disposition, changed=False)
    taken = {**disposition, "leaseUntil": now + APPLY_LEASE_SECONDS}
    if not deps.store.transition_disposition(
        job_id, expected_status=APPLYING, expected_lease=lease, disposition=taken
    ):
        current = (deps.store.get(job_id) or {}).get("disposition") or disposition
        return DispositionOutcome.from_record(job_id, current, changed=False)
    moved = {**record, "disposition": taken}
    if report:
        return _apply_or_report(moved, taken, deps, changed=False)
    return _apply(moved, taken, deps)


def _apply_or_report(
    record: Mapping[str, Any],
    disposition: Mapping[str, Any],
    deps: DispositionDeps,
    *,
    changed: bool,
) -> DispositionOutcome:
    try:
        return _apply(record, disposition, deps)
    except BatchError as error:
        logger.warning("successor of %s not submitted yet: %s", record["pk"], error)
        return DispositionOutcome.from_record(
            str(record["pk"]), disposition, changed=changed, error=str(error)
        )


def _successor_plan(record: Mapping[str, Any], choice: str, policy: Policy) -> dict[str, Any]:
    share = str(record.get("quotaShareName") or "")
    target = share
    if choice == "reclassify":
        workload_class = policy.workloadClasses[str(record["workloadClass"])]
        found = next_share(workload_class, share)
        if found is None:
            raise InvalidChoiceError(
                f"choice: reclassify impossible, {share!r} is the last share of class "
                f"{record['workloadClass']!r}"
            )
        target = found
    return {"successorId": successor_id_for(record), "targetShare": target}


def _successor_item(
    record: Mapping[str, Any], disposition: Mapping[str, Any], deps: DispositionDeps
) -> dict[str, Any]:
    skip = {
        "pk",
        "batchJobId",
        "batchJobArn",
        "jobState",
        "jobStateFacts",
        "jobStateVersion",
        "disposition",
        "successorIds",
        "reasons",
        "version",
        "state",
        "createdAt",
        "updatedAt",
        "clientToken",
    }
    item = {k: v for k, v in record.items() if k not in skip}
    now = int(deps.clock.now())
    count = generation(record) + 1
    item.update(
        pk=str(disposition["successorId"]),
        jobName=_job_name({**record, "resubmitCount": count}),
        quotaShareName=str(disposition["targetShare"]),
        predecessorId=str(record["pk"]),
        originalId=original_id(record),
        resubmitCount=count,
        clientToken=client_token_for(original_id(record), count),
        state="QUEUED",
        reasons=[],
        successorIds=[],
        version=1,
        createdAt=now,
        updatedAt=now,
    )
    return item


def _reloaded(job_id: str, deps: DispositionDeps) -> DispositionOutcome | None:
    current = (deps.store.get(job_id) or {}).get("disposition")
    return DispositionOutcome.from_record(job_id, current, changed=False) if current else None


def _audit(
    record: Mapping[str, Any], disposition: Mapping[str, Any], deps: DispositionDeps
) -> None:
    status = str(disposition["status"])
    action = {
        PENDING_OWNER: "DispositionPending",
        AWAITING_TERMINATION: "DispositionTerminating",
        APPLYING: "DispositionDecided",
        APPLIED: "DispositionApplied",
        ABANDONED: "DispositionAbandoned",
        NOT_NEEDED: "DispositionNotNeeded",
    }[status]
    details = {
        k: disposition.get(k)
        for k in (
            "trigger",
            "policyAction",
            "choice",
            "choices",
            "targetShare",
            "successorId",
            "reason",
            "owner",
            "decisionSource",
        )
        if disposition.get(k) is not None
    }
    details.update(
        status=status,
        workloadClass=record.get("workloadClass"),
        quotaShareName=record.get("quotaShareName"),
        batchJobId=record.get("batchJobId"),
    )
    # ``jobId``: the service job this step's Batch call acts on, so the audit log can
    # match the call when CloudTrail reports it (TerminateServiceJob / SubmitServiceJob).
    if status == AWAITING_TERMINATION and record.get("batchJobId"):
        details["jobId"] = record["batchJobId"]
    if status == APPLIED and disposition.get("successorBatchJobId"):
        details["jobId"] = disposition["successorBatchJobId"]
    deps.audit.record_decision(
        ControllerDecision(
            action=action,
            actor=str(disposition.get("decidedBy") or SYSTEM_ACTOR)
            if status != PENDING_OWNER
            else SYSTEM_ACTOR,
            job_queue=deps.job_queue or deps.policy.jobQueue,
            resource=str(record["pk"]),
            decision_id=f"disposition:{record['pk']}:{status}",
            details=details,
        )
    )


def _owner(record: Mapping[str, Any]) -> str:
    if record.get("principal"):
        return str(record["principal"])
    return f"team:{record.get('team', '')}"


def _owner_slack_id(record: Mapping[str, Any], policy: Policy) -> str | None:
    if record.get("ownerSlackUserId"):
        return str(record["ownerSlackUserId"])
    owner = _owner(record)
    team = policy.teams.get(str(record.get("team")))
    if team is None:
        return None
    for member in team.members:
        if owner in (member.principal, member.slackUserId) and member.slackUserId:
            return member.slackUserId
    return None


def _authorize(record: Mapping[str, Any], actor: str, policy: Policy) -> None:
    """Raise unless ``actor`` may decide (:func:`.access.may_decide_disposition`)."""
    if not may_decide_disposition(
        policy,
        team=str(record.get("team", "")),
        quota_share=str(record.get("quotaShareName") or ""),
        submitter=_owner(record),
        owner_slack_user_id=record.get("ownerSlackUserId"),
        actor=actor,
    ):
        raise DispositionForbiddenError(
            f"actor: {actor!r} may not decide for job {record['pk']!r} "
            f"(team {record.get('team')!r})"
        )


def disposition_blocks(
    record: Mapping[str, Any], disposition: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Block Kit blocks asking the owner (reference §7.5): a section and the buttons."""
    return slack_blocks.ask_blocks(
        str(record["pk"]),
        _ask_text(record, disposition),
        list(disposition.get("choices") or CHOICES),
    )


def _ask_text(record: Mapping[str, Any], disposition: Mapping[str, Any]) -> str:
    return slack_blocks.ask_text(
        str(record["pk"]),
        str(record.get("workloadClass")),
        record.get("quotaShareName"),
        str(disposition.get("reason", "")),
    )


def _ask_owner(
    record: Mapping[str, Any], disposition: dict[str, Any], deps: DispositionDeps
) -> None:
    channel = _owner_slack_id(record, deps.policy) or deps.platform_channel
    if deps.chat is None or not channel:
        logger.warning("no Slack channel for job %s; decision stays on the API", record["pk"])
        return
    try:
        posted = deps.chat.post(
            channel, _ask_text(record, disposition), disposition_blocks(record, disposition)
        )
    except ChatError as error:
        logger.warning("could not ask the owner of %s in Slack: %s", record["pk"], error)
        return
    message = {"channel": posted.channel, "ts": posted.ts}
    with_message = {**disposition, "message": message}
    if deps.store.transition_disposition(
        str(record["pk"]), expected_status=PENDING_OWNER, disposition=with_message
    ):
        disposition["message"] = message


def _tell_owner(
    record: Mapping[str, Any], disposition: Mapping[str, Any], deps: DispositionDeps
) -> None:
    channel = _owner_slack_id(record, deps.policy) or deps.platform_channel
    if deps.chat is None or not channel:
        return
    text = slack_blocks.abandoned_text(str(record["pk"]), str(disposition.get("reason", "")))
    try:
        deps.chat.post(channel, text, slack_blocks.notice_blocks(text))
    except ChatError as error:
        logger.warning("could not tell the owner of %s in Slack: %s", record["pk"], error)


def _update_owner_message(
    disposition: Mapping[str, Any], outcome: DispositionOutcome, deps: DispositionDeps
) -> None:
    message = disposition.get("message")
    if deps.chat is None or not message:
        return
    text = slack_blocks.decision_text(
        decided_by=disposition.get("decidedBy"),
        choice=disposition.get("choice"),
        target_share=disposition.get("targetShare"),
        submitted_successor=outcome.successor_id if outcome.status == APPLIED else None,
        error=outcome.error,
    )
    # with an error, keep the chosen button so the owner can finish the decision
    retry = str(disposition.get("choice")) if outcome.error else None
    blocks = slack_blocks.decision_blocks(outcome.job_id, text, retry)
    try:
        deps.chat.update(
            PostedMessage(channel=str(message["channel"]), ts=str(message["ts"])), text, blocks
        )
    except ChatError as error:
        logger.warning("could not update the disposition message: %s", error)


def _job_name(successor: Mapping[str, Any]) -> str:
    base = str(successor.get("jobName") or f"quotagov-{successor['pk']}")
    suffix = f"-r{successor.get('resubmitCount', 1)}"
    base = re.sub(r"-r\d+$", "", base)
    return _safe(base)[: 128 - len(suffix)] + suffix


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)


__all__ = [
    "ACTION_ID_PREFIX",
    "CHOICES",
    "DispositionConflictError",
    "DispositionDeps",
    "DispositionError",
    "DispositionForbiddenError",
    "DispositionInProgressError",
    "DispositionNotFoundError",
    "DispositionOutcome",
    "InvalidChoiceError",
    "JobStateStore",
    "SuccessorSubmitter",
    "available_choices",
    "decide_disposition",
    "disposition_blocks",
    "next_share",
    "on_job_state",
    "thrash_detected",
]
