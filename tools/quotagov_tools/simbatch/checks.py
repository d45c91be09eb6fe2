"""Checks of request values the botocore model does not express (the API's own rules).

Requests reach the backend already checked against botocore's ``batch`` model
(types, required members, enums). What is checked here is what the model leaves to
the service; each check raises a ``ClientException``
(:class:`~quotagov.governance.ports.BatchClientError`) whose message starts with the
member at fault. Sources: AWS Batch User Guide, "AWS Batch service quotas"
(https://docs.aws.amazon.com/batch/latest/userguide/service_limits.html) and "Submitting
jobs to a quota share"
(https://docs.aws.amazon.com/batch/latest/userguide/submit-job-quota-share.html); AWS Batch
API Reference, "SubmitServiceJob"
(https://docs.aws.amazon.com/batch/latest/APIReference/API_SubmitServiceJob.html) and
"CreateQuotaShare"
(https://docs.aws.amazon.com/batch/latest/APIReference/API_CreateQuotaShare.html).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from quotagov.scheduler.rules import priority_faults
from quotagov_tools.simbatch.errors import client_error, not_found
from quotagov_tools.simbatch.records import JobQueueState

#: Job queue, quota share and job names: 1-128 letters, digits, hyphens, underscores.
NAME = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def check_priority(operation: str, priority: int) -> None:
    """Refuse a ``schedulingPriority`` outside 0-9999 (the scheduler's range, as the API's)."""
    faults = priority_faults(priority, "schedulingPriority")
    if faults:
        raise client_error(operation, f"{faults[0]}.")


def check_job_fields(operation: str, request: Mapping[str, Any]) -> None:
    """Refuse a ``SubmitServiceJob`` request whose own values are out of range.

    Checked: ``jobName`` (:data:`NAME`), ``schedulingPriority`` 0-9999,
    ``retryStrategy.attempts`` 1-10, ``preemptionRetriesBeforeTermination`` >= 0,
    ``timeoutConfig.attemptDurationSeconds`` >= 1 (API Reference, ``SubmitServiceJob``).

    Raises:
        BatchClientError: naming the first member at fault.
    """
    name = request["jobName"]
    if not NAME.match(name):
        raise client_error(
            operation, f"jobName: {name!r} must be 1-128 letters, digits, hyphens or underscores."
        )
    check_priority(operation, int(request.get("schedulingPriority", 0)))
    attempts = request.get("retryStrategy", {}).get("attempts")
    if attempts is not None and not 1 <= attempts <= 10:
        raise client_error(operation, f"retryStrategy.attempts: {attempts} is outside 1-10.")
    retries = request.get("preemptionConfiguration", {}).get("preemptionRetriesBeforeTermination")
    if retries is not None and retries < 0:
        raise client_error(
            operation,
            f"preemptionConfiguration.preemptionRetriesBeforeTermination: {retries} is negative.",
        )
    timeout = request.get("timeoutConfig", {}).get("attemptDurationSeconds")
    if timeout is not None and timeout < 1:
        raise client_error(
            operation, f"timeoutConfig.attemptDurationSeconds: {timeout} is below 1."
        )


def quota_share_for_job(operation: str, queue: JobQueueState, request: Mapping[str, Any]) -> str:
    """The ``quotaShareName`` a ``SubmitServiceJob`` request may use on ``queue``.

    A quota-management queue needs ``quotaShareName`` and refuses ``shareIdentifier``
    ("Submitting jobs to a quota share"); the share must exist and be ENABLED (a DISABLED
    share accepts no new jobs, API Reference, ``CreateQuotaShare``).

    Raises:
        BatchNotFoundError: no such (live) quota share in ``queue``.
        BatchClientError: ``shareIdentifier`` sent, ``quotaShareName`` missing, or
            the share is DISABLED.
    """
    if "shareIdentifier" in request:
        raise client_error(
            operation,
            f"shareIdentifier: job queue {queue.name} uses a quota-share policy; "
            "submit with quotaShareName, not shareIdentifier.",
        )
    name = request.get("quotaShareName")
    if name is None:
        raise client_error(
            operation,
            f"quotaShareName: required for job queue {queue.name}, "
            "which uses a quota-share scheduling policy.",
        )
    share = queue.shares.get(name)
    if share is None or share.deleted:
        raise not_found(operation, f"Quota share {name} does not exist in job queue {queue.name}.")
    if share.state != "ENABLED":
        raise client_error(
            operation, f"Quota share {name} is DISABLED and does not accept new jobs."
        )
    return str(name)
