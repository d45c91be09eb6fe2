"""Nothing stays ``QUEUED`` silently: the reconciler's pass over stuck submissions.

A submission is ``QUEUED`` from the moment it is accepted until the submit worker's
``SubmitServiceJob`` succeeds. It can get stuck there: Batch throttled every try until
SQS moved the message to the submission DLQ (5 receives), the queue lost it, or the
worker's write after a successful call failed. :func:`reconcile_stale_submissions`
(``ReconcilerFunction``, every 5 minutes) takes each submission ``QUEUED`` for longer
than ``stale_after_seconds`` (from ``updatedAt``, the last write of its record) and:

1. while it has been queued again fewer than ``max_requeues`` times: sends its id to the
   submission queue again and counts the re-queue on the record (``requeueCount``,
   ``requeuedAt``; the write also restarts the ``updatedAt`` clock). The worker then
   looks for a service job tagged with the submission before calling
   ``SubmitServiceJob`` (``recheck``), so a re-queue never makes a second job;
2. after that: looks in Batch for a service job tagged ``quotagov:submissionId`` with
   the submission (``ListServiceJobs`` + ``DescribeServiceJob``). Found: the record
   becomes ``SUBMITTED`` with it. Not found: ``FAILED`` with the reason and
   ``failureKind`` ``stuck-queued`` (should a last in-flight message still create the job, the
   worker's write turns the record ``SUBMITTED``, see ``mark_submitted``), and its
   owner is told through the owner notice queue
   (:func:`~quotagov.governance.submission.failure.announce_failure`); a notice the
   queue refuses is logged and the submission listed ``unnotified``.

Every move is a conditional write on the record's ``version`` and ``QUEUED`` state, so a
worker finishing the submission meanwhile wins, and every move is an audit decision
(``SubmissionRequeued``, ``SubmissionReconciled``, ``SubmissionFailed``). A failing
AWS call affects only that submission: it is left as it was and counted ``deferred``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from quotagov.clock import Clock
from quotagov.governance.model.job import (
    FailureKind,
    JobRecord,
    SubmissionState,
    failure_changes,
)
from quotagov.governance.ports import (
    AuditSink,
    BatchError,
    BatchPort,
    ControllerDecision,
    JobRecordConflictError,
    JobRecordNotFoundError,
    JobsRepository,
    SubmissionQueue,
    SubmissionQueueError,
)
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.ports.handoff import DecisionHandoff, HandoffError
from quotagov.governance.ports.messages import MessageMac
from quotagov.governance.submission.failure import announce_failure
from quotagov.governance.submission.proof import unproven

logger = logging.getLogger(__name__)

#: Default age (seconds since the record's last write) after which QUEUED is stuck:
#: well past a normal wait (a burst of 1000 submissions drains in about 250 s at 4/s).
DEFAULT_STALE_AFTER_SECONDS = 900
#: Default number of re-queues before a stuck submission is failed.
DEFAULT_MAX_REQUEUES = 3
#: Default number of submissions looked at per pass (the rest wait for the next one).
DEFAULT_LIMIT = 200


@dataclass
class ReconcileDeps:
    """What the reconciler uses (``quotagov.composition.Reconciler.reconcile``).

    Attributes:
        jobs: the job records (needs ``in_state_since`` and ``update``).
        queue: the submission queue the worker polls.
        batch: the Batch port, to find service jobs tagged with a submission.
        audit: where each move is recorded.
        clock: epoch seconds.
        job_queue: the governed job queue ARN (``JOB_QUEUE``).
        stale_after_seconds: a ``QUEUED`` record not written for this long is stuck
            (>= 1; the template's ``StaleSubmissionSeconds``, default 900).
        max_requeues: re-queues before it is failed (>= 0, default 3).
        limit: submissions handled per pass (>= 1).
        notices: the owner notice queue (``OWNER_NOTICE_QUEUE_URL``); None: nobody is
            told (the reconciler holds no Slack secret).
        proofs: the message key: a record whose ``submissionProof`` it does not verify
            is audited and left alone (:mod:`.proof`); None: no check (tests).
    """

    jobs: JobsRepository
    queue: SubmissionQueue
    batch: BatchPort
    audit: AuditSink
    clock: Clock
    job_queue: str
    stale_after_seconds: int = DEFAULT_STALE_AFTER_SECONDS
    max_requeues: int = DEFAULT_MAX_REQUEUES
    limit: int = DEFAULT_LIMIT
    notices: DecisionHandoff | None = None
    proofs: MessageMac | None = None

    def __post_init__(self) -> None:
        if self.stale_after_seconds < 1:
            raise ValueError(f"stale_after_seconds: {self.stale_after_seconds} is not >= 1")
        if self.max_requeues < 0:
            raise ValueError(f"max_requeues: {self.max_requeues} is not >= 0")
        if self.limit < 1:
            raise ValueError(f"limit: {self.limit} is not >= 1")


@dataclass
class ReconcileReport:
    """Submission ids by what the pass did with them.

    Attributes:
        requeued: sent to the submission queue again.
        submitted: found in Batch, record now ``SUBMITTED``.
        failed: record now ``FAILED`` with the reason.
        deferred: an AWS call failed; left as they were for the next pass.
        unchanged: moved by someone else meanwhile (no longer ``QUEUED``).
        unnotified: failed, but the owner notice queue refused the notice (logged).
        refused: no valid ``submissionProof`` (written outside quotagov): audited,
            left ``QUEUED``, never re-queued.
    """

    requeued: list[str] = field(default_factory=list)
    submitted: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    unnotified: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        """The report as ``{"requeued": [...], "submitted": [...], ...}``."""
        return {
            "requeued": self.requeued,
            "submitted": self.submitted,
            "failed": self.failed,
            "deferred": self.deferred,
            "unchanged": self.unchanged,
            "unnotified": self.unnotified,
            "refused": self.refused,
        }


def reconcile_stale_submissions(deps: ReconcileDeps) -> ReconcileReport:
    """One pass over the submissions stuck ``QUEUED`` (see the module documentation).

    Returns:
        What happened to each stuck submission.

    Raises:
        Nothing for one submission's failing AWS call (it is ``deferred``); the
        repository's own errors when the stuck records cannot even be listed.
    """
    now = int(deps.clock.now())
    report = ReconcileReport()
    stuck = deps.jobs.in_state_since(
        SubmissionState.QUEUED, now - deps.stale_after_seconds, limit=deps.limit
    )
    for record in stuck:
        if unproven(record, deps.proofs, deps.audit, deps.job_queue):
            report.refused.append(record.pk)  # written outside quotagov: audited, left
            continue
        if record.requeues < deps.max_requeues:
            _requeue(record, deps, now, report)
        else:
            _settle(record, deps, now, report)
    return report


def _requeue(record: JobRecord, deps: ReconcileDeps, now: int, report: ReconcileReport) -> None:
    """Send the id again, then count it (a lost count only means one more re-queue)."""
    count = record.requeues + 1
    try:
        deps.queue.send(record.pk)
    except SubmissionQueueError as exc:
        logger.warning("re-queue of %s failed: %s", record.pk, exc)
        report.deferred.append(record.pk)
        return
    try:
        deps.jobs.update_if_expected(
            record.pk,
            {"requeueCount": count, "requeuedAt": now},
            expected_version=record.version,
            expected_states=[SubmissionState.QUEUED],
        )
    except (JobRecordConflictError, JobRecordNotFoundError):
        # The worker moved it meanwhile; the extra message finds it not QUEUED.
        report.unchanged.append(record.pk)
        return
    _record(
        deps,
        "SubmissionRequeued",
        record,
        decision_id=f"SubmissionRequeued#{record.pk}#{count}",
        details={
            "requeueCount": count,
            "queuedSeconds": now - (record.createdAt or now),
            "reason": f"QUEUED for more than {deps.stale_after_seconds} s",
        },
    )
    report.requeued.append(record.pk)


def _settle(record: JobRecord, deps: ReconcileDeps, now: int, report: ReconcileReport) -> None:
    """After the last re-queue: SUBMITTED when Batch has the job, else FAILED."""
    from quotagov.governance.submission.to_batch import find_service_job

    try:
        found = find_service_job(deps.batch, record, deps.job_queue)
    except BatchError as exc:
        logger.warning("looking up %s in Batch failed: %s", record.pk, exc)
        report.deferred.append(record.pk)
        return
    if found is not None:
        changes: dict[str, Any] = {
            "state": SubmissionState.SUBMITTED,
            "batchJobId": found["jobId"],
            "batchJobArn": found.get("jobArn"),
            "submittedAt": now,
            "reasons": [],
        }
        action, target = "SubmissionReconciled", report.submitted
        details: dict[str, Any] = {"jobId": found["jobId"]}
    else:
        queued = now - (record.createdAt or now)
        reason = (
            f"not submitted to Batch: still QUEUED {queued} s after it was accepted and "
            f"{record.requeues} re-queues (SubmitServiceJob kept being throttled or "
            "failing, or its message was parked in the submission DLQ); submit it again"
        )
        changes = {
            "state": SubmissionState.FAILED,
            "reasons": [reason],
            **failure_changes(FailureKind.STUCK_QUEUED),
        }
        action, target = "SubmissionFailed", report.failed
        details = {"reasons": [reason], "team": record.team, "principal": record.principal}
    try:
        stored = deps.jobs.update_if_expected(
            record.pk,
            changes,
            expected_version=record.version,
            expected_states=[SubmissionState.QUEUED],
        )
    except (JobRecordConflictError, JobRecordNotFoundError):
        report.unchanged.append(record.pk)
        return
    _record(deps, action, record, decision_id=f"{action}#{record.pk}", details=details)
    target.append(record.pk)
    if stored.state is SubmissionState.FAILED:
        try:
            announce_failure(stored, notices=deps.notices, notifier=None)
        except HandoffError as exc:
            logger.error("could not tell the owner that %s failed: %s", record.pk, exc)
            report.unnotified.append(record.pk)


def _record(
    deps: ReconcileDeps,
    action: str,
    record: JobRecord,
    *,
    decision_id: str,
    details: dict[str, Any],
) -> None:
    deps.audit.record_decision(
        ControllerDecision(
            action=action,
            actor=QUOTAGOV_ACTOR,
            job_queue=deps.job_queue,
            resource=record.pk,
            decision_id=decision_id,
            details=details,
        )
    )
