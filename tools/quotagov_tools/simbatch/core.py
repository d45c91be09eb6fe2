"""The simulated Batch's state, its time, and how the engine's transitions change the jobs.

:class:`BackendCore` holds what every operation shares: the job queues (each with its
service environment and one :class:`quotagov.scheduler.Engine`), the service jobs,
the ``clientToken`` memory and the state-change events not yet collected. The
operations themselves are mixins on it (:mod:`.quota_shares`, :mod:`.service_jobs`),
combined in :class:`quotagov_tools.simbatch.models.SimBatchBackend`.

Time: the engine counts seconds from the simulated Batch's creation
(``engine time = clock.now() - origin``); the API reports epoch milliseconds
(``round((origin + t) * 1000)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quotagov.clock import Clock
from quotagov.scheduler import Engine, Options, ShareConfig, Transition
from quotagov.scheduler.state import REASON_RETRIES_EXHAUSTED
from quotagov_tools.simbatch import arns
from quotagov_tools.simbatch.checks import NAME
from quotagov_tools.simbatch.errors import not_found
from quotagov_tools.simbatch.ids import IdFactory
from quotagov_tools.simbatch.reasons import (
    COMPLETED_REASON,
    preempted_reason,
    retries_exhausted_reason,
)
from quotagov_tools.simbatch.records import (
    Attempt,
    JobQueueState,
    QuotaShareRecord,
    ServiceJob,
)
from quotagov_tools.simbatch.responses import state_change_event


def share_config(share: QuotaShareRecord) -> ShareConfig:
    """The scheduler's configuration of a quota share record."""
    return ShareConfig.from_batch(
        {
            "quotaShareName": share.name,
            "capacityLimits": share.capacity_limits,
            "resourceSharingConfiguration": share.resource_sharing,
            "preemptionConfiguration": share.preemption,
            "state": share.state,
        }
    )


def engine_options(options: Mapping[str, Any] | Options | None) -> Options:
    """Engine options from an :class:`~quotagov.scheduler.Options` or its keyword mapping.

    Raises:
        ValueError: a key ``Options`` does not take.
    """
    if isinstance(options, Options):
        return options
    try:
        return Options(**dict(options or {}))
    except TypeError as exc:
        raise ValueError(f"options: {exc}") from None


class BackendCore:
    """The state of the simulated Batch, its clock, and the engines' transitions applied.

    Args:
        region: AWS Region used in ARNs and events.
        account: account id used in ARNs and events.
        clock: the injectable clock (epoch seconds).
        default_checkpoint_interval_seconds: checkpoint interval of jobs whose payload
            has a ``CheckpointConfig`` and no interval hint.
        ids: where job ids and ARN suffixes come from.

    Attributes:
        origin: the clock's time at creation (engine time 0), epoch seconds.
        queues: job queues by name.
        jobs: every service job by job id, in submission order.
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
        #: ``clientToken`` -> (request fingerprint, first response).
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
        """Apply the engine's transitions to the jobs; queue one state-change event each."""
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

    # -- transitions -----------------------------------------------------------------

    def _apply_one(self, job: ServiceJob, tr: Transition) -> None:
        at = self.epoch_ms(tr.at)
        attempt = job.attempts[-1] if job.attempts else None
        open_attempt = attempt if job.holding else None
        if tr.to == "RUNNABLE":
            self._to_runnable(job, tr, at, open_attempt)
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
            self._to_failed(job, tr, at, open_attempt)
        job.status = tr.to

    def _to_runnable(
        self, job: ServiceJob, tr: Transition, at: int, open_attempt: Attempt | None
    ) -> None:
        """Queued again: after a preemption (the attempt ends), else first queued."""
        job.runnable_since = at
        if open_attempt is not None:
            self._close_preempted(job, open_attempt, tr, at)
            job.status_reason = open_attempt.status_reason
        else:
            job.status_reason = job.misconfiguration

    def _to_failed(
        self, job: ServiceJob, tr: Transition, at: int, open_attempt: Attempt | None
    ) -> None:
        """Failed: preemption retries ran out, or terminated (the reason is echoed)."""
        job.stopped_at = at
        exhausted = tr.reason == REASON_RETRIES_EXHAUSTED and not job.is_terminated
        if exhausted and open_attempt is not None:
            self._close_preempted(job, open_attempt, tr, at)
            job.status_reason = retries_exhausted_reason(
                len(job.preempted_attempts), job.preemption_retries
            )
            return
        # TerminateServiceJob (the reason is echoed) or a share refusal.
        job.status_reason = tr.reason
        if open_attempt is not None:
            open_attempt.stopped_at = at
            open_attempt.status_reason = tr.reason

    def _close_preempted(self, job: ServiceJob, attempt: Attempt, tr: Transition, at: int) -> None:
        attempt.stopped_at = at
        attempt.status_reason = preempted_reason(tr.kind, self._job_arn(tr.forJob))
        job.preempted_attempts.insert(0, attempt)

    def _job_arn(self, job_id: str | None) -> str:
        job = self.jobs.get(job_id or "")
        return job.job_arn if job is not None else str(job_id)

    def _training_job_arn(self, job: ServiceJob) -> str:
        suffix = self.ids.hex32()
        return arns.training_job_arn(
            self.region, self.account, job.training.training_job_name, suffix
        )

    # -- job queues ------------------------------------------------------------------

    def add_job_queue(
        self, name: str, capacity: Mapping[str, int], options: Mapping[str, Any] | Options | None
    ) -> str:
        """Create a quota-management job queue with its own service environment.

        Args:
            name: the queue's name (1-128 letters, digits, - or _).
            capacity: the service environment's instances per instance type.
            options: the engine's options (see :func:`engine_options`).

        Returns:
            The queue's ARN.

        Raises:
            ValueError: bad options, bad name, duplicate queue or negative capacity.
        """
        opts = engine_options(options)
        if not NAME.match(name):
            raise ValueError(f"job_queue: {name!r} must be 1-128 letters, digits, - or _")
        if name in self.queues:
            raise ValueError(f"job_queue: {name!r} already exists")
        for unit, count in capacity.items():
            if int(count) < 0:
                raise ValueError(f"capacity[{unit!r}]: {count} is negative")
        arn = arns.job_queue_arn(self.region, self.account, name)
        self.queues[name] = JobQueueState(name, arn, {u: int(c) for u, c in capacity.items()}, opts)
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
            raise not_found(operation, f"Job queue {name_or_arn} does not exist.")
        return queue

    def _engine(self, queue: JobQueueState) -> Engine:
        """The queue's engine, built from its quota shares at the first need."""
        if queue.engine is None:
            configs = [share_config(s) for s in queue.shares.values()]
            queue.engine = Engine(queue.capacity, configs, queue.options, self.engine_time())
        return queue.engine

    # -- jobs ------------------------------------------------------------------------

    def find_job(self, operation: str, job_id: str) -> ServiceJob:
        """The job with id ``job_id`` (a jobId or a service-job ARN).

        Raises:
            BatchNotFoundError: no such job.
        """
        job = self.jobs.get(arns.job_id_of(job_id))
        if job is None:
            raise not_found(operation, f"Job {job_id} does not exist.")
        return job

    def _terminate(self, queue: JobQueueState, job: ServiceJob, reason: str) -> None:
        """End ``job`` now: FAILED, ``isTerminated``, ``reason`` as its statusReason."""
        job.is_terminated = True
        self._apply(self._engine(queue).terminate(job.job_id, reason))
