"""State and rules of the simulated Batch: queues, quota shares, service jobs, the engine.

This is the "models" half of the simulated Batch (as moto splits a service): it keeps
the resources, enforces the API's rules and drives one local scheduler
(:class:`quotagov.scheduler.Engine`) per job queue. Request dictionaries come in
already checked against the botocore model; response dictionaries are built by
:mod:`quotagov.adapters.simbatch.responses`.

Time: the engine counts seconds from the simulated Batch's creation
(``engine time = clock.now() - origin``); the API reports epoch milliseconds
(``round((origin + t) * 1000)``).

Rules and their sources (reference facts = ``shared/reference/aws-and-slack-facts.md``):

- quota-management queue: ``quotaShareName`` required, ``shareIdentifier`` refused (§1.8);
- unknown queue, quota share or job: ``ClientException`` "... does not exist";
- a DISABLED quota share accepts no new jobs (§1.6);
- ``schedulingPriority`` 0-9999, ``retryStrategy.attempts`` 1-10 (§1.2);
- ``DeleteQuotaShare`` needs a DISABLED share (§2.1);
- a job whose instance type its share (or the service environment) cannot provide is
  accepted and held RUNNABLE with the ``MISCONFIGURATION:...`` statusReason (§1.7,
  :func:`.reasons.misconfiguration_reason`).

Choices where AWS is silent or vague, made here and documented once:

- ``UpdateServiceJob`` and ``TerminateServiceJob`` on a SUCCEEDED or FAILED job raise
  ``ClientException`` (AWS does not say).
- ``clientToken`` (§2.3, VAGUE): the same token with an identical request returns the
  first call's response and creates nothing; with a different request it raises
  ``ClientException``. Tokens are remembered for the simulated Batch's lifetime,
  account-wide.
- ``DeleteQuotaShare`` terminates the share's unfinished jobs at once, with
  statusReason :data:`.reasons.SHARE_DELETED_REASON` (AWS: "eventually", text SILENT).
- Status reasons of preempted attempts and of jobs failed because preemption retries
  ran out (SILENT in AWS) are :func:`.reasons.preempted_reason` and
  :func:`.reasons.retries_exhausted_reason`.
- Listing order and ``nextToken``: :mod:`.listing`; ``GetJobQueueSnapshot``:
  :mod:`.snapshot`; request values the botocore model does not check: :mod:`.checks`.
- Quota shares must be created before the first job is submitted to their queue
  (the engine takes its shares when it is built); a deleted share can be created
  again under the same name.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from quotagov.adapters.simbatch import arns
from quotagov.adapters.simbatch.checks import (
    NAME,
    check_job_fields,
    check_priority,
    quota_share_for_job,
)
from quotagov.adapters.simbatch.errors import client_error as _client_error
from quotagov.adapters.simbatch.errors import not_found as _not_found
from quotagov.adapters.simbatch.ids import IdFactory
from quotagov.adapters.simbatch.listing import (
    max_results,
    newest_first_page,
    offset_page,
    select_jobs,
)
from quotagov.adapters.simbatch.payload import (
    PayloadError,
    parse_training_request,
)
from quotagov.adapters.simbatch.reasons import (
    COMPLETED_REASON,
    SERVICE_ENVIRONMENT_MAX_RESOURCE,
    SHARE_DELETED_REASON,
    misconfiguration_reason,
    preempted_reason,
    quota_management_limit_reason,
    retries_exhausted_reason,
)
from quotagov.adapters.simbatch.records import (
    Attempt,
    JobQueueState,
    QuotaShareRecord,
    ServiceJob,
)
from quotagov.adapters.simbatch.responses import (
    describe_service_job,
    quota_share_detail,
    service_job_summary,
    state_change_event,
)
from quotagov.adapters.simbatch.snapshot import job_queue_snapshot
from quotagov.clock import Clock
from quotagov.scheduler import (
    Engine,
    InvalidConfigError,
    JobSpec,
    Options,
    ShareConfig,
    Transition,
)
from quotagov.scheduler.rules import share_faults
from quotagov.scheduler.state import REASON_RETRIES_EXHAUSTED

__all__ = [
    "SERVICE_ENVIRONMENT_MAX_RESOURCE",
    "SHARE_DELETED_REASON",
    "IdFactory",
    "SimBatchBackend",
    "preempted_reason",
    "quota_management_limit_reason",
    "retries_exhausted_reason",
]

MAX_SHARES_PER_QUEUE = 20


def _share_config(share: QuotaShareRecord) -> ShareConfig:
    return ShareConfig.from_batch(
        {
            "quotaShareName": share.name,
            "capacityLimits": share.capacity_limits,
            "resourceSharingConfiguration": share.resource_sharing,
            "preemptionConfiguration": share.preemption,
            "state": share.state,
        }
    )


class SimBatchBackend:
    """The simulated Batch's resources and rules (no request checking, no throttling).

    Args:
        region: AWS Region used in ARNs and events.
        account: account id used in ARNs and events.
        clock: the injectable clock (epoch seconds).
        default_checkpoint_interval_seconds: checkpoint interval of jobs whose payload
            has a ``CheckpointConfig`` and no interval hint.
        ids: where job ids and ARN suffixes come from.

    Every operation raises :class:`BatchClientError` / :class:`BatchNotFoundError` with
    code ``ClientException`` for requests Batch refuses (see the module docstring).
    """

    def __init__(
        self,
        *,
        region: str,
        account: str,
        clock: Clock,
        default_checkpoint_interval_seconds: float,
        ids: IdFactory,
    ) -> None:
        self.region = region
        self.account = account
        self.clock = clock
        self.origin = clock.now()
        self.default_checkpoint_interval_seconds = default_checkpoint_interval_seconds
        self.ids = ids
        self.queues: dict[str, JobQueueState] = {}
        self.jobs: dict[str, ServiceJob] = {}
        self._tokens: dict[str, tuple[str, dict[str, Any]]] = {}
        self._seq = 0
        self._events: list[dict[str, Any]] = []

    # -- time ------------------------------------------------------------------------

    def engine_time(self) -> float:
        """Seconds since the simulated Batch was created, by its clock."""
        return max(0.0, self.clock.now() - self.origin)

    def epoch_ms(self, t: float) -> int:
        """Engine time ``t`` (seconds) as epoch milliseconds."""
        return round((self.origin + t) * 1000)

    def now_ms(self) -> int:
        """The clock's time in epoch milliseconds."""
        return round(self.clock.now() * 1000)

    # -- events ----------------------------------------------------------------------

    def sync(self, *, flush: bool = True) -> list[dict[str, Any]]:
        """Advance every queue's engine to the clock; return the events since the last sync.

        With ``flush`` a scheduling pass due at the engine's current time runs even if
        the clock has not moved; without it, that pass waits until the clock moves on
        (API calls use this, so that calls made at one instant all happen before that
        instant's pass, as in the scenario format's same-time order).
        """
        t = self.engine_time()
        for queue in self.queues.values():
            engine = queue.engine
            if engine is not None and (flush or t > engine.now):
                self._apply(engine.advance_to(max(t, engine.now)))
        events, self._events = self._events, []
        return events

    def _apply(self, transitions: list[Transition]) -> None:
        for transition in transitions:
            job = self.jobs[transition.jobName]
            self._apply_one(job, transition)
            self._events.append(
                state_change_event(
                    job,
                    event_id=self.ids.uuid4(),
                    epoch_ms=self.epoch_ms(transition.at),
                    region=self.region,
                    account=self.account,
                )
            )

    def _apply_one(self, job: ServiceJob, tr: Transition) -> None:
        at = self.epoch_ms(tr.at)
        attempt = job.attempts[-1] if job.attempts else None
        open_attempt = attempt if job.holding else None
        if tr.to == "RUNNABLE":
            job.runnable_since = at
            if open_attempt is not None:
                for_arn = self._job_arn(tr.forJob)
                open_attempt.stopped_at = at
                open_attempt.status_reason = preempted_reason(tr.kind, for_arn)
                job.preempted_attempts.insert(0, open_attempt)
                job.status_reason = open_attempt.status_reason
            else:
                job.status_reason = job.misconfiguration
        elif tr.to == "SCHEDULED":
            job.attempts.append(Attempt(self._training_job_arn(job), scheduled_at=at))
            job.scheduled_at = at
            job.status_reason = None
        elif tr.to == "RUNNING" and attempt is not None:
            attempt.started_at = at
            if job.started_at is None:
                job.started_at = at
        elif tr.to == "SUCCEEDED" and attempt is not None:
            attempt.stopped_at = at
            attempt.status_reason = COMPLETED_REASON
            job.stopped_at = at
            job.status_reason = None
        elif tr.to == "FAILED":
            job.stopped_at = at
            exhausted = tr.reason == REASON_RETRIES_EXHAUSTED and not job.is_terminated
            if exhausted and open_attempt is not None:
                open_attempt.stopped_at = at
                open_attempt.status_reason = preempted_reason(tr.kind, self._job_arn(tr.forJob))
                job.preempted_attempts.insert(0, open_attempt)
                job.status_reason = retries_exhausted_reason(
                    len(job.preempted_attempts), job.preemption_retries
                )
            else:
                # TerminateServiceJob (the reason is echoed) or a share refusal.
                job.status_reason = tr.reason
                if open_attempt is not None:
                    open_attempt.stopped_at = at
                    open_attempt.status_reason = tr.reason
        job.status = tr.to

    def _job_arn(self, job_id: str | None) -> str:
        job = self.jobs.get(job_id or "")
        return job.job_arn if job is not None else str(job_id)

    def _training_job_arn(self, job: ServiceJob) -> str:
        suffix = self.ids.hex32()
        return arns.training_job_arn(
            self.region, self.account, job.training.training_job_name, suffix
        )

    # -- job queues ------------------------------------------------------------------

    def add_job_queue(self, name: str, capacity: Mapping[str, int], options: Options) -> str:
        """Create a quota-management job queue with its own service environment.

        Raises:
            ValueError: bad name, duplicate queue or negative capacity.
        """
        if not NAME.match(name):
            raise ValueError(f"job_queue: {name!r} must be 1-128 letters, digits, - or _")
        if name in self.queues:
            raise ValueError(f"job_queue: {name!r} already exists")
        for unit, count in capacity.items():
            if int(count) < 0:
                raise ValueError(f"capacity[{unit!r}]: {count} is negative")
        arn = arns.job_queue_arn(self.region, self.account, name)
        self.queues[name] = JobQueueState(
            name, arn, {u: int(c) for u, c in capacity.items()}, options
        )
        return arn

    def find_queue(self, operation: str, name_or_arn: str) -> JobQueueState:
        """The job queue named ``name_or_arn`` (name or ARN).

        Raises:
            BatchNotFoundError: no such queue.
        """
        prefix = arns.job_queue_prefix(self.region, self.account)
        name = name_or_arn[len(prefix) :] if name_or_arn.startswith(prefix) else name_or_arn
        queue = self.queues.get(name)
        if queue is None:
            raise _not_found(operation, f"Job queue {name_or_arn} does not exist.")
        return queue

    def _engine(self, queue: JobQueueState) -> Engine:
        if queue.engine is None:
            configs = [_share_config(s) for s in queue.shares.values()]
            queue.engine = Engine(queue.capacity, configs, queue.options, self.engine_time())
        return queue.engine

    # -- quota shares ----------------------------------------------------------------

    def _find_share(self, operation: str, arn: str) -> tuple[JobQueueState, QuotaShareRecord]:
        for queue in self.queues.values():
            for share in queue.shares.values():
                if share.arn == arn and not share.deleted:
                    return queue, share
        raise _not_found(operation, f"Quota share {arn} does not exist.")

    def _check_share_config(self, operation: str, share: QuotaShareRecord) -> None:
        faults = share_faults(_share_config(share), share.name)
        if faults:
            raise _client_error(operation, "; ".join(faults))

    def create_quota_share(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``CreateQuotaShare``; returns ``{quotaShareName, quotaShareArn}``."""
        op = "CreateQuotaShare"
        queue = self.find_queue(op, request["jobQueue"])
        name = request["quotaShareName"]
        if not NAME.match(name):
            raise _client_error(
                op, f"quotaShareName: {name!r} must be 1-128 letters, digits, - or _"
            )
        existing = queue.shares.get(name)
        if existing is not None and not existing.deleted:
            raise _client_error(op, "Object already exists")
        if len(queue.live_shares()) >= MAX_SHARES_PER_QUEUE:
            raise _client_error(
                op, f"Job queue {queue.name} already has {MAX_SHARES_PER_QUEUE} quota shares"
            )
        if queue.engine is not None and existing is None:
            raise _client_error(
                op,
                "the simulated Batch cannot add a quota share to a job queue that already "
                "has jobs; create the quota shares first",
            )
        share = QuotaShareRecord(
            name=name,
            arn=arns.quota_share_arn(queue.arn, name),
            queue_name=queue.name,
            capacity_limits=copy.deepcopy(list(request["capacityLimits"])),
            resource_sharing=dict(request["resourceSharingConfiguration"]),
            preemption=dict(request["preemptionConfiguration"]),
            state=request.get("state", "ENABLED"),
            tags=dict(request.get("tags") or {}),
        )
        self._check_share_config(op, share)
        if queue.engine is not None:  # re-creating a deleted share known to the engine
            self._reconfigure_engine_share(op, queue, share)
        queue.shares[name] = share
        return {"quotaShareName": share.name, "quotaShareArn": share.arn}

    def _reconfigure_engine_share(
        self, operation: str, queue: JobQueueState, share: QuotaShareRecord
    ) -> None:
        engine = self._engine(queue)
        try:
            engine.update_share(
                share.name,
                capacityLimits=share.capacity_limits,
                resourceSharingConfiguration=share.resource_sharing,
                preemptionConfiguration=share.preemption,
                state=share.state,
            )
        except InvalidConfigError as exc:
            raise _client_error(operation, "; ".join(exc.faults)) from exc

    def update_quota_share(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``UpdateQuotaShare``: given members replace the old ones (lists replaced whole)."""
        op = "UpdateQuotaShare"
        queue, share = self._find_share(op, request["quotaShareArn"])
        updated = copy.deepcopy(share)
        if "capacityLimits" in request:
            updated.capacity_limits = copy.deepcopy(list(request["capacityLimits"]))
        if "resourceSharingConfiguration" in request:
            updated.resource_sharing = dict(request["resourceSharingConfiguration"])
        if "preemptionConfiguration" in request:
            updated.preemption = dict(request["preemptionConfiguration"])
        if "state" in request:
            updated.state = request["state"]
        self._check_share_config(op, updated)
        if queue.engine is not None:
            self._reconfigure_engine_share(op, queue, updated)
        queue.shares[share.name] = updated
        self._refresh_misconfigurations(queue)
        return {"quotaShareName": updated.name, "quotaShareArn": updated.arn}

    def describe_quota_share(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``DescribeQuotaShare``: configuration, state, status (always VALID) and tags."""
        queue, share = self._find_share("DescribeQuotaShare", request["quotaShareArn"])
        return quota_share_detail(share, queue_arn=queue.arn, with_tags=True)

    def list_quota_shares(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``ListQuotaShares``: one page, creation order, ``maxResults`` 1-100."""
        op = "ListQuotaShares"
        queue = self.find_queue(op, request["jobQueue"])
        size = max_results(op, request)
        page, token = offset_page(op, queue.live_shares(), request, size)
        out: dict[str, Any] = {
            "quotaShares": [
                quota_share_detail(s, queue_arn=queue.arn, with_tags=False) for s in page
            ]
        }
        if token is not None:
            out["nextToken"] = token
        return out

    def delete_quota_share(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``DeleteQuotaShare``: the share must be DISABLED; its unfinished jobs are terminated."""
        op = "DeleteQuotaShare"
        queue, share = self._find_share(op, request["quotaShareArn"])
        if share.state != "DISABLED":
            raise _client_error(
                op, f"Quota share {share.name} must be DISABLED before it can be deleted."
            )
        for job in self.jobs.values():
            mine = job.queue_name == queue.name and job.quota_share_name == share.name
            if mine and not job.terminal:
                self._terminate(queue, job, SHARE_DELETED_REASON)
        share.deleted = True
        return {}

    # -- service jobs ----------------------------------------------------------------

    def find_job(self, operation: str, job_id: str) -> ServiceJob:
        """The job with id ``job_id`` (a jobId or a service-job ARN).

        Raises:
            BatchNotFoundError: no such job.
        """
        job = self.jobs.get(arns.job_id_of(job_id))
        if job is None:
            raise _not_found(operation, f"Job {job_id} does not exist.")
        return job

    def submit_service_job(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``SubmitServiceJob``; returns ``{jobArn, jobName, jobId}`` (see module rules)."""
        op = "SubmitServiceJob"
        token = request.get("clientToken")
        body = {k: v for k, v in request.items() if k != "clientToken"}
        fingerprint = json.dumps(body, sort_keys=True, default=str)
        if token is not None and token in self._tokens:
            seen, response = self._tokens[token]
            if seen != fingerprint:
                raise _client_error(
                    op,
                    f"clientToken {token!r} was already used with a different request.",
                )
            return dict(response)
        queue = self.find_queue(op, request["jobQueue"])
        share_name = quota_share_for_job(op, queue, request)
        share = queue.shares[share_name]
        check_job_fields(op, request)
        try:
            training = parse_training_request(
                request,
                default_checkpoint_interval_seconds=self.default_checkpoint_interval_seconds,
            )
        except PayloadError as exc:
            raise _client_error(op, str(exc)) from exc
        engine = self._engine(queue)
        job_id = self.ids.uuid4()
        self._seq += 1
        job = ServiceJob(
            job_id=job_id,
            job_name=request["jobName"],
            job_arn=arns.service_job_arn(self.region, self.account, job_id),
            queue_name=queue.name,
            queue_arn=queue.arn,
            request=copy.deepcopy(body),
            training=training,
            seq=self._seq,
            created_at=self.now_ms(),
            scheduling_priority=int(request.get("schedulingPriority", 0)),
            quota_share_name=share_name,
        )
        job.misconfiguration = misconfiguration_reason(queue, share, training)
        spec = JobSpec(
            jobName=job_id,
            quotaShareName=share_name,
            instanceType=training.instance_type,
            instanceCount=training.instance_count,
            runSeconds=training.run_seconds,
            schedulingPriority=job.scheduling_priority,
            preemptionRetriesBeforeTermination=job.preemption_retries,
            checkpointIntervalSeconds=training.checkpoint_interval_seconds,
            restartOverheadSeconds=training.restart_overhead_seconds,
        )
        try:
            transitions = engine.submit(spec)
        except InvalidConfigError as exc:
            raise _client_error(op, "; ".join(exc.faults)) from exc
        self.jobs[job_id] = job
        self._apply(transitions)
        response = {"jobArn": job.job_arn, "jobName": job.job_name, "jobId": job.job_id}
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
            raise _client_error(
                op, f"Job {job.job_id} is {job.status}; a finished job cannot be updated."
            )
        engine = self._engine(self.queues[job.queue_name])
        engine.update_priority(job.job_id, priority)
        job.scheduling_priority = priority
        return {"jobArn": job.job_arn, "jobName": job.job_name, "jobId": job.job_id}

    def terminate_service_job(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``TerminateServiceJob``: the job becomes FAILED with ``reason`` as statusReason."""
        op = "TerminateServiceJob"
        job = self.find_job(op, request["jobId"])
        if job.terminal:
            raise _client_error(
                op, f"Job {job.job_id} is already {job.status}; it cannot be terminated."
            )
        self._terminate(self.queues[job.queue_name], job, request["reason"])
        return {}

    def _terminate(self, queue: JobQueueState, job: ServiceJob, reason: str) -> None:
        job.is_terminated = True
        self._apply(self._engine(queue).terminate(job.job_id, reason))

    def describe_service_job(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``DescribeServiceJob``."""
        return describe_service_job(self.find_job("DescribeServiceJob", request["jobId"]))

    def list_service_jobs(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``ListServiceJobs`` with Batch's filter semantics (reference facts §2.6)."""
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

    # -- snapshot --------------------------------------------------------------------

    def get_job_queue_snapshot(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``GetJobQueueSnapshot`` from the engine's queues and usage (reference facts §2.7)."""
        queue = self.find_queue("GetJobQueueSnapshot", request["jobQueue"])
        return job_queue_snapshot(queue, self.jobs, self.now_ms())

    def _refresh_misconfigurations(self, queue: JobQueueState) -> None:
        for job in self.jobs.values():
            if job.queue_name != queue.name or job.status != "RUNNABLE":
                continue
            share = queue.shares[job.quota_share_name]
            before = job.misconfiguration
            job.misconfiguration = misconfiguration_reason(queue, share, job.training)
            if job.status_reason == before:
                job.status_reason = job.misconfiguration
