"""Which resource a CloudTrail-recorded Batch call is about, and which audit chain records it.

One chain per job queue (``docs/design.md``, "Audit of policy changes"): a quota share's and a
job queue's calls go to their queue's chain; a service job's to the chain of the queue
``DescribeServiceJob`` names; scheduling policies and service environments to the
governed queue's chain.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quotagov.batch_semantics import queue_name
from quotagov.governance.audit.cloudtrail_calls import CloudTrailApiCall
from quotagov.governance.audit.errors import AuditEventError
from quotagov.governance.ports import BatchNotFoundError, BatchPort


def _name_from(reference: str, kind: str) -> str:
    marker = f":{kind}/"
    if reference.startswith("arn:") and marker in reference:
        return reference.split(marker, 1)[1]
    return reference


@dataclass(frozen=True)
class Target:
    """What a call is about.

    Attributes:
        type: ``quota-share``, ``scheduling-policy``, ``job-queue``,
            ``service-environment`` or ``service-job``.
        name: the resource name (job id for a service job).
        key: the last known configuration key: the ARN, or ``service-job/<jobId>``.
        chain: the job queue (name) whose chain records the call.
        quota_share: the quota share of a service job, when known.
    """

    type: str
    name: str
    key: str
    chain: str
    quota_share: str | None = None

    def as_record(self) -> dict[str, Any]:
        """The ``resource`` field of a record."""
        out: dict[str, Any] = {"type": self.type, "name": self.name, "arn": self.key}
        if self.quota_share:
            out["quotaShareName"] = self.quota_share
        return out


def _parameter_reader(call: CloudTrailApiCall) -> Callable[[str], str]:
    """``need(name)``: the call's string request parameter ``name``.

    A failed call may lack it (``"(not given)"``); a successful one may not.

    Raises:
        AuditEventError: from ``need``, for a successful call without the parameter.
    """
    params = call.parameters

    def need(name: str) -> str:
        value = params.get(name)
        if isinstance(value, str) and value:
            return value
        if call.failed:
            return "(not given)"
        raise AuditEventError(f"detail.requestParameters.{name}: missing in {call.eventName}")

    return need


class TargetResolver:
    """Finds the :class:`Target` of a call.

    Args:
        batch: ``DescribeServiceJob``, for the queue and share of a service job.
        governed_queue: the governed job queue's name (the default chain).
    """

    def __init__(self, batch: BatchPort, governed_queue: str) -> None:
        self._batch = batch
        self.governed_queue = governed_queue

    def target(self, call: CloudTrailApiCall) -> Target:
        """The resource ``call`` is about, and its chain.

        Raises:
            AuditEventError: a successful call lacks the parameter naming its resource.
            BatchError: ``DescribeServiceJob`` failed for a reason other than an unknown job.
        """
        need = _parameter_reader(call)
        prefix = f"arn:{call.partition}:batch:{call.awsRegion}:{call.account}"
        event = call.eventName
        create = event.startswith("Create")
        governed = self.governed_queue
        if event.endswith("QuotaShare"):
            return self._quota_share_target(call, need, prefix)
        if event.endswith("SchedulingPolicy"):
            name = _name_from(need("name") if create else need("arn"), "scheduling-policy")
            return Target("scheduling-policy", name, f"{prefix}:scheduling-policy/{name}", governed)
        if event.endswith("JobQueue"):
            name = queue_name(need("jobQueueName") if create else need("jobQueue"))
            return Target("job-queue", name, f"{prefix}:job-queue/{name}", name)
        if event.endswith("ServiceEnvironment"):
            ref = need("serviceEnvironmentName") if create else need("serviceEnvironment")
            name = _name_from(ref, "service-environment")
            key = f"{prefix}:service-environment/{name}"
            return Target("service-environment", name, key, governed)
        if event in ("UpdateServiceJob", "TerminateServiceJob"):
            return self._service_job_target(_name_from(need("jobId"), "service-job"))
        if event == "SubmitServiceJob":
            return self._submitted_target(call, need)
        raise AuditEventError(f"detail.eventName: {event!r} is not an audited Batch call")

    def _quota_share_target(
        self, call: CloudTrailApiCall, need: Callable[[str], str], prefix: str
    ) -> Target:
        """A quota share: named by ``quotaShareName`` + ``jobQueue`` or by its ARN."""
        if call.eventName == "CreateQuotaShare":
            share, queue = need("quotaShareName"), queue_name(need("jobQueue"))
        else:
            arn = need("quotaShareArn")
            queue = queue_name(arn)
            share = arn.rsplit("/quota-share/", 1)[-1]
            if not queue or "/quota-share/" not in arn:
                if not call.failed:
                    raise AuditEventError(
                        f"detail.requestParameters.quotaShareArn: {arn!r} is not a quota share ARN"
                    )
                queue = self.governed_queue
        key = f"{prefix}:job-queue/{queue}/quota-share/{share}"
        return Target("quota-share", share, key, queue or self.governed_queue)

    def _submitted_target(self, call: CloudTrailApiCall, need: Callable[[str], str]) -> Target:
        """A submitted service job: the chain of the queue it was submitted to; its id
        from ``responseElements.jobId`` (absent for a failed call)."""
        chain = queue_name(need("jobQueue")) or self.governed_queue
        answer = call.responseElements or {}
        job_id = str(answer.get("jobId") or "(not created)")
        share = call.parameters.get("quotaShareName")
        return Target(
            "service-job",
            job_id,
            f"service-job/{job_id}",
            chain,
            share if isinstance(share, str) and share else None,
        )

    def _service_job_target(self, job_id: str) -> Target:
        """A service job: its chain is its queue's, its share from ``DescribeServiceJob``."""
        chain, share = self.governed_queue, ""
        if job_id != "(not given)":
            try:
                job = self._batch.describe_service_job(jobId=job_id)
                chain = queue_name(str(job.get("jobQueue") or self.governed_queue))
                share = str(job.get("quotaShareName") or "")
            except BatchNotFoundError:
                pass
        return Target("service-job", job_id, f"service-job/{job_id}", chain, share or None)
