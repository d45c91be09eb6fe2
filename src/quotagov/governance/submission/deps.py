"""What both submission steps share: their dependencies, the audit record, the
failure kinds they test.

- :class:`SubmissionDeps`: the ports and settings the use cases use.
- :func:`audit_decision`: one ``ControllerDecision`` per refusal or failure, keyed
  ``<action>#<submission id>`` so a retried step records it once.
- :func:`is_enqueue_failure`: a ``FAILED`` record whose only fault is that the
  submission queue refused its message (a retry may queue it again).
- :func:`is_stale_failure`: a ``FAILED`` record the reconciler gave up on (stuck
  ``QUEUED``); a service job that still turns up for it wins.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from quotagov.clock import Clock
from quotagov.governance.model.job import FailureKind, JobRecord
from quotagov.governance.notifications import OwnerNotifier
from quotagov.governance.ports import (
    AuditSink,
    BatchPort,
    ControllerDecision,
    JobsRepository,
    SubmissionQueue,
)
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.ports.handoff import DecisionHandoff
from quotagov.governance.ports.messages import MessageMac
from quotagov.governance.submission.capacity import EnvironmentCapacity
from quotagov.policy.models import Policy


def is_stale_failure(record: JobRecord) -> bool:
    """True for a ``FAILED`` record that the reconciler failed as stuck ``QUEUED``
    (:attr:`~quotagov.governance.model.job.FailureKind.STUCK_QUEUED`)."""
    failure = record.failure
    return failure is not None and failure.kind is FailureKind.STUCK_QUEUED


def is_enqueue_failure(record: JobRecord) -> bool:
    """True for a ``FAILED`` record that failed only because the queue refused it
    (:attr:`~quotagov.governance.model.job.FailureKind.ENQUEUE_REFUSED`)."""
    failure = record.failure
    return failure is not None and failure.kind is FailureKind.ENQUEUE_REFUSED


@dataclass
class SubmissionDeps:
    """What the submission use cases use (built by ``quotagov.composition``).

    Attributes:
        policy: the current governance policy.
        jobs: the job records.
        clock: epoch seconds.
        audit: where refusals and failures are recorded.
        job_queue: the governed job queue (``JOB_QUEUE``; the policy's ``jobQueue`` when empty).
        batch: the Batch port (only ``submit_to_batch`` needs it).
        queue: the submission queue (only ``receive_submission`` from the API).
        notifier: tells the submitter when a submission is refused or fails (None: nobody).
        notices: the owner notice queue (``OWNER_NOTICE_QUEUE_URL``): when set, a
            submission the worker fails is announced there for the function that holds
            Slack (:mod:`~quotagov.governance.submission.failure`) instead of through
            ``notifier``.
        pace: called right before each ``SubmitServiceJob``; blocks to keep the rate
            under Batch's limit (a no-op when None).
        capacity: the service environment's capacity (``receive_submission`` refuses a
            job needing more instances than it has; no such check when None).
        proofs: the message key (:mod:`quotagov.governance.submission.proof`); None
            (tests without KMS): records are stored and acted on without proof.
        sender: the running function's name, named by the proofs it makes.
    """

    policy: Policy
    jobs: JobsRepository
    clock: Clock
    audit: AuditSink
    job_queue: str = ""
    batch: BatchPort | None = None
    queue: SubmissionQueue | None = None
    pace: Callable[[], None] | None = None
    notifier: OwnerNotifier | None = None
    capacity: EnvironmentCapacity | None = None
    notices: DecisionHandoff | None = None
    proofs: MessageMac | None = None
    sender: Callable[[], str] = field(default=lambda: QUOTAGOV_ACTOR)

    @property
    def governed_queue(self) -> str:
        """``job_queue`` or, when empty, the policy's ``jobQueue``."""
        return self.job_queue or self.policy.jobQueue


def audit_decision(
    deps: SubmissionDeps, action: str, actor: str, submission_id: str, details: Mapping[str, Any]
) -> None:
    """Record ``action`` (``SubmissionRefused``, ``SubmissionForbidden``,
    ``SubmissionFailed``) by ``actor`` about ``submission_id`` in the audit log.

    The decision id is ``<action>#<submission id>``, so a repeated step records nothing new.
    """
    deps.audit.record_decision(
        ControllerDecision(
            action=action,
            actor=actor,
            job_queue=deps.governed_queue,
            resource=submission_id,
            decision_id=f"{action}#{submission_id}",
            details=dict(details),
        )
    )
