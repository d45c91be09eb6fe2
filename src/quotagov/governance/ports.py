"""The ports the use cases talk through. Adapters in ``quotagov.adapters`` implement them.

A use case never imports boto3; it receives objects that satisfy these protocols.
The Batch port speaks the AWS Batch API's own request and response dictionaries
(botocore ``batch`` model, API version 2016-08-10), so the boto3 adapter and the
simulated Batch are interchangeable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class BatchError(Exception):
    """Base of every failure the Batch port reports.

    Attributes:
        operation: the Batch API operation name, e.g. ``"SubmitServiceJob"``.
        code: the AWS error code (``ClientException``, ``ServerException``,
            ``TooManyRequestsException``, ...).
    """

    def __init__(self, operation: str, code: str, message: str) -> None:
        super().__init__(f"{operation}: {code}: {message}")
        self.operation = operation
        self.code = code
        self.message = message


class BatchClientError(BatchError):
    """HTTP 400 ``ClientException``: bad input, unknown identifier or wrong state. Not retryable."""


class BatchNotFoundError(BatchClientError):
    """A ``ClientException`` naming an unknown job, queue or quota share."""


class BatchThrottledError(BatchError):
    """HTTP 429 ``TooManyRequestsException`` after the client's own retries. Retry later."""


class BatchServerError(BatchError):
    """HTTP 5xx ``ServerException`` after the client's own retries. Retry later."""


class BatchPort(Protocol):
    """The AWS Batch calls quotagov makes. Requests and responses are the API's dicts.

    Every method raises :class:`BatchClientError` (or :class:`BatchNotFoundError`) for
    invalid requests, :class:`BatchThrottledError` and :class:`BatchServerError` for
    transient failures. Times in responses are epoch milliseconds.
    """

    def submit_service_job(self, **request: Any) -> dict[str, Any]:
        """``SubmitServiceJob``; returns ``{jobArn, jobName, jobId}``."""
        ...

    def update_service_job(self, *, jobId: str, schedulingPriority: int) -> dict[str, Any]:
        """``UpdateServiceJob``; priority 0-9999; returns ``{jobArn, jobName, jobId}``."""
        ...

    def describe_service_job(self, *, jobId: str) -> dict[str, Any]:
        """``DescribeServiceJob``; the full job description."""
        ...

    def list_service_jobs(self, **request: Any) -> dict[str, Any]:
        """``ListServiceJobs`` (one page); returns ``{jobSummaryList, nextToken?}``."""
        ...

    def terminate_service_job(self, *, jobId: str, reason: str) -> dict[str, Any]:
        """``TerminateServiceJob``; returns ``{}``."""
        ...

    def get_job_queue_snapshot(self, *, jobQueue: str) -> dict[str, Any]:
        """``GetJobQueueSnapshot``; front of queue, front of each quota share, utilization."""
        ...

    def create_quota_share(self, **request: Any) -> dict[str, Any]:
        """``CreateQuotaShare``; returns ``{quotaShareName, quotaShareArn}``."""
        ...

    def update_quota_share(self, **request: Any) -> dict[str, Any]:
        """``UpdateQuotaShare``; returns ``{quotaShareName, quotaShareArn}``."""
        ...

    def describe_quota_share(self, *, quotaShareArn: str) -> dict[str, Any]:
        """``DescribeQuotaShare``; the share's configuration, state and status."""
        ...

    def list_quota_shares(self, **request: Any) -> dict[str, Any]:
        """``ListQuotaShares`` (one page); returns ``{quotaShares, nextToken?}``."""
        ...

    def delete_quota_share(self, *, quotaShareArn: str) -> dict[str, Any]:
        """``DeleteQuotaShare``; the share must be DISABLED first; returns ``{}``."""
        ...


@dataclass(frozen=True)
class ControllerDecision:
    """One decision of the controller itself, for the audit log.

    Attributes:
        action: what was decided, e.g. ``"SubmissionRefused"``, ``"EscalationApproved"``,
            ``"DispositionApplied"``.
        actor: who decided: a principal ARN, a Slack user id, or ``"quotagov"``.
        job_queue: the governed job queue (ARN or name); the audit chain is per queue.
        resource: what it is about (a submission id, a service job id, an escalation id).
        details: JSON-serialisable facts of the decision (reasons, priorities, ...).
        decision_id: a stable id; writing the same id twice stores one record.
    """

    action: str
    actor: str
    job_queue: str
    resource: str
    decision_id: str
    details: Mapping[str, Any] = field(default_factory=dict)


class AuditSink(Protocol):
    """The one small interface through which use cases append to the audit log."""

    def record_decision(self, decision: ControllerDecision) -> None:
        """Append ``decision``; idempotent on ``decision.decision_id``."""
        ...


class NullAuditSink:
    """An :class:`AuditSink` that keeps decisions in memory (for wiring without an audit table)."""

    def __init__(self) -> None:
        self.decisions: list[ControllerDecision] = []

    def record_decision(self, decision: ControllerDecision) -> None:
        """Keep ``decision`` in :attr:`decisions`, once per ``decision_id``."""
        if all(d.decision_id != decision.decision_id for d in self.decisions):
            self.decisions.append(decision)


@dataclass(frozen=True)
class PostedMessage:
    """Where a chat message landed: Slack channel id and message ``ts``."""

    channel: str
    ts: str


class ChatNotifier(Protocol):
    """Posting and updating interactive messages (Slack ``chat.postMessage``/``chat.update``).

    ``blocks`` are Block Kit blocks (list of dicts); ``text`` is the notification
    fallback, always given. Implementations raise :class:`ChatError` on failure.
    """

    def post(self, channel: str, text: str, blocks: list[dict[str, Any]]) -> PostedMessage:
        """Post a message to ``channel``; returns where it landed."""
        ...

    def update(self, message: PostedMessage, text: str, blocks: list[dict[str, Any]]) -> None:
        """Replace the text and blocks of ``message``."""
        ...


class ChatError(Exception):
    """A chat call failed (Slack answered ``ok: false`` or could not be reached).

    Attributes:
        error: Slack's error code, e.g. ``"channel_not_found"``, or the transport fault.
    """

    def __init__(self, error: str) -> None:
        super().__init__(f"chat call failed: {error}")
        self.error = error
