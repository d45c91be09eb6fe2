"""The service-job operations of the simulated Batch: submit, update, terminate, describe, list.

Rules (AWS Batch User Guide, "AWS Batch service quotas",
https://docs.aws.amazon.com/batch/latest/userguide/service_limits.html, and "Jobs stuck
in RUNNABLE due to misconfiguration",
https://docs.aws.amazon.com/batch/latest/userguide/sm_job_stuck_in_runnable_misconfiguration.html;
AWS Batch API Reference, "SubmitServiceJob" to "ListServiceJobs",
https://docs.aws.amazon.com/batch/latest/APIReference/API_SubmitServiceJob.html): see
:mod:`.checks` for the request values refused; a job whose instance type its share (or
the service environment) cannot provide is accepted and held RUNNABLE with the
``MISCONFIGURATION:...`` statusReason
(:func:`~quotagov_tools.simbatch.reasons.misconfiguration_reason`).

Choices where AWS is silent or vague, documented here once:

- ``UpdateServiceJob`` and ``TerminateServiceJob`` on a SUCCEEDED or FAILED job raise
  ``ClientException`` (AWS does not say).
- ``clientToken`` (the API Reference says only that such a request is "rejected"): the
  same token with an identical request returns the
  first call's response and creates nothing; with a different request it raises
  ``ClientException``. Tokens are remembered for the simulated Batch's lifetime,
  account-wide.
- Listing order and tokens: :mod:`.listing`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from quotagov.scheduler import InvalidConfigError, JobSpec
from quotagov_tools.simbatch import arns
from quotagov_tools.simbatch.checks import check_job_fields, check_priority, quota_share_for_job
from quotagov_tools.simbatch.core import BackendCore
from quotagov_tools.simbatch.errors import client_error
from quotagov_tools.simbatch.listing import max_results, newest_first_page, select_jobs
from quotagov_tools.simbatch.payload import (
    PayloadError,
    TrainingRequest,
    parse_training_request,
)
from quotagov_tools.simbatch.reasons import misconfiguration_reason
from quotagov_tools.simbatch.records import JobQueueState, QuotaShareRecord, ServiceJob
from quotagov_tools.simbatch.responses import describe_service_job, service_job_summary


class ServiceJobOperations(BackendCore):
    """The service-job operations: Submit, Update, Terminate, Describe and List ``ServiceJob(s)``.

    Each raises :class:`~quotagov.governance.ports.BatchNotFoundError` for an unknown
    job queue, quota share or job and :class:`~quotagov.governance.ports.BatchClientError`
    (``ClientException``) for a request Batch refuses.
    """

    def submit_service_job(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``SubmitServiceJob``; returns ``{jobArn, jobName, jobId}`` (see the module rules).

        Raises:
            BatchNotFoundError: unknown job queue or quota share.
            BatchClientError: the share checks (:func:`.checks.quota_share_for_job`),
                the field checks (:func:`.checks.check_job_fields`), a bad payload, a
                ``clientToken`` reused with another request, an engine refusal.
        """
        op = "SubmitServiceJob"
        token = request.get("clientToken")
        body = {k: v for k, v in request.items() if k != "clientToken"}
        fingerprint = json.dumps(body, sort_keys=True, default=str)
        replayed = self._replayed(op, token, fingerprint)
        if replayed is not None:
            return replayed
        queue = self.find_queue(op, request["jobQueue"])
        share = queue.shares[quota_share_for_job(op, queue, request)]
        check_job_fields(op, request)
        training = self._training_request(op, request)
        engine = self._engine(queue)
        job = self._new_job(queue, share, body, training)
        try:
            transitions = engine.submit(_job_spec(job))
        except InvalidConfigError as exc:
            raise client_error(op, "; ".join(exc.faults)) from exc
        self.jobs[job.job_id] = job
        self._apply(transitions)
        response = _identity(job)
        if token is not None:
            self._tokens[token] = (fingerprint, dict(response))
        return response

    def update_service_job(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``UpdateServiceJob``: new ``schedulingPriority`` (0-9999) for an unfinished job."""
        op = "UpdateServiceJob"
        job = self.find_job(op, request["jobId"])
        priority = request["schedulingPriority"]
        check_priority(op, priority)
        if job.terminal:
            raise client_error(
                op, f"Job {job.job_id} is {job.status}; a finished job cannot be updated."
            )
        engine = self._engine(self.queues[job.queue_name])
        engine.update_priority(job.job_id, priority)
        job.scheduling_priority = priority
        return _identity(job)

    def terminate_service_job(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``TerminateServiceJob``: the job becomes FAILED with ``reason`` as statusReason."""
        op = "TerminateServiceJob"
        job = self.find_job(op, request["jobId"])
        if job.terminal:
            raise client_error(
                op, f"Job {job.job_id} is already {job.status}; it cannot be terminated."
            )
        self._terminate(self.queues[job.queue_name], job, request["reason"])
        return {}

    def describe_service_job(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``DescribeServiceJob`` (a jobId or a service-job ARN)."""
        return describe_service_job(self.find_job("DescribeServiceJob", request["jobId"]))

    def list_service_jobs(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``ListServiceJobs`` with Batch's filter semantics (see :mod:`.listing`)."""
        op = "ListServiceJobs"
        size = max_results(op, request)
        jobs = list(self.jobs.values())
        if "jobQueue" in request:
            queue = self.find_queue(op, request["jobQueue"])
            jobs = [j for j in jobs if j.queue_name == queue.name]
        page, token = newest_first_page(op, select_jobs(op, jobs, request), request, size)
        out: dict[str, Any] = {"jobSummaryList": [service_job_summary(j) for j in page]}
        if token is not None:
            out["nextToken"] = token
        return out

    # -- helpers ---------------------------------------------------------------------

    def _replayed(
        self, operation: str, token: str | None, fingerprint: str
    ) -> dict[str, Any] | None:
        """The first response of a repeated ``clientToken``; None for a new token or none.

        Raises:
            BatchClientError: the token was used with a different request.
        """
        if token is None or token not in self._tokens:
            return None
        seen, response = self._tokens[token]
        if seen != fingerprint:
            raise client_error(
                operation, f"clientToken {token!r} was already used with a different request."
            )
        return dict(response)

    def _training_request(self, operation: str, request: Mapping[str, Any]) -> TrainingRequest:
        try:
            return parse_training_request(
                request,
                default_checkpoint_interval_seconds=self.default_checkpoint_interval_seconds,
            )
        except PayloadError as exc:
            raise client_error(operation, str(exc)) from exc

    def _new_job(
        self,
        queue: JobQueueState,
        share: QuotaShareRecord,
        body: dict[str, Any],
        training: TrainingRequest,
    ) -> ServiceJob:
        """A new job of ``share`` (a fresh id and the next submission number), not yet stored."""
        job_id = self.ids.uuid4()
        self._seq += 1
        job = ServiceJob(
            job_id=job_id,
            job_name=body["jobName"],
            job_arn=arns.service_job_arn(self.region, self.account, job_id),
            queue_name=queue.name,
            queue_arn=queue.arn,
            request=copy.deepcopy(body),
            training=training,
            seq=self._seq,
            created_at=self.now_ms(),
            scheduling_priority=int(body.get("schedulingPriority", 0)),
            quota_share_name=share.name,
        )
        job.misconfiguration = misconfiguration_reason(queue, share, training)
        return job


def _job_spec(job: ServiceJob) -> JobSpec:
    """What the engine schedules for ``job``; the engine knows it under its jobId."""
    training = job.training
    return JobSpec(
        jobName=job.job_id,
        quotaShareName=job.quota_share_name,
        instanceType=training.instance_type,
        instanceCount=training.instance_count,
        runSeconds=training.run_seconds,
        schedulingPriority=job.scheduling_priority,
        preemptionRetriesBeforeTermination=job.preemption_retries,
        checkpointIntervalSeconds=training.checkpoint_interval_seconds,
        restartOverheadSeconds=training.restart_overhead_seconds,
    )


def _identity(job: ServiceJob) -> dict[str, Any]:
    """``{jobArn, jobName, jobId}``: the Submit and Update responses."""
    return {"jobArn": job.job_arn, "jobName": job.job_name, "jobId": job.job_id}
