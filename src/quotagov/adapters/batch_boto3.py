"""The real AWS Batch behind the :class:`~quotagov.governance.ports.BatchPort`: a boto3 client.

The client retries throttling (HTTP 429 ``TooManyRequestsException``) and 5xx answers
itself, with botocore's ``adaptive`` retry mode (client-side rate limiting on top of
exponential back-off; Boto3 guide, "Retries",
https://boto3.amazonaws.com/v1/documentation/api/latest/guide/retries.html). What is left
after those retries is
turned into the port's named exceptions by :func:`map_client_error`:

================================================  ==========================
AWS answer                                        exception
================================================  ==========================
``ClientException`` naming something unknown      :class:`BatchNotFoundError`
other ``ClientException`` / other 4xx             :class:`BatchClientError`
``TooManyRequestsException`` or any HTTP 429      :class:`BatchThrottledError`
``ServerException`` or any HTTP 5xx               :class:`BatchServerError`
connection failures, timeouts                     :class:`BatchServerError`
botocore parameter validation, missing creds      :class:`BatchClientError`
================================================  ==========================

Batch has one error code, ``ClientException``, for "unknown identifier", "bad input"
and "wrong state". The not-found rule matches the message against the phrasings
Batch uses for unknown resources (``JobQueue x not found.``, ``... does not exist``),
see :data:`NOT_FOUND_PATTERN`.

Responses are returned as plain dicts without boto3's ``ResponseMetadata``, so they
are the API's own response members, the same as the simulated Batch returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    NoCredentialsError,
    ParamValidationError,
    PartialCredentialsError,
)

from quotagov.governance.ports import (
    BatchClientError,
    BatchError,
    BatchNotFoundError,
    BatchPort,
    BatchServerError,
    BatchThrottledError,
)
from quotagov.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_batch import BatchClient

#: botocore's ``retries.max_attempts``: retries after the first try (8 sends in all).
DEFAULT_MAX_ATTEMPTS = 7

#: Error codes botocore's retry handlers treat as throttling, plus Batch's own.
THROTTLING_CODES = frozenset(
    {
        "TooManyRequestsException",
        "ThrottlingException",
        "Throttling",
        "ThrottledException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "SlowDown",
    }
)

#: A ``ClientException`` message matching this names an unknown job, queue or share.
NOT_FOUND_PATTERN = re.compile(
    r"\b(not found|does not exist|doesn't exist|cannot be found|could not be found|no such)\b",
    re.IGNORECASE,
)


def make_batch_client(
    *,
    region_name: str | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    endpoint_url: str | None = None,
    session: boto3.Session | None = None,
) -> BatchClient:
    """Create a boto3 ``batch`` client with adaptive retries.

    Args:
        region_name: AWS Region; ``None`` uses the environment (``AWS_REGION``).
        max_attempts: botocore's ``retries.max_attempts``, the number of retries after
            the first try (>= 0); botocore stores it as ``total_max_attempts`` =
            ``max_attempts + 1``.
        endpoint_url: alternative endpoint, for tests against a local server.
        session: boto3 session to use (default: a new one).

    Raises:
        ValueError: when ``max_attempts`` is negative.
    """
    if max_attempts < 0:
        raise ValueError(f"max_attempts: must be >= 0, got {max_attempts}")
    config = Config(retries={"mode": "adaptive", "max_attempts": max_attempts})
    factory = session or boto3.Session()
    client: BatchClient = factory.client(
        "batch", region_name=region_name, endpoint_url=endpoint_url, config=config
    )
    return client


def map_client_error(operation: str, error: Exception) -> BatchError:
    """Turn a botocore failure of ``operation`` into the port's named exception.

    Args:
        operation: the Batch operation name, e.g. ``"DescribeServiceJob"``.
        error: a :class:`botocore.exceptions.ClientError` or
            :class:`botocore.exceptions.BotoCoreError`.

    Returns:
        The exception to raise (see the module docstring for the table).
    """
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        code = str(details.get("Code") or "Unknown")
        message = str(details.get("Message") or error)
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if code in THROTTLING_CODES or status == 429:
            return BatchThrottledError(operation, code, message)
        if code == "ServerException" or status >= 500:
            return BatchServerError(operation, code, message)
        if code == "ClientException" and NOT_FOUND_PATTERN.search(message):
            return BatchNotFoundError(operation, code, message)
        return BatchClientError(operation, code, message)
    code = type(error).__name__
    if isinstance(error, ParamValidationError | NoCredentialsError | PartialCredentialsError):
        return BatchClientError(operation, code, str(error))
    return BatchServerError(operation, code, str(error))


class Boto3Batch:
    """:class:`~quotagov.governance.ports.BatchPort` on a boto3 ``batch`` client.

    Args:
        client: a boto3 ``batch`` client, normally from :func:`make_batch_client`.

    Every method takes the API's request members as keyword arguments and returns the
    response members (epoch milliseconds for times). Every method raises
    :class:`~quotagov.governance.ports.BatchClientError` (or ``BatchNotFoundError``),
    ``BatchThrottledError`` or ``BatchServerError``, never a botocore exception.
    """

    def __init__(self, client: BatchClient) -> None:
        self.client = client

    def _call(
        self, operation: str, method: Callable[..., Any], request: dict[str, Any]
    ) -> dict[str, Any]:
        try:
            response = method(**request)
        except (ClientError, BotoCoreError) as error:
            raise map_client_error(operation, error) from error
        return {k: v for k, v in dict(response).items() if k != "ResponseMetadata"}

    def submit_service_job(self, **request: Any) -> dict[str, Any]:
        """``SubmitServiceJob``; returns ``{jobArn, jobName, jobId}``.

        Pass your own ``clientToken`` (1-64 chars) for idempotency across invocations;
        without one botocore generates a fresh token per call (botocore's ``batch``
        service model marks ``clientToken`` as an idempotency token).
        """
        return self._call("SubmitServiceJob", self.client.submit_service_job, request)

    def update_service_job(self, *, jobId: str, schedulingPriority: int) -> dict[str, Any]:
        """``UpdateServiceJob`` (priority 0-9999); returns ``{jobArn, jobName, jobId}``."""
        return self._call(
            "UpdateServiceJob",
            self.client.update_service_job,
            {"jobId": jobId, "schedulingPriority": schedulingPriority},
        )

    def describe_service_job(self, *, jobId: str) -> dict[str, Any]:
        """``DescribeServiceJob``; the full job description."""
        return self._call("DescribeServiceJob", self.client.describe_service_job, {"jobId": jobId})

    def list_service_jobs(self, **request: Any) -> dict[str, Any]:
        """``ListServiceJobs`` (one page); returns ``{jobSummaryList, nextToken?}``."""
        return self._call("ListServiceJobs", self.client.list_service_jobs, request)

    def terminate_service_job(self, *, jobId: str, reason: str) -> dict[str, Any]:
        """``TerminateServiceJob``; returns ``{}``."""
        return self._call(
            "TerminateServiceJob",
            self.client.terminate_service_job,
            {"jobId": jobId, "reason": reason},
        )

    def get_job_queue_snapshot(self, *, jobQueue: str) -> dict[str, Any]:
        """``GetJobQueueSnapshot``; front of queue, front of each quota share, utilization."""
        return self._call(
            "GetJobQueueSnapshot", self.client.get_job_queue_snapshot, {"jobQueue": jobQueue}
        )

    def describe_job_queues(self, **request: Any) -> dict[str, Any]:
        """``DescribeJobQueues``; the queues with their ``serviceEnvironmentOrder``."""
        return self._call("DescribeJobQueues", self.client.describe_job_queues, request)

    def describe_service_environments(self, **request: Any) -> dict[str, Any]:
        """``DescribeServiceEnvironments``; the environments with their ``capacityLimits``."""
        return self._call(
            "DescribeServiceEnvironments", self.client.describe_service_environments, request
        )

    def create_quota_share(self, **request: Any) -> dict[str, Any]:
        """``CreateQuotaShare``; returns ``{quotaShareName, quotaShareArn}``."""
        return self._call("CreateQuotaShare", self.client.create_quota_share, request)

    def update_quota_share(self, **request: Any) -> dict[str, Any]:
        """``UpdateQuotaShare``; returns ``{quotaShareName, quotaShareArn}``."""
        return self._call("UpdateQuotaShare", self.client.update_quota_share, request)

    def describe_quota_share(self, *, quotaShareArn: str) -> dict[str, Any]:
        """``DescribeQuotaShare``; the share's configuration, state and status."""
        return self._call(
            "DescribeQuotaShare",
            self.client.describe_quota_share,
            {"quotaShareArn": quotaShareArn},
        )

    def list_quota_shares(self, **request: Any) -> dict[str, Any]:
        """``ListQuotaShares`` (one page); returns ``{quotaShares, nextToken?}``."""
        return self._call("ListQuotaShares", self.client.list_quota_shares, request)

    def delete_quota_share(self, *, quotaShareArn: str) -> dict[str, Any]:
        """``DeleteQuotaShare``; the share must be DISABLED first; returns ``{}``."""
        return self._call(
            "DeleteQuotaShare",
            self.client.delete_quota_share,
            {"quotaShareArn": quotaShareArn},
        )


def build_batch(settings: Settings, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> Boto3Batch:
    """Build the boto3 Batch adapter for a deployment (Region from the environment).

    ``settings`` is accepted so the builder has the same shape as the others in
    :mod:`quotagov.wiring`; the Batch client needs no setting of its own (the job
    queue ARN is passed per call).
    """
    del settings
    return Boto3Batch(make_batch_client(max_attempts=max_attempts))


if TYPE_CHECKING:  # mypy checks that the boto3 adapter satisfies the port

    def _is_a_batch_port(batch: Boto3Batch) -> BatchPort:
        return batch
