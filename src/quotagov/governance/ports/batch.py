"""The Batch port: the AWS Batch calls quotagov makes, and the errors they raise.

Adapters: ``quotagov.adapters.batch_boto3`` (AWS) and ``quotagov_tools.batch_simulated``
(the local scheduler). The port speaks the AWS Batch API's own request and response dictionaries
(botocore ``batch`` model, API version 2016-08-10), so the boto3 adapter and the
simulated Batch are interchangeable.
"""

from __future__ import annotations

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

    def describe_job_queues(self, **request: Any) -> dict[str, Any]:
        """``DescribeJobQueues`` (``jobQueues``: names or ARNs); ``{jobQueues: [...]}``
        with each queue's ``serviceEnvironmentOrder``."""
        ...

    def describe_service_environments(self, **request: Any) -> dict[str, Any]:
        """``DescribeServiceEnvironments`` (``serviceEnvironments``: names or ARNs);
        ``{serviceEnvironments: [...]}`` with each one's ``capacityLimits``."""
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
