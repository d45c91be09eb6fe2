"""What the disposition use cases talk to (built by the composition root,
``dispositions`` of a function's composition, :mod:`quotagov.composition`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from quotagov.clock import Clock
from quotagov.governance.dispositions.successor import submit_with_batch
from quotagov.governance.model.job import JobRecord
from quotagov.governance.notifications import OwnerNotifier
from quotagov.governance.ports import AuditSink, BatchPort, ChatNotifier
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.ports.handoff import DecisionHandoff
from quotagov.governance.ports.jobs import JobsRepository, SuccessorSubmitter
from quotagov.governance.ports.messages import MessageMac
from quotagov.policy.models import Policy


@dataclass
class DispositionDeps:
    """What the disposition use cases talk to.

    Attributes:
        store: the job records (``JobsTable``).
        batch: ``TerminateServiceJob`` (thrash guard) and, by default, ``SubmitServiceJob``.
        policy: the governance policy.
        audit: the audit log (the audit queue when deployed).
        clock: epoch seconds.
        chat: Slack; None = no message is posted (the decision stays on the API).
        job_queue: the governed job queue (ARN), used for successors and audit.
        platform_channel: where to ask when the owner has no Slack user id.
        submit: how successors reach Batch; default :func:`submit_with_batch`.
        notifier: tells the owner when a successor was submitted (None: nobody).
        handoff: when set (the Slack function), an owner's decision is only recorded
            and handed to the apply function, which submits the successor and updates
            the question (:func:`~quotagov.governance.dispositions.settle_disposition`).
        proofs: the message key: a successor is stored with its ``submissionProof``
            and submitted only when the stored one verifies; None: no proofs (tests).
        sender: the running function's name, named by the proofs it makes.
    """

    store: JobsRepository
    batch: BatchPort
    policy: Policy
    audit: AuditSink
    clock: Clock
    chat: ChatNotifier | None = None
    job_queue: str = ""
    platform_channel: str = ""
    submit: SuccessorSubmitter | None = None
    notifier: OwnerNotifier | None = None
    handoff: DecisionHandoff | None = None
    proofs: MessageMac | None = None
    sender: Callable[[], str] = field(default=lambda: QUOTAGOV_ACTOR)

    @property
    def audit_job_queue(self) -> str:
        """The job queue audit decisions name: :attr:`job_queue`, else the policy's."""
        return self.job_queue or self.policy.jobQueue

    def submitter(self) -> SuccessorSubmitter:
        """The configured :class:`SuccessorSubmitter` or the default Batch one."""
        if self.submit is not None:
            return self.submit
        batch, queue = self.batch, self.job_queue

        def _submit(successor: JobRecord) -> dict[str, Any]:
            return submit_with_batch(batch, successor, job_queue=queue)

        return _submit
