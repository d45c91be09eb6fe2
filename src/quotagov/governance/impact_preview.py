"""Impact preview: what raising a job's ``schedulingPriority`` would do right now.

Steps (issue 6, "Impact preview"):

1. Read the governed queue's current state through the Batch port:
   ``ListServiceJobs`` for RUNNABLE, SCHEDULED, STARTING and RUNNING jobs (every
   page), ``DescribeServiceJob`` for each one's ``schedulingPriority`` (summaries do
   not carry it), and ``GetJobQueueSnapshot`` for Batch's own dispatch order of
   RUNNABLE jobs; and quotagov's job records for the checkpoint interval of each
   started job (only started jobs can be preempted). Reads run on
   :data:`PREVIEW_READ_WORKERS` threads, so the preview stays well inside API
   Gateway's 29 s for hundreds of jobs.
2. Rebuild that state in the local scheduler (:class:`quotagov.scheduler.Engine`,
   semantics in ``spec/scenario-format.md``): started jobs are replayed in the order
   they started, each at its ``startedAt``, with unknown remaining time
   (``runSeconds=None``), so their unsaved work at ``now`` follows from ``startedAt``
   and their checkpoint interval; then the RUNNABLE jobs are submitted at ``now`` in
   Batch's dispatch order.
3. Fork it twice at ``now``: one copy unchanged, one with the priority raised; run
   the scheduling pass of each at the same instant and compare. Preemptions that
   happen in both copies are not caused by the raise.

Modelling choices (AWS is SILENT on them, reference §1.3/§1.5): the service
environment's capacity per instance type is taken as the sum of the quota shares'
limits (as the AWS walkthrough sizes it); victims follow the simulator's documented
order; quota shares are configured as in the policy. The preview is advice for the
approvers, not a promise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from quotagov.clock import Clock
from quotagov.governance.impact_preview_model import ImpactOutcome, ImpactPreview, PreemptedJob
from quotagov.governance.ports import BatchNotFoundError, BatchPort, GovernedJob, GovernedJobs
from quotagov.policy.models import Policy
from quotagov.scheduler import Engine, JobSpec, Options, ShareConfig

#: Batch statuses of jobs that hold instances (spec: SCHEDULED, STARTING, RUNNING).
STARTED_STATUSES = ("SCHEDULED", "STARTING", "RUNNING")
#: Statuses the preview reads (waiting and started jobs).
ACTIVE_STATUSES = ("RUNNABLE", *STARTED_STATUSES)
#: At most this many active jobs are described (one ``DescribeServiceJob`` each).
MAX_PREVIEW_JOBS = 500
#: Concurrent ``DescribeServiceJob`` / job-record reads while building the preview.
PREVIEW_READ_WORKERS = 8


@dataclass(frozen=True)
class _Active:
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


def _epoch_seconds(millis: Any) -> float | None:
    return None if millis is None else float(millis) / 1000.0


class SchedulerImpactPreviewer:
    """:class:`~quotagov.governance.escalations.ImpactPreviewer` backed by the local scheduler.

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
        self, *, policy: Policy, batch: BatchPort, jobs: GovernedJobs, clock: Clock
    ) -> None:
        self.policy = policy
        self.batch = batch
        self.jobs = jobs
        self.clock = clock

    # -- reading Batch -----------------------------------------------------------------

    def _summaries(self) -> Iterator[dict[str, Any]]:
        for status in ACTIVE_STATUSES:
            params: dict[str, Any] = {"jobQueue": self.policy.jobQueue, "jobStatus": status}
            while True:
                page = self.batch.list_service_jobs(**params)
                yield from page.get("jobSummaryList", [])
                token = page.get("nextToken")
                if not token:
                    break
                params["nextToken"] = token

    def _active_jobs(
        self, target: GovernedJob, target_description: Mapping[str, Any]
    ) -> list[_Active]:
        summaries: dict[str, dict[str, Any]] = {}
        for summary in self._summaries():
            if len(summaries) >= MAX_PREVIEW_JOBS:
                break
            summaries.setdefault(str(summary["jobId"]), summary)

        def describe(job_id: str) -> Mapping[str, Any] | None:
            if job_id == target.batch_job_id:
                return target_description
            try:
                return self.batch.describe_service_job(jobId=job_id)
            except BatchNotFoundError:
                return None

        with ThreadPoolExecutor(max_workers=PREVIEW_READ_WORKERS) as pool:
            descriptions = dict(zip(summaries, pool.map(describe, summaries), strict=True))
            started = [
                job_id
                for job_id, description in descriptions.items()
                if description is not None
                and str(description.get("status")) in STARTED_STATUSES
                and job_id != target.batch_job_id
            ]
            # Only started jobs can be preempted, so only their checkpoints matter.
            records = dict(
                zip(started, pool.map(self.jobs.find_by_batch_job_id, started), strict=True)
            )
        active: list[_Active] = []
        for job_id, summary in summaries.items():
            description = descriptions[job_id]
            if description is None:
                continue
            status = str(description.get("status") or summary.get("status") or "")
            if status not in ACTIVE_STATUSES:
                continue
            usage = (description.get("capacityUsage") or summary.get("capacityUsage") or [{}])[0]
            instance_type = str(usage.get("capacityUnit") or "")
            if not instance_type:
                continue
            record = target if job_id == target.batch_job_id else records.get(job_id)
            started_at = _epoch_seconds(description.get("startedAt") or summary.get("startedAt"))
            created_at = _epoch_seconds(description.get("createdAt") or summary.get("createdAt"))
            active.append(
                _Active(
                    job_id=job_id,
                    name=str(description.get("jobName") or summary.get("jobName") or job_id),
                    share=str(
                        description.get("quotaShareName") or summary.get("quotaShareName") or ""
                    ),
                    status=status,
                    instance_type=instance_type,
                    instance_count=max(1, round(float(usage.get("quantity") or 1))),
                    priority=int(description.get("schedulingPriority") or 0),
                    created_at=created_at or 0.0,
                    started_at=started_at,
                    checkpoint=record.checkpoint_interval_seconds if record else None,
                )
            )
        return active

    def _dispatch_order(self) -> dict[str, int]:
        """Batch's own order of RUNNABLE jobs (``GetJobQueueSnapshot.frontOfQueue``)."""
        snapshot = self.batch.get_job_queue_snapshot(jobQueue=self.policy.jobQueue)
        front = (snapshot.get("frontOfQueue") or {}).get("jobs") or []
        order: dict[str, int] = {}
        for index, entry in enumerate(front):
            arn = str(entry.get("jobArn") or "")
            order.setdefault(arn.rsplit("/", 1)[-1], index)
        return order

    # -- the simulation ----------------------------------------------------------------------

    def _engine(self, active: list[_Active], now: float, dispatch: Mapping[str, int]) -> Engine:
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
        known = {share.quotaShareName for share in self.policy.quotaShares}
        started = sorted(
            (a for a in active if a.status in STARTED_STATUSES and a.share in known),
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
            engine.submit(self._spec(job))
            engine.advance_to(at)
        engine.advance_to(now)
        waiting = sorted(
            (a for a in active if a.status == "RUNNABLE" and a.share in known),
            key=lambda a: (dispatch.get(a.job_id, len(dispatch)), a.created_at, a.job_id),
        )
        for job in waiting:
            engine.submit(self._spec(job))
        return engine

    @staticmethod
    def _spec(job: _Active) -> JobSpec:
        return JobSpec(
            jobName=job.job_id,
            quotaShareName=job.share,
            instanceType=job.instance_type,
            instanceCount=job.instance_count,
            runSeconds=None,
            schedulingPriority=job.priority,
            checkpointIntervalSeconds=job.checkpoint,
        )

    # -- the preview ---------------------------------------------------------------------------

    def preview(
        self, job: GovernedJob, description: Mapping[str, Any], new_priority: int
    ) -> ImpactPreview:
        """What setting ``job``'s ``schedulingPriority`` to ``new_priority`` would do now.

        Args:
            job: the escalated job (``batch_job_id`` set).
            description: its ``DescribeServiceJob`` response.
            new_priority: the requested ``schedulingPriority`` (0-9999).
        """
        status = str(description.get("status") or "")
        name = str(description.get("jobName") or job.job_name)
        if status in STARTED_STATUSES:
            return ImpactPreview(
                ImpactOutcome.ALREADY_RUNNING,
                f"{name} is already {status}; a higher priority only makes in-share "
                "preemption less likely to pick it.",
            )
        now = self.clock.now()
        active = self._active_jobs(job, description)
        names = {a.job_id: a for a in active}
        target = job.batch_job_id or ""
        if target not in names:
            return ImpactPreview(
                ImpactOutcome.NO_CHANGE,
                f"{name} is not waiting in the queue ({status or 'unknown status'}); "
                "nothing changes until capacity frees up.",
            )
        engine = self._engine(active, now, self._dispatch_order())
        share = names[target].share
        before_order = engine.runnable_order(share)
        unchanged, changed = engine.fork(), engine.fork()
        base = unchanged.advance_to(now)
        changed.update_priority(target, new_priority)
        after = changed.advance_to(now)
        base_victims = {t.jobName for t in base if t.kind is not None}
        preempted = tuple(
            PreemptedJob(
                job_id=t.jobName,
                job_name=names[t.jobName].name if t.jobName in names else t.jobName,
                quota_share_name=names[t.jobName].share if t.jobName in names else "",
                kind=str(t.kind),
                unsaved_seconds=float(t.lostSeconds or 0.0),
            )
            for t in after
            if t.kind is not None and t.jobName not in base_victims
        )
        position_before = _position(before_order, target)
        starts = changed.job(target).status in STARTED_STATUSES
        if starts and preempted:
            listing = ", ".join(
                f"{p.job_name} ({round(p.unsaved_seconds)} s of unsaved work)" for p in preempted
            )
            return ImpactPreview(
                ImpactOutcome.PREEMPTS,
                f"Approval starts {name} at once by preempting {listing}.",
                preempted,
                position_before,
                None,
            )
        if starts:
            return ImpactPreview(
                ImpactOutcome.STARTS,
                f"Approval starts {name} at once; nothing is preempted.",
                (),
                position_before,
                None,
            )
        position_after = _position(changed.runnable_order(share), target)
        if (
            position_before is not None
            and position_after is not None
            and position_after < position_before
        ):
            return ImpactPreview(
                ImpactOutcome.MOVES_FORWARD,
                f"Approval preempts nothing; {name} moves from place {position_before} to place "
                f"{position_after} in the {share} queue.",
                (),
                position_before,
                position_after,
            )
        return ImpactPreview(
            ImpactOutcome.NO_CHANGE,
            f"Approval changes nothing until capacity frees up: {name} stays at place "
            f"{position_after or position_before} in the {share} queue.",
            (),
            position_before,
            position_after,
        )


def _position(order: list[str], job_name: str) -> int | None:
    return order.index(job_name) + 1 if job_name in order else None
