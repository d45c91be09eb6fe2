"""The simulated AWS Batch: the Batch port backed by the local scheduler, with a clock.

:class:`SimulatedBatch` accepts the same request dictionaries as boto3's ``batch``
client and returns the same response dictionaries (UUID job ids, real ARN formats,
epoch milliseconds, ``capacityUsage``, ``preemptionSummary``, ``quotaShareName``),
raises the port's errors for requests Batch refuses, can throttle above a rate, and
emits ``Batch Service Job State Change`` events with the real EventBridge envelope.
The rules and the choices made where AWS is silent are documented in the modules
:mod:`quotagov_tools.simbatch.models` lists (one per concern); the simulation
hints (how long a job runs, its checkpoint interval) in
:mod:`quotagov_tools.simbatch.payload`.

Driving it::

    clock = ManualClock(1_780_000_000)
    batch = SimulatedBatch(
        capacity={"ml.g5.xlarge": 3},
        shares=[{"quotaShareName": "background",
                 "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
                 "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW"},
                 "preemptionConfiguration": {"inSharePreemption": "ENABLED"}}],
        clock=clock,
    )
    batch.subscribe(events.append)          # plain callables get every envelope
    job = batch.submit_service_job(jobName="bg-1", jobQueue="quotagov-queue", ...)
    batch.advance(600)                      # move the ManualClock and deliver events
    batch.describe_service_job(jobId=job["jobId"])

Every API call first brings the scheduler up to the clock, so with the system clock
the simulated Batch runs in real time; with a :class:`~quotagov.clock.ManualClock` it
moves only when the clock does. Calls made at one clock instant all take effect
before that instant's scheduling pass, which runs when the clock moves on or on
:meth:`SimulatedBatch.sync` (so a job submitted at ``t`` is RUNNABLE until then, and
same-time submissions are ordered as in ``docs/simulator/spec.md``).

Fidelity is checked: with ``check_model=True`` (the default) every request is
checked against botocore's ``batch`` model before it is handled (a fault raises
:class:`BatchClientError` with code ``ParamValidationError``, like boto3's client-side
check) and every response after (a fault raises
:class:`~quotagov.adapters.batch_model.BatchModelError`: a bug here, not in the caller).
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from quotagov.adapters.batch_model import request_faults, validate_response
from quotagov.clock import Clock, ManualClock, SystemClock
from quotagov.governance.ports import BatchClientError, BatchPort
from quotagov.policy.models import Policy
from quotagov.scheduler import Engine, Options, load_scenario
from quotagov_tools.simbatch.arns import split_job_queue_arn
from quotagov_tools.simbatch.faults import FaultInjector
from quotagov_tools.simbatch.models import IdFactory, SimBatchBackend

logger = logging.getLogger(__name__)

#: Name of the job queue a :class:`SimulatedBatch` creates when none is given.
DEFAULT_JOB_QUEUE = "quotagov-queue"
#: Checkpoint interval of a job with ``CheckpointConfig`` and no interval hint (seconds).
DEFAULT_CHECKPOINT_INTERVAL_SECONDS = 600.0

EventSubscriber = Callable[[dict[str, Any]], object]


def _queue_identity(
    job_queue: str, region: str | None, account: str | None
) -> tuple[str, str, str]:
    """(queue name, Region, account) from a queue name or ARN and the explicit values."""
    parts = split_job_queue_arn(job_queue)
    if parts is None:
        return job_queue, region or "eu-west-1", account or "111122223333"
    arn_region, arn_account, name = parts
    if (region or arn_region) != arn_region or (account or arn_account) != arn_account:
        raise ValueError(
            f"job_queue: {job_queue} does not match region={region!r}, account={account!r}"
        )
    return name, arn_region, arn_account


class SimulatedBatch:
    """:class:`~quotagov.governance.ports.BatchPort` backed by :class:`quotagov.scheduler.Engine`.

    Args:
        capacity: the service environment's instances per instance type of
            ``job_queue``, e.g. ``{"ml.g5.xlarge": 3}``.
        shares: ``CreateQuotaShare`` requests for ``job_queue`` (``jobQueue`` may be
            left out); created in order, checked like any request.
        job_queue: name or ARN of the quota-management job queue to create; an ARN
            also gives the Region and account.
        region: Region in ARNs and events (default: from the ARN, else eu-west-1).
        account: account id in ARNs and events (default: from the ARN, else
            111122223333).
        clock: the clock (epoch seconds); default the system clock.
        options: engine options, ``{"startupSeconds": 0, "queueing": "STRICT_FIFO"}``
            by default (see :class:`quotagov.scheduler.Options`).
        default_checkpoint_interval_seconds: interval for jobs whose payload has a
            ``CheckpointConfig`` but no ``quotagov:simCheckpointIntervalSeconds`` hint.
        seed: makes job ids, event ids and training-job suffixes reproducible.
        check_model: check every request and response against botocore's model.

    Raises:
        BatchClientError: a share request in ``shares`` is refused.
        ValueError: bad queue name or capacity, or bad options.
    """

    def __init__(
        self,
        *,
        capacity: Mapping[str, int],
        shares: Iterable[Mapping[str, Any]] = (),
        job_queue: str = DEFAULT_JOB_QUEUE,
        region: str | None = None,
        account: str | None = None,
        clock: Clock | None = None,
        options: Mapping[str, Any] | Options | None = None,
        default_checkpoint_interval_seconds: float = DEFAULT_CHECKPOINT_INTERVAL_SECONDS,
        seed: int | None = None,
        check_model: bool = True,
    ) -> None:
        self.clock: Clock = clock or SystemClock()
        self.check_model = check_model
        queue_name, region, account = _queue_identity(job_queue, region, account)
        self._backend = SimBatchBackend(
            region=region,
            account=account,
            clock=self.clock,
            default_checkpoint_interval_seconds=default_checkpoint_interval_seconds,
            ids=IdFactory(seed),
        )
        self._lock = threading.RLock()
        self._subscribers: list[EventSubscriber] = []
        self._faults = FaultInjector(self.clock)
        #: Every event emitted so far, in order.
        self.events: list[dict[str, Any]] = []
        #: Every call received, as ``(operation, request)``, in order (for tests).
        self.requests: list[tuple[str, dict[str, Any]]] = []
        #: ``(event, exception)`` for each subscriber that raised; delivery goes on.
        self.delivery_failures: list[tuple[dict[str, Any], Exception]] = []
        self.job_queue_arn = self.add_job_queue(queue_name, capacity=capacity, options=options)
        for share in shares:
            self.create_quota_share(**{"jobQueue": queue_name, **share})

    @classmethod
    def from_policy(
        cls, policy: Policy, *, capacity: Mapping[str, int], **kwargs: Any
    ) -> SimulatedBatch:
        """A simulated Batch with the policy's job queue (name or ARN) and quota shares.

        ``capacity`` is the service environment's instances per instance type; other
        keyword arguments are the constructor's (``clock``, ``options``, ``seed``...).
        """
        return cls(
            capacity=capacity,
            job_queue=policy.jobQueue,
            shares=[share.to_create_request(policy.jobQueue) for share in policy.quotaShares],
            **kwargs,
        )

    @classmethod
    def from_scenario(cls, source: str | Mapping[str, Any], **kwargs: Any) -> SimulatedBatch:
        """A simulated Batch with a scenario's capacity, quota shares and options.

        ``source`` is what :func:`quotagov.scheduler.load_scenario` takes (a path, JSON
        or YAML text, or a mapping); its jobs and actions are not submitted.

        Raises:
            quotagov.scheduler.ScenarioError: the scenario is invalid.
        """
        scenario = load_scenario(source)
        return cls(
            capacity=scenario.capacity,
            shares=[config.to_batch() for config in scenario.shares],
            options=scenario.options,
            **kwargs,
        )

    # -- set-up ----------------------------------------------------------------------

    def add_job_queue(
        self,
        name: str,
        *,
        capacity: Mapping[str, int],
        options: Mapping[str, Any] | Options | None = None,
    ) -> str:
        """Create another quota-management job queue with its own service environment.

        Returns:
            The queue's ARN.

        Raises:
            ValueError: bad name, existing queue, negative capacity or bad options.
        """
        with self._lock:
            return self._backend.add_job_queue(name, capacity, options)

    def engine(self, job_queue: str = DEFAULT_JOB_QUEUE) -> Engine | None:
        """The scheduler behind ``job_queue`` (None before its first job), synced to the clock.

        The engine knows each service job under its ``jobId``. Use ``engine.fork()`` for
        what-if runs; do not mutate the engine itself.
        """
        with self._lock:
            events = self._backend.sync()
            engine = self._backend.find_queue("engine", job_queue).engine
        self._deliver(events)
        return engine

    # -- events, clock ---------------------------------------------------------------

    def subscribe(self, subscriber: EventSubscriber) -> Callable[[], None]:
        """Call ``subscriber(envelope)`` for every state-change event; returns an unsubscribe.

        Envelopes are delivered after the call that caused them has finished its
        changes, in the order they happened; a subscriber may call this Batch again.
        A subscriber that raises does not stop delivery (see :attr:`delivery_failures`).
        """
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def sync(self) -> list[dict[str, Any]]:
        """Bring the scheduler up to the clock; deliver and return the new events."""
        with self._lock:
            events = self._backend.sync()
        self._deliver(events)
        return events

    def advance(self, seconds: float) -> list[dict[str, Any]]:
        """Move a :class:`~quotagov.clock.ManualClock` forward by ``seconds`` and :meth:`sync`.

        Raises:
            TypeError: the clock is not a ManualClock.
            ValueError: ``seconds`` is negative.
        """
        if not isinstance(self.clock, ManualClock):
            raise TypeError("advance() needs a ManualClock; with other clocks call sync()")
        self.clock.advance(seconds)
        return self.sync()

    def _deliver(self, events: list[dict[str, Any]]) -> None:
        if not events:
            return
        with self._lock:
            self.events.extend(events)
            subscribers = list(self._subscribers)
        for event in events:
            for subscriber in subscribers:
                try:
                    subscriber(copy.deepcopy(event))
                except Exception as exc:  # an EventBridge target failing never fails Batch
                    logger.exception("event subscriber %r failed", subscriber)
                    self.delivery_failures.append((event, exc))

    # -- fault injection -------------------------------------------------------------

    def throttle_above(
        self,
        rate_per_second: float | None,
        *,
        burst: float | None = None,
        operations: Iterable[str] | None = None,
    ) -> None:
        """Answer ``TooManyRequestsException`` to calls above ``rate_per_second``.

        Each operation has its own token bucket of ``burst`` calls (default: the rate,
        at least 1) refilled at ``rate_per_second`` per **clock second** (the injected
        clock's, so a ManualClock test of 300 submissions at 5 per virtual second runs
        at once). A throttled call changes nothing and raises
        :class:`BatchThrottledError`. Batch's documented ceiling is 5 TPS for
        ``SubmitServiceJob`` (AWS Batch User Guide, "AWS Batch service quotas",
        https://docs.aws.amazon.com/batch/latest/userguide/service_limits.html).

        Args:
            rate_per_second: calls per clock second; None switches throttling off.
            burst: bucket size.
            operations: operation names to throttle (default: every operation).
        """
        with self._lock:
            self._faults.throttle_above(rate_per_second, burst=burst, operations=operations)

    def fail_next(
        self,
        operation: str,
        *,
        code: str = "ServerException",
        message: str = "Internal server error (injected)",
        status: int | None = None,
        times: int = 1,
    ) -> None:
        """Make the next ``times`` calls of ``operation`` fail with ``code`` before any change.

        The failure goes through the same mapping as the boto3 adapter
        (:func:`~quotagov.adapters.batch_boto3.map_client_error`): ``ServerException``
        or a 5xx ``status`` -> :class:`BatchServerError`, ``TooManyRequestsException``
        or 429 -> :class:`BatchThrottledError`, ``ClientException`` ->
        :class:`BatchClientError` (or ``BatchNotFoundError`` for a not-found message).
        """
        with self._lock:
            self._faults.fail_next(
                operation, code=code, message=message, status=status, times=times
            )

    # -- the API ---------------------------------------------------------------------

    def _call(
        self,
        operation: str,
        request: dict[str, Any],
        handler: Callable[[Mapping[str, Any]], dict[str, Any]],
    ) -> dict[str, Any]:
        with self._lock:
            self.requests.append((operation, copy.deepcopy(request)))
            self._faults.admit(operation)
            if self.check_model:
                faults = request_faults(operation, request)
                if faults:
                    raise BatchClientError(
                        operation,
                        "ParamValidationError",
                        "Parameter validation failed: " + "; ".join(faults),
                    )
            events = self._backend.sync(flush=False)
            try:
                response = handler(copy.deepcopy(request))
            finally:
                events += self._backend.sync(flush=False)
            if self.check_model:
                validate_response(operation, response)
        self._deliver(events)
        return response

    def submit_service_job(self, **request: Any) -> dict[str, Any]:
        """``SubmitServiceJob``; returns ``{jobArn, jobName, jobId}``.

        Raises:
            BatchNotFoundError: unknown job queue or quota share.
            BatchClientError: missing ``quotaShareName``, ``shareIdentifier`` on the
                quota queue, DISABLED share, priority outside 0-9999, bad payload,
                reused ``clientToken`` with another request, model violations.
            BatchThrottledError: above the configured rate.
        """
        return self._call("SubmitServiceJob", request, self._backend.submit_service_job)

    def update_service_job(self, *, jobId: str, schedulingPriority: int) -> dict[str, Any]:
        """``UpdateServiceJob`` (0-9999, job not finished); returns ``{jobArn, jobName, jobId}``."""
        request = {"jobId": jobId, "schedulingPriority": schedulingPriority}
        return self._call("UpdateServiceJob", request, self._backend.update_service_job)

    def describe_service_job(self, *, jobId: str) -> dict[str, Any]:
        """``DescribeServiceJob``; raises :class:`BatchNotFoundError` for an unknown job."""
        return self._call(
            "DescribeServiceJob", {"jobId": jobId}, self._backend.describe_service_job
        )

    def list_service_jobs(self, **request: Any) -> dict[str, Any]:
        """``ListServiceJobs`` (one page); no status and no filter lists only RUNNING jobs."""
        return self._call("ListServiceJobs", request, self._backend.list_service_jobs)

    def terminate_service_job(self, *, jobId: str, reason: str) -> dict[str, Any]:
        """``TerminateServiceJob``: FAILED with ``reason``, ``isTerminated``; returns ``{}``."""
        request = {"jobId": jobId, "reason": reason}
        return self._call("TerminateServiceJob", request, self._backend.terminate_service_job)

    def get_job_queue_snapshot(self, *, jobQueue: str) -> dict[str, Any]:
        """``GetJobQueueSnapshot``: front of the queue and of each quota share, utilization."""
        return self._call(
            "GetJobQueueSnapshot", {"jobQueue": jobQueue}, self._backend.get_job_queue_snapshot
        )

    def describe_job_queues(self, **request: Any) -> dict[str, Any]:
        """``DescribeJobQueues``: each queue with its one service environment."""
        return self._call("DescribeJobQueues", request, self._backend.describe_job_queues)

    def describe_service_environments(self, **request: Any) -> dict[str, Any]:
        """``DescribeServiceEnvironments``: each queue's environment and its capacity."""
        return self._call(
            "DescribeServiceEnvironments", request, self._backend.describe_service_environments
        )

    def create_quota_share(self, **request: Any) -> dict[str, Any]:
        """``CreateQuotaShare``; returns ``{quotaShareName, quotaShareArn}``."""
        return self._call("CreateQuotaShare", request, self._backend.create_quota_share)

    def update_quota_share(self, **request: Any) -> dict[str, Any]:
        """``UpdateQuotaShare``; returns ``{quotaShareName, quotaShareArn}``."""
        return self._call("UpdateQuotaShare", request, self._backend.update_quota_share)

    def describe_quota_share(self, *, quotaShareArn: str) -> dict[str, Any]:
        """``DescribeQuotaShare``."""
        return self._call(
            "DescribeQuotaShare",
            {"quotaShareArn": quotaShareArn},
            self._backend.describe_quota_share,
        )

    def list_quota_shares(self, **request: Any) -> dict[str, Any]:
        """``ListQuotaShares`` (one page)."""
        return self._call("ListQuotaShares", request, self._backend.list_quota_shares)

    def delete_quota_share(self, *, quotaShareArn: str) -> dict[str, Any]:
        """``DeleteQuotaShare``; the share must be DISABLED; its jobs are terminated."""
        return self._call(
            "DeleteQuotaShare", {"quotaShareArn": quotaShareArn}, self._backend.delete_quota_share
        )


if TYPE_CHECKING:  # mypy checks that the simulated Batch satisfies the port

    def _is_a_batch_port(batch: SimulatedBatch) -> BatchPort:
        return batch
