"""Impact preview: what raising a job's ``schedulingPriority`` would do right now.

Steps (the impact preview of ``docs/design.md``, "Priority-escalation approvals in
Slack"):

1. Read the governed queue's current state through the Batch port:
   ``ListServiceJobs`` for RUNNABLE, SCHEDULED, STARTING and RUNNING jobs (every
   page, the first :data:`MAX_PREVIEW_JOBS` jobs), ``DescribeServiceJob`` for each
   one's ``schedulingPriority`` (summaries do not carry it), and
   ``GetJobQueueSnapshot`` for Batch's own dispatch order of RUNNABLE jobs; and
   quotagov's job records for the checkpoint interval of each started job (only
   started jobs can be preempted). Reads run on :data:`PREVIEW_READ_WORKERS`
   threads, so the preview stays well inside API Gateway's 29 s for hundreds of
   jobs.
2. Rebuild that state in the local scheduler (:class:`quotagov.scheduler.Engine`,
   semantics in ``docs/simulator/spec.md``): started jobs are replayed in the order
   they started, each at its ``startedAt``, with unknown remaining time
   (``runSeconds=None``), so their unsaved work at ``now`` follows from ``startedAt``
   and their checkpoint interval; then the RUNNABLE jobs are submitted at ``now`` in
   Batch's dispatch order (jobs not in it after those that are, by ``createdAt``).
   Jobs without a capacity unit, or in a share the policy does not name, are left
   out.
3. Fork it twice at ``now``: one copy unchanged, one with the priority raised; run
   the scheduling pass of each at the same instant and compare. Preemptions that
   happen in both copies are not caused by the raise.

Modelling choices (AWS does not document these): the service
environment's capacity per instance type is taken as the sum of the quota shares'
limits (as the AWS walkthrough sizes it); victims follow the simulator's documented
order; quota shares are configured as in the policy. The preview is advice for the
approvers, not a promise.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from quotagov.batch_semantics import HOLDING_STATUSES
from quotagov.clock import Clock
from quotagov.governance.model.impact_preview import ImpactOutcome, ImpactPreview, PreemptedJob
from quotagov.governance.ports import BatchNotFoundError, BatchPort, GovernedJob, GovernedJobs
from quotagov.policy.models import Policy

if TYPE_CHECKING:
    from quotagov.scheduler import Engine, JobSpec, Transition

# The local scheduler is imported when a preview is computed, not with this module:
# the escalation functions build this previewer on every request (cold start).

#: Statuses the preview reads: waiting (RUNNABLE) and holding instances
#: (:data:`quotagov.batch_semantics.HOLDING_STATUSES`), in that order.
PREVIEW_STATUSES = ("RUNNABLE", *HOLDING_STATUSES)
#: At most this many active jobs are described (one ``DescribeServiceJob`` each).
MAX_PREVIEW_JOBS = 500
#: Concurrent ``DescribeServiceJob`` / job-record reads while building the preview.
PREVIEW_READ_WORKERS = 8


@dataclass(frozen=True)
class ActiveJob:
    """A job of the governed queue as the preview replays it (times in epoch seconds;
    ``checkpoint``: its checkpoint interval in seconds, None without one;
    ``max_runtime``: its payload's ``StoppingCondition.MaxRuntimeInSeconds``, the
    longest one attempt may run, None when not given)."""

    job_id: str
    name: str
    share: str
    status: str
    instance_type: str
    instance_count: int
    priority: int
    created_at: float
    started_at: float | None
    checkpoint: float | None
    max_runtime: float | None = None


@dataclass(frozen=True)
class _Raised:
    """What the simulated raise did at ``now``.

    Attributes:
        preempted: jobs preempted in the raised copy but not in the unchanged one.
        starts: whether the raised job holds its instances after the pass.
        position_before: its 1-based place in its share's RUNNABLE order before.
        position_after: the same after the raise (None when it starts).
    """

    preempted: tuple[PreemptedJob, ...]
    starts: bool
    position_before: int | None
    position_after: int | None


def _epoch_seconds(millis: Any) -> float | None:
    """Batch's epoch milliseconds as epoch seconds (None stays None)."""
    return None if millis is None else float(millis) / 1000.0


class SchedulerImpactPreviewer:
    """:class:`~quotagov.governance.ports.ImpactPreviewer` backed by the local scheduler.

    Args:
        policy: the governance policy (quota shares, job queue).
        batch: the Batch port (``ListServiceJobs``, ``DescribeServiceJob``,
            ``GetJobQueueSnapshot``).
        jobs: quotagov's job records (checkpoint intervals).
        clock: ``now`` in epoch seconds.

    Raises (from :meth:`preview`):
        quotagov.governance.ports.BatchError: when Batch cannot be read.
    """

    def __init__(
        self,
        *,
        policy: Policy,
        batch: BatchPort,
        jobs: GovernedJobs,
        clock: Clock,
        max_jobs: int = MAX_PREVIEW_JOBS,
    ) -> None:
        if max_jobs < 1:
            raise ValueError(f"max_jobs: {max_jobs} is not >= 1")
        self.policy = policy
        self.batch = batch
        self.jobs = jobs
        self.clock = clock
        self.max_jobs = max_jobs
        #: False once a listing had more jobs than ``max_jobs`` (the rest not read).
        self.complete = True

    # -- reading Batch -----------------------------------------------------------------

    def _summaries(self) -> Iterator[dict[str, Any]]:
        """``ListServiceJobs`` summaries of the governed queue, every page, status by
        status in :data:`PREVIEW_STATUSES` order."""
        for status in PREVIEW_STATUSES:
            params: dict[str, Any] = {"jobQueue": self.policy.jobQueue, "jobStatus": status}
            while True:
                page = self.batch.list_service_jobs(**params)
                yield from page.get("jobSummaryList", [])
                token = page.get("nextToken")
                if not token:
                    break
                params["nextToken"] = token

    def _first_summaries(self) -> dict[str, dict[str, Any]]:
        """Job id -> summary for the first ``max_jobs`` jobs listed (default
        :data:`MAX_PREVIEW_JOBS`): at most that many ``DescribeServiceJob`` calls follow."""
        summaries: dict[str, dict[str, Any]] = {}
        self.complete = True
        for summary in self._summaries():
            if len(summaries) >= self.max_jobs:
                self.complete = str(summary["jobId"]) in summaries
                break
            summaries.setdefault(str(summary["jobId"]), summary)
        return summaries

    def _read_jobs(
        self,
        target: GovernedJob,
        target_description: Mapping[str, Any],
        job_ids: Sequence[str],
    ) -> tuple[dict[str, Mapping[str, Any] | None], dict[str, GovernedJob | None]]:
        """On :data:`PREVIEW_READ_WORKERS` threads: each job's ``DescribeServiceJob``
        (None when Batch no longer knows it; the target's own description is reused),
        then the job records of the started jobs other than the target (only started
        jobs can be preempted, so only their checkpoints matter).

        Returns:
            (job id -> description, Batch job id -> governed job or None).
        """

        def describe(job_id: str) -> Mapping[str, Any] | None:
            if job_id == target.batch_job_id:
                return target_description
            try:
                return self.batch.describe_service_job(jobId=job_id)
            except BatchNotFoundError:
                return None

        with ThreadPoolExecutor(max_workers=PREVIEW_READ_WORKERS) as pool:
            descriptions = dict(zip(job_ids, pool.map(describe, job_ids), strict=True))
            started = [
                job_id
                for job_id, description in descriptions.items()
                if description is not None
                and str(description.get("status")) in HOLDING_STATUSES
                and job_id != target.batch_job_id
            ]
            records = dict(
                zip(started, pool.map(self.jobs.find_by_batch_job_id, started), strict=True)
            )
        return descriptions, records

    def active_jobs(
        self, target: GovernedJob, target_description: Mapping[str, Any]
    ) -> list[ActiveJob]:
        """The governed queue's RUNNABLE and started jobs that hold a capacity unit, in
        listing order, with their priorities and checkpoint intervals."""
        summaries = self._first_summaries()
        if target.batch_job_id and target.batch_job_id not in summaries:
            # beyond the first max_jobs listed: the target is read from its own
            # description (no further DescribeServiceJob), the others are left out
            summaries[target.batch_job_id] = dict(target_description)
        descriptions, records = self._read_jobs(target, target_description, list(summaries))
        active: list[ActiveJob] = []
        for job_id, summary in summaries.items():
            description = descriptions[job_id]
            if description is None:
                continue
            record = target if job_id == target.batch_job_id else records.get(job_id)
            job = _active(job_id, summary, description, record)
            if job is not None:
                active.append(job)
        return active

    def dispatch_order(self) -> dict[str, int]:
        """Batch's own order of RUNNABLE jobs (``GetJobQueueSnapshot.frontOfQueue``):
        job id -> 0-based place."""
        snapshot = self.batch.get_job_queue_snapshot(jobQueue=self.policy.jobQueue)
        front = (snapshot.get("frontOfQueue") or {}).get("jobs") or []
        order: dict[str, int] = {}
        for index, entry in enumerate(front):
            arn = str(entry.get("jobArn") or "")
            order.setdefault(arn.rsplit("/", 1)[-1], index)
        return order

    # -- the simulation ----------------------------------------------------------------------

    def engine(
        self,
        active: list[ActiveJob],
        now: float,
        dispatch: Mapping[str, int],
        *,
        bounded: bool = False,
        environment: Mapping[str, int] | None = None,
    ) -> Engine:
        """The local scheduler in the queue's state at ``now`` (step 2 of the module
        docstring); jobs of shares not in the policy are left out.

        Args:
            bounded: give every job its ``max_runtime`` as its run time (each attempt
                ends at the latest then), for estimates run forward in time; False:
                unknown run times (``runSeconds=None``), for what happens at ``now``.
            environment: the service environment's instances per instance type, when
                Batch told them (``DescribeServiceEnvironments``); a type it does not
                list, or all of them when None, gets the sum of the shares' limits.
        """
        from quotagov.scheduler import Engine, Options, ShareConfig

        capacity: dict[str, int] = defaultdict(int)
        shares = []
        for share in self.policy.quotaShares:
            shares.append(
                ShareConfig.from_batch(
                    {"quotaShareName": share.quotaShareName, **share.batch_configuration()}
                )
            )
            for limit in share.capacityLimits:
                capacity[limit.capacityUnit] += limit.maxCapacity
        for unit, instances in (environment or {}).items():
            if unit in capacity:
                capacity[unit] = instances
        known = {share.quotaShareName for share in self.policy.quotaShares}
        started = sorted(
            (a for a in active if a.status in HOLDING_STATUSES and a.share in known),
            key=lambda a: (
                min(a.started_at if a.started_at is not None else now, now),
                a.created_at,
            ),
        )
        first = min([now, *(min(a.started_at or now, now) for a in started)])
        engine = Engine(
            capacity, shares, Options(startupSeconds=0, queueing="STRICT_FIFO"), start=first
        )
        for job in started:
            at = min(job.started_at if job.started_at is not None else now, now)
            engine.advance_to(at)
            engine.submit(_spec(job, bounded))
            engine.advance_to(at)
        engine.advance_to(now)
        waiting = sorted(
            (a for a in active if a.status == "RUNNABLE" and a.share in known),
            key=lambda a: (dispatch.get(a.job_id, len(dispatch)), a.created_at, a.job_id),
        )
        for job in waiting:
            engine.submit(_spec(job, bounded))
        return engine

    # -- the preview ---------------------------------------------------------------------------

    def preview(
        self, job: GovernedJob, description: Mapping[str, Any], new_priority: int
    ) -> ImpactPreview:
        """What setting ``job``'s ``schedulingPriority`` to ``new_priority`` would do now.

        Args:
            job: the escalated job (``batch_job_id`` set).
            description: its ``DescribeServiceJob`` response.
            new_priority: the requested ``schedulingPriority`` (0-9999).

        Returns:
            ALREADY_RUNNING for a job that holds its instances; NO_CHANGE for one that
            is not waiting in the governed queue; else the outcome of the simulated
            raise (:func:`_outcome`).

        Raises:
            quotagov.governance.ports.BatchError: when Batch cannot be read.
        """
        return replace(self._preview(job, description, new_priority), computed_at=self.clock.now())

    def _preview(
        self, job: GovernedJob, description: Mapping[str, Any], new_priority: int
    ) -> ImpactPreview:
        status = str(description.get("status") or "")
        name = str(description.get("jobName") or job.job_name)
        if status in HOLDING_STATUSES:
            return ImpactPreview(
                ImpactOutcome.ALREADY_RUNNING,
                f"{name} is already {status}; a higher priority only makes in-share "
                "preemption less likely to pick it.",
            )
        now = self.clock.now()
        active = self.active_jobs(job, description)
        by_id = {a.job_id: a for a in active}
        target = job.batch_job_id or ""
        if target not in by_id:
            return ImpactPreview(
                ImpactOutcome.NO_CHANGE,
                f"{name} is not waiting in the queue ({status or 'unknown status'}); "
                "nothing changes until capacity frees up.",
            )
        engine = self.engine(active, now, self.dispatch_order())
        share = by_id[target].share
        raised = _simulate_raise(engine, by_id, target, share, new_priority, now)
        return _outcome(name, share, raised)


def _active(
    job_id: str,
    summary: Mapping[str, Any],
    description: Mapping[str, Any],
    record: GovernedJob | None,
) -> ActiveJob | None:
    """One listed job as the preview replays it, or None when it is no longer RUNNABLE
    or started, or uses no capacity unit. The description wins over the summary."""

    def pick(name: str) -> Any:
        return description.get(name) or summary.get(name)

    status = str(pick("status") or "")
    if status not in PREVIEW_STATUSES:
        return None
    usage = (pick("capacityUsage") or [{}])[0]
    instance_type = str(usage.get("capacityUnit") or "")
    if not instance_type:
        return None
    return ActiveJob(
        job_id=job_id,
        name=str(pick("jobName") or job_id),
        share=str(pick("quotaShareName") or ""),
        status=status,
        instance_type=instance_type,
        instance_count=max(1, round(float(usage.get("quantity") or 1))),
        priority=int(description.get("schedulingPriority") or 0),
        created_at=_epoch_seconds(pick("createdAt")) or 0.0,
        started_at=_epoch_seconds(pick("startedAt")),
        checkpoint=record.checkpoint_interval_seconds if record else None,
        max_runtime=max_runtime_of(description.get("serviceRequestPayload")),
    )


def max_runtime_of(payload: Any) -> float | None:
    """``StoppingCondition.MaxRuntimeInSeconds`` of a ``serviceRequestPayload`` (JSON
    text or dict), or None when absent or unreadable."""
    try:
        parsed = json.loads(payload) if isinstance(payload, str | bytes) else payload
        value = parsed["StoppingCondition"]["MaxRuntimeInSeconds"]
    except (ValueError, KeyError, TypeError):
        return None
    return float(value) if isinstance(value, int | float) and value > 0 else None


def _spec(job: ActiveJob, bounded: bool = False) -> JobSpec:
    """``job`` as a scheduler job: of unknown remaining time (``runSeconds=None``), or,
    ``bounded``, running at most its ``max_runtime`` (None when it has none)."""
    from quotagov.scheduler import JobSpec

    return JobSpec(
        jobName=job.job_id,
        quotaShareName=job.share,
        instanceType=job.instance_type,
        instanceCount=job.instance_count,
        runSeconds=job.max_runtime if bounded else None,
        schedulingPriority=job.priority,
        checkpointIntervalSeconds=job.checkpoint,
    )


def _simulate_raise(
    engine: Engine,
    by_id: Mapping[str, ActiveJob],
    target: str,
    share: str,
    new_priority: int,
    now: float,
) -> _Raised:
    """Fork ``engine`` twice at ``now``, raise ``target`` to ``new_priority`` in one
    copy, run both scheduling passes and compare (step 3 of the module docstring)."""
    before_order = engine.runnable_order(share)
    unchanged, changed = engine.fork(), engine.fork()
    base = unchanged.advance_to(now)
    changed.update_priority(target, new_priority)
    after = changed.advance_to(now)
    preempted = _caused_preemptions(base, after, by_id)
    starts = changed.job(target).status in HOLDING_STATUSES
    position_after = None if starts else _position(changed.runnable_order(share), target)
    return _Raised(preempted, starts, _position(before_order, target), position_after)


def _caused_preemptions(
    base: Sequence[Transition], after: Sequence[Transition], by_id: Mapping[str, ActiveJob]
) -> tuple[PreemptedJob, ...]:
    """Preemptions in ``after`` (the raised copy) that ``base`` (unchanged) does not
    have: the ones the raise causes."""
    base_victims = {t.jobName for t in base if t.kind is not None}
    return tuple(
        PreemptedJob(
            job_id=t.jobName,
            job_name=by_id[t.jobName].name if t.jobName in by_id else t.jobName,
            quota_share_name=by_id[t.jobName].share if t.jobName in by_id else "",
            kind=str(t.kind),
            unsaved_seconds=float(t.lostSeconds or 0.0),
        )
        for t in after
        if t.kind is not None and t.jobName not in base_victims
    )


def _outcome(name: str, share: str, raised: _Raised) -> ImpactPreview:
    """The preview of job ``name`` in ``share``: PREEMPTS, STARTS, MOVES_FORWARD or
    NO_CHANGE, with a sentence for the approvers."""
    before, after = raised.position_before, raised.position_after
    if raised.starts and raised.preempted:
        listing = ", ".join(
            f"{p.job_name} ({round(p.unsaved_seconds)} s of unsaved work)" for p in raised.preempted
        )
        return ImpactPreview(
            ImpactOutcome.PREEMPTS,
            f"Approval starts {name} at once by preempting {listing}.",
            raised.preempted,
            before,
            None,
        )
    if raised.starts:
        return ImpactPreview(
            ImpactOutcome.STARTS,
            f"Approval starts {name} at once; nothing is preempted.",
            (),
            before,
            None,
        )
    if before is not None and after is not None and after < before:
        return ImpactPreview(
            ImpactOutcome.MOVES_FORWARD,
            f"Approval preempts nothing; {name} moves from place {before} to place "
            f"{after} in the {share} queue.",
            (),
            before,
            after,
        )
    return ImpactPreview(
        ImpactOutcome.NO_CHANGE,
        f"Approval changes nothing until capacity frees up: {name} stays at place "
        f"{after or before} in the {share} queue.",
        (),
        before,
        after,
    )


def _position(order: list[str], job_id: str) -> int | None:
    """1-based place of ``job_id`` in ``order``, or None when it is not there."""
    return order.index(job_id) + 1 if job_id in order else None
