"""Every AWS client quotagov builds, with one retry configuration, and the one
classification of AWS failures (:func:`classify`) the rest of the code acts on.

Clients: :func:`client` and :func:`resource` build boto3 clients on the default session
(or a given one) with :func:`retry_config`: botocore's ``standard`` retry mode, 5 attempts
in all, which retries throttling codes (``ThrottlingException``,
``ProvisionedThroughputExceededException``, ``TransactionInProgressException``,
``TooManyRequestsException``, any HTTP 429), transient answers (HTTP 500, 502, 503, 504,
``RequestTimeout``) and connection faults (a timeout, a connection reset: the
"lost response") with exponential backoff and jitter (boto3 guide, "Retries",
https://boto3.amazonaws.com/v1/documentation/api/latest/guide/retries.html). The Batch
client keeps its own adaptive mode (:mod:`quotagov.adapters.batch_boto3`).

Classification (:class:`AwsFault`), applied to a ``ClientError``/``BotoCoreError`` that
botocore gave up on or does not retry:

================  ===========================================================  =========
kind              what                                                         retryable
================  ===========================================================  =========
``THROTTLING``    a throttling code above or HTTP 429                          yes
``CONFLICT``      DynamoDB ``TransactionConflictException``, or a cancelled    yes
                  transaction whose reasons include ``TransactionConflict``
                  (another transaction held an item; DynamoDB developer guide,
                  "Transaction conflict handling", https://docs.aws.amazon.com/
                  amazondynamodb/latest/developerguide/transaction-apis.html)
``LOST_RESPONSE`` no answer: connection closed, read or connect timeout            yes
``SERVER``        HTTP 5xx, ``InternalServerError``, ``ServiceUnavailable``          yes
``CONDITION``     ``ConditionalCheckFailedException`` or a transaction cancelled   no
                  by a ``ConditionalCheckFailed`` only: the state is not what the
                  write expected (a race, or the write's own retry after a lost
                  response: the writer compares the stored item with its own)
``CLIENT``        anything else (validation, access denied, not found)             no
================  ===========================================================  =========

What retries and what answers 503 is written once: the API answers a retryable fault
that outlived botocore's retries with 503 (``quotagov.handlers.api_errors``), a worker
leaves the message for SQS to redeliver, and ``docs/operations.md`` lists both.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionError,
    HTTPClientError,
)

if TYPE_CHECKING:
    import boto3

#: Total attempts of every call (the first and 4 retries).
MAX_ATTEMPTS = 5


def retry_config() -> Any:
    """The ``botocore.config.Config`` of every client :func:`client` and :func:`resource`
    build: standard retry mode, :data:`MAX_ATTEMPTS` attempts, 5 s to connect, 10 s to
    read. Imported when the first client is built, not at a handler's import (cold start:
    ``benchmarks/submit_path.py``)."""
    from botocore.config import Config

    return Config(
        retries={"mode": "standard", "total_max_attempts": MAX_ATTEMPTS},
        connect_timeout=5,
        read_timeout=10,
    )


#: Error codes botocore's standard mode treats as throttling (botocore
#: ``retries/standard.py``, ``ThrottledRetryableChecker``), plus Batch's 429 code.
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
    }
)

#: Error codes of a service fault (the request may succeed later).
SERVER_CODES = frozenset(
    {
        "InternalServerError",
        "InternalFailure",
        "ServiceUnavailable",
        "ServerException",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)


class AwsFault(enum.Enum):
    """What kind of failure an AWS call met (see the module table)."""

    THROTTLING = "throttling"
    CONFLICT = "conflict"
    LOST_RESPONSE = "lost response"
    SERVER = "server"
    CONDITION = "condition"
    CLIENT = "client"

    @property
    def retryable(self) -> bool:
        """True when the same request may succeed later."""
        return self not in (AwsFault.CONDITION, AwsFault.CLIENT)


def cancellation_codes(error: ClientError) -> list[str]:
    """The ``CancellationReasons[].Code`` of a cancelled DynamoDB transaction, in item
    order (``"None"`` for an item that did not fail); ``[]`` for any other error."""
    reasons = error.response.get("CancellationReasons") or []
    return [str(reason.get("Code", "None")) for reason in reasons]


def classify(error: BaseException) -> AwsFault:
    """The kind of ``error`` (a botocore ``ClientError``/``BotoCoreError``; anything
    else is ``CLIENT``)."""
    if isinstance(error, ConnectionError | HTTPClientError):
        return AwsFault.LOST_RESPONSE
    if not isinstance(error, ClientError):
        return AwsFault.CLIENT
    code = str(error.response.get("Error", {}).get("Code", ""))
    status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    if code in THROTTLING_CODES or status == 429:
        return AwsFault.THROTTLING
    if code == "TransactionConflictException":
        return AwsFault.CONFLICT
    if code == "TransactionCanceledException":
        codes = cancellation_codes(error)
        if "TransactionConflict" in codes:
            return AwsFault.CONFLICT
        if any(c in ("ThrottlingError", "ProvisionedThroughputExceeded") for c in codes):
            return AwsFault.THROTTLING
        if "ConditionalCheckFailed" in codes:
            return AwsFault.CONDITION
        return AwsFault.CLIENT
    if code == "ConditionalCheckFailedException":
        return AwsFault.CONDITION
    if code in SERVER_CODES or status >= 500:
        return AwsFault.SERVER
    return AwsFault.CLIENT


def retryable(error: BaseException) -> bool:
    """True when ``error`` is an AWS failure the same request may overcome later."""
    return isinstance(error, ClientError | BotoCoreError) and classify(error).retryable


def client(service: str, session: boto3.Session | None = None) -> Any:
    """A boto3 client of ``service`` with :func:`retry_config` (default session when
    ``session`` is None, so the local runtime's botocore hooks see its calls)."""
    import boto3

    return (session or boto3).client(service, config=retry_config())  # type: ignore[call-overload]


def resource(service: str, session: boto3.Session | None = None) -> Any:
    """A boto3 resource of ``service`` with :func:`retry_config` (see :func:`client`)."""
    import boto3

    return (session or boto3).resource(service, config=retry_config())  # type: ignore[call-overload]
