"""Why is my job waiting: position, reason and estimated start of a RUNNABLE job.

What ``GET /jobs/{jobId}`` adds under ``waiting`` for a job Batch holds RUNNABLE
(why a job waits, ``docs/design.md``, "People and operators are told")::

    "waiting": {
      "position": {"queue": 2, "share": 1, "queueLength": 2},   # GetJobQueueSnapshot
      "reason": {"code": "SHARE_AT_LIMIT", "text": "..."},
      "estimatedStartAt": 1777887600.0,                          # epoch seconds or null
      "estimate": {"basis": "...", "computedAt": 1777885980.0, "computeSeconds": 0.012}
    }

* **Position** comes from Batch: ``GetJobQueueSnapshot.frontOfQueue`` (the first 100
  RUNNABLE jobs in dispatch order, botocore's ``batch`` service model); ``share`` counts
  the jobs of the
  same quota share ahead of it there. Null when the job is not among those 100.
* **Reason** is the first that holds, in this order (codes are stable, texts are for
  people): ``LARGER_THAN_ENVIRONMENT`` (more instances than the service environment
  has of its type), ``NO_CAPACITY_LIMIT`` (no share has a limit for its type),
  ``LOWER_PRIORITY`` (N jobs ahead of it in its share), ``DISPATCHING`` (it fits now,
  within its share's quota in free instances or by borrowing: Batch starts it at its
  next scheduling pass), ``CAPACITY_LENT_OUT`` (its share is below its limit, but the
  instances it needs are lent out and not reclaimed for it: the answer names the jobs
  of other shares that hold borrowed instances of its type, the first
  :data:`MAX_NAMED_BORROWERS` of the viewer's own team under ``reason.borrowers`` and
  how many more under ``reason.moreBorrowers``: another team's job is counted, never
  named, and its Batch id is not shown), ``SHARE_AT_LIMIT`` (at its limit and it may not borrow,
  or nothing is idle to borrow), ``BORROW_LIMIT_REACHED`` (its ``borrowLimit`` is used
  up), ``BORROW_BLOCKED_BY_RESERVE`` (the only idle instances belong to RESERVE shares,
  which never lend). The state they are read from is the local scheduler rebuilt at
  ``now`` from Batch's view (``ListServiceJobs``, ``DescribeServiceJob`` and
  ``GetJobQueueSnapshot``: the impact preview's reading,
  :mod:`quotagov.governance.escalations.preview`), before its scheduling pass, with the
  service environment's capacity when Batch tells it (``DescribeJobQueues`` +
  ``DescribeServiceEnvironments``, cached 5 minutes; else the sum of the shares'
  limits): only an environment smaller than its shares' limits can leave a share
  below its limit with too few instances even after every borrowed one is taken
  back, which is when Batch does not reclaim (spec, "Cross-share preemption"). Borrowers
  are the jobs whose instances lie above their own share's limit, stacked in start
  order (spec, "Semantics"; :meth:`quotagov.scheduler.Engine.borrowed_holders`); AWS
  does not say which lender a borrowed instance came from, so every borrower of the
  instance type is named.
* **Reading** is bounded and shared: one view describes at most :data:`VIEW_MAX_JOBS`
  jobs (``DescribeServiceJob``; the first listed, the waiting job always), and a
  reading is reused by the views of the next :data:`QUEUE_READING_SECONDS` seconds
  (:class:`QueueReadings`). A queue with more jobs is read in part, and
  ``estimate.basis`` says so.
* **Estimated start** runs the same rebuilt scheduler forward with every attempt
  bounded by its payload's ``StoppingCondition.MaxRuntimeInSeconds``: the latest start
  if the jobs ahead run to their limit (Batch may start it earlier). Null when a job
  it waits behind has no such limit. Modelling choices as in the impact preview
  (AWS does not document victim selection and dispatch details).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from quotagov.batch_semantics import HOLDING_STATUSES
from quotagov.clock import Clock
from quotagov.governance.escalations.preview import ActiveJob, SchedulerImpactPreviewer
from quotagov.governance.ports import BatchPort, GovernedJob, GovernedJobs
from quotagov.governance.submission.capacity import EnvironmentCapacity
from quotagov.policy.models import Policy
from quotagov.scheduler import Engine


class WaitReason(StrEnum):
    """Why a RUNNABLE job is not running (see the module docstring for the order)."""

    LARGER_THAN_ENVIRONMENT = "LARGER_THAN_ENVIRONMENT"
    NO_CAPACITY_LIMIT = "NO_CAPACITY_LIMIT"
    LOWER_PRIORITY = "LOWER_PRIORITY"
    CAPACITY_LENT_OUT = "CAPACITY_LENT_OUT"
    SHARE_AT_LIMIT = "SHARE_AT_LIMIT"
    BORROW_LIMIT_REACHED = "BORROW_LIMIT_REACHED"
    BORROW_BLOCKED_BY_RESERVE = "BORROW_BLOCKED_BY_RESERVE"
    DISPATCHING = "DISPATCHING"
    NOT_IN_QUEUE = "NOT_IN_QUEUE"


#: Borrowing jobs named in a ``CAPACITY_LENT_OUT`` answer; the others are counted.
MAX_NAMED_BORROWERS = 5

#: Jobs of the governed queue one job view reads (``DescribeServiceJob`` each, the
#: first listed; the waiting job itself always): a view never makes more calls than this.
VIEW_MAX_JOBS = 50

#: Seconds one reading of the governed queue (its jobs, Batch's dispatch order) serves
#: the job views that follow, so views asked in a burst read Batch once.
QUEUE_READING_SECONDS = 5.0


class QueueReadings:
    """The last reading of each governed queue, reused for ``max_age`` seconds.

    Held by the warm function (a cached dependency), shared by its job views. A reading
    that does not hold the waiting job (submitted since) is read again.

    Args:
        clock: ``now``, epoch seconds.
        max_age: seconds a reading is reused (>= 0; 0 reads every time).
    """

    def __init__(self, clock: Clock, max_age: float = QUEUE_READING_SECONDS) -> None:
        if max_age < 0:
            raise ValueError(f"max_age: {max_age} is not >= 0")
        self.clock = clock
        self.max_age = max_age
        self._readings: dict[str, tuple[float, Reading]] = {}

    def read(self, queue: str, target: str, load: Callable[[], Reading]) -> Reading:
        """The kept reading of ``queue`` when it is younger than ``max_age`` and holds
        job ``target``, else ``load()`` (then kept)."""
        now = self.clock.now()
        kept = self._readings.get(queue)
        fresh = kept is not None and 0 <= now - kept[0] < self.max_age
        if kept is not None and fresh and any(j.job_id == target for j in kept[1].active):
            return kept[1]
        reading = load()
        self._readings[queue] = (now, reading)
        return reading


@dataclass(frozen=True)
class Reading:
    """One reading of the governed queue for job views.

    Attributes:
        active: its RUNNABLE and started jobs (the first ``max_jobs`` listed).
        dispatch: Batch's dispatch order, service job id -> 0-based place.
        complete: False when the listing held more jobs than were read: the reason and
            the estimate then leave those out (said in ``estimate.basis``).
    """

    active: list[ActiveJob]
    dispatch: dict[str, int]
    complete: bool


@dataclass(frozen=True)
class Borrower:
    """A job of another quota share that holds borrowed instances of the waiting job's
    instance type (read from ``ListServiceJobs`` and ``DescribeServiceJob``).

    Attributes:
        job_id: the service job id.
        job_name: its ``jobName``.
        quota_share_name: its quota share.
        instance_type: the capacity unit (e.g. ``ml.g5.xlarge``).
        instances: how many instances of that type the job holds.
        team: the team whose submission it is (quotagov's record), None for a job
            quotagov did not submit.
    """

    job_id: str
    job_name: str
    quota_share_name: str
    instance_type: str
    instances: int
    team: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"jobId", "jobName", "quotaShareName", "instanceType", "instances"}``."""
        return {
            "jobId": self.job_id,
            "jobName": self.job_name,
            "quotaShareName": self.quota_share_name,
            "instanceType": self.instance_type,
            "instances": self.instances,
        }

    def words(self) -> str:
        """``bg-2 (job 3f2a..., share background, 1 x ml.g5.xlarge)``."""
        return (
            f"{self.job_name} (job {self.job_id}, share {self.quota_share_name}, "
            f"{self.instances} x {self.instance_type})"
        )


@dataclass(frozen=True)
class Reason:
    """Why a job waits: the code, the sentence and, for ``CAPACITY_LENT_OUT``, the
    borrowing jobs named (those of the caller's team, at most ``max_named``) and how
    many more there are (other teams' jobs are only counted: never named, no ids)."""

    code: WaitReason
    text: str
    borrowers: tuple[Borrower, ...] = ()
    more_borrowers: int = 0

    def to_dict(self) -> dict[str, Any]:
        """``{"code", "text"}``, plus ``borrowers`` and ``moreBorrowers`` when the
        capacity is lent out."""
        answer: dict[str, Any] = {"code": str(self.code), "text": self.text}
        if self.code is WaitReason.CAPACITY_LENT_OUT:
            answer["borrowers"] = [b.to_dict() for b in self.borrowers]
            answer["moreBorrowers"] = self.more_borrowers
        return answer


@dataclass(frozen=True)
class Waiting:
    """The answer for one waiting job (see the module docstring for the JSON)."""

    queue_position: int | None
    share_position: int | None
    queue_length: int
    reason: Reason
    estimated_start_at: float | None
    basis: str
    computed_at: float
    compute_seconds: float

    @property
    def code(self) -> WaitReason:
        """The reason's code."""
        return self.reason.code

    @property
    def text(self) -> str:
        """The reason in words."""
        return self.reason.text

    def to_dict(self) -> dict[str, Any]:
        """The ``waiting`` member of the job view."""
        return {
            "position": {
                "queue": self.queue_position,
                "share": self.share_position,
                "queueLength": self.queue_length,
            },
            "reason": self.reason.to_dict(),
            "estimatedStartAt": self.estimated_start_at,
            "estimate": {
                "basis": self.basis,
                "computedAt": self.computed_at,
                "computeSeconds": round(self.compute_seconds, 6),
            },
        }


class WaitExplainer:
    """Position, reason and estimated start of a RUNNABLE job.

    Args:
        policy: the governance policy (quota shares, job queue).
        batch: ``ListServiceJobs``, ``DescribeServiceJob``, ``GetJobQueueSnapshot``.
        jobs: quotagov's job records (checkpoint intervals).
        clock: ``now``, epoch seconds.
        timer: a monotonic timer in seconds (measures ``computeSeconds``).
        max_named: borrowing jobs named in a ``CAPACITY_LENT_OUT`` answer (>= 0).
        capacity: the governed queue's service-environment capacity
            (``DescribeJobQueues`` + ``DescribeServiceEnvironments``, cached); None, or
            an unknown answer, means the sum of the shares' limits (the impact
            preview's modelling choice).
        readings: the kept readings of the queue (:class:`QueueReadings`); None reads
            Batch for every view.
        max_jobs: jobs read per view (``DescribeServiceJob`` each; default
            :data:`VIEW_MAX_JOBS`).

    Raises (from :meth:`explain`):
        quotagov.governance.ports.BatchError: when Batch cannot be read.
    """

    def __init__(
        self,
        *,
        policy: Policy,
        batch: BatchPort,
        jobs: GovernedJobs,
        clock: Clock,
        timer: Callable[[], float] = time.perf_counter,
        max_named: int = MAX_NAMED_BORROWERS,
        capacity: EnvironmentCapacity | None = None,
        readings: QueueReadings | None = None,
        max_jobs: int = VIEW_MAX_JOBS,
    ) -> None:
        if max_named < 0:
            raise ValueError(f"max_named: {max_named} is not >= 0")
        self.policy = policy
        self.clock = clock
        self.timer = timer
        self.max_named = max_named
        self.capacity = capacity
        self.jobs = jobs
        self.readings = readings or QueueReadings(clock, max_age=0)
        self.reader = SchedulerImpactPreviewer(
            policy=policy, batch=batch, jobs=jobs, clock=clock, max_jobs=max_jobs
        )

    def _team_of(self, batch_job_id: str) -> str | None:
        record = self.jobs.find_by_batch_job_id(batch_job_id)
        return record.team if record is not None else None

    def explain(self, job: GovernedJob, description: Mapping[str, Any]) -> Waiting:
        """Why ``job`` (RUNNABLE, ``description`` its ``DescribeServiceJob``) waits, as
        told to its team: other teams' jobs are counted, never named."""
        started = self.timer()
        now = self.clock.now()

        def load() -> Reading:
            active = self.reader.active_jobs(job, description)
            return Reading(active, self.reader.dispatch_order(), self.reader.complete)

        reading = self.readings.read(self.policy.jobQueue, str(job.batch_job_id or ""), load)
        active, dispatch = reading.active, reading.dispatch
        by_id = {a.job_id: a for a in active}
        target = str(job.batch_job_id or "")
        queue_pos, share_pos = _positions(target, dispatch, by_id)
        me = by_id.get(target)
        if me is None or me.share not in {s.quotaShareName for s in self.policy.quotaShares}:
            return Waiting(
                queue_pos,
                share_pos,
                len(dispatch),
                Reason(
                    WaitReason.NOT_IN_QUEUE,
                    f"{job.job_name} is not RUNNABLE in the governed queue's listing now.",
                ),
                None,
                "not estimated",
                now,
                self.timer() - started,
            )
        environment = self.capacity.of(self.policy.jobQueue) if self.capacity else None
        engine = self.reader.engine(active, now, dispatch, environment=environment)
        reason = wait_reason(
            engine,
            me,
            by_id,
            self.policy,
            self.max_named,
            viewer_team=job.team,
            team_of=self._team_of,
        )
        bounded = self.reader.engine(active, now, dispatch, bounded=True, environment=environment)
        estimate, basis = _estimate(bounded, me)
        if not reading.complete:
            basis += (
                f" (read from the first {self.reader.max_jobs} jobs the queue lists; "
                "the others are left out)"
            )
        return Waiting(
            queue_pos,
            share_pos,
            len(dispatch),
            reason,
            estimate,
            basis,
            now,
            self.timer() - started,
        )


def _positions(
    target: str, dispatch: Mapping[str, int], by_id: Mapping[str, ActiveJob]
) -> tuple[int | None, int | None]:
    """1-based places in Batch's dispatch order and among the same share's jobs."""
    if target not in dispatch:
        return None, None
    mine = dispatch[target]
    share = by_id[target].share if target in by_id else None
    ahead = [
        job_id
        for job_id, place in dispatch.items()
        if place < mine and job_id in by_id and by_id[job_id].share == share
    ]
    return mine + 1, len(ahead) + 1


def wait_reason(
    engine: Engine,
    me: ActiveJob,
    by_id: Mapping[str, ActiveJob],
    policy: Policy,
    max_named: int = MAX_NAMED_BORROWERS,
    *,
    viewer_team: str | None = None,
    team_of: Callable[[str], str | None] | None = None,
) -> Reason:
    """The first reason that holds (module docstring), with its sentence.

    Args:
        engine: the local scheduler rebuilt at ``now``, before its scheduling pass
            (:meth:`SchedulerImpactPreviewer.engine`); job names are service job ids.
        me: the waiting job.
        by_id: every active job read from Batch, by service job id.
        policy: the governance policy (quota shares).
        max_named: borrowing jobs named for ``CAPACITY_LENT_OUT`` (the rest counted).
        viewer_team: the team the answer is for: only its jobs are named (with
            ``team_of``, the team of a service job id); None names every borrower.
    """
    unit, count, share = me.instance_type, me.instance_count, me.share
    capacity = engine.capacity.get(unit, 0)
    if capacity == 0:
        return Reason(
            WaitReason.NO_CAPACITY_LIMIT,
            f"No quota share has a capacity limit for {unit}: the job waits until one is "
            "configured.",
        )
    if count > capacity:
        return Reason(
            WaitReason.LARGER_THAN_ENVIRONMENT,
            f"It asks for {count} x {unit}, more than the {capacity} the service "
            "environment has: it can never start as it is.",
        )
    order = engine.runnable_order(share)
    if me.job_id in order and order.index(me.job_id) > 0:
        ahead = [by_id[j] for j in order[: order.index(me.job_id)] if j in by_id]
        higher = sum(1 for j in ahead if j.priority > me.priority)
        return Reason(
            WaitReason.LOWER_PRIORITY,
            f"{len(ahead)} job(s) of share {share} are ahead of it "
            f"({higher} with a higher schedulingPriority than its {me.priority}, the "
            "others submitted earlier).",
        )
    usage = engine.usage(share).get(unit)
    limit = usage.limit if usage else 0
    used = usage.used if usage else 0
    free = engine.free(unit)
    config = policy.share(share)
    if used + count <= limit:
        if free >= count:
            return _dispatching(count, unit, f"within share {share}'s quota, {free} free")
        return _lent_out(engine, me, by_id, policy, (used, limit), max_named, viewer_team, team_of)
    sharing = config.resourceSharingConfiguration
    if sharing.strategy != "LEND_AND_BORROW":
        return Reason(
            WaitReason.SHARE_AT_LIMIT,
            f"Share {share} uses {used} of its {limit} x {unit} and its strategy "
            f"{sharing.strategy} does not borrow.",
        )
    borrowed = usage.borrowed if usage else 0
    cap = sharing.borrowLimit
    if cap is not None and cap >= 0 and borrowed + count > limit * cap / 100:
        return Reason(
            WaitReason.BORROW_LIMIT_REACHED,
            f"Share {share} is at its limit ({limit} x {unit}) and borrows {borrowed}; "
            f"its borrowLimit of {cap}% allows {limit * cap // 100}.",
        )
    lendable, reserved = _idle_elsewhere(engine, policy, share, unit)
    if free - reserved >= count:  # spec, admission 2: RESERVE idle quota is never lent
        return _dispatching(count, unit, f"borrowed: {free - reserved} free outside RESERVE quota")
    if lendable < count and reserved > 0:
        names = ", ".join(
            s.quotaShareName
            for s in policy.quotaShares
            if s.resourceSharingConfiguration.strategy == "RESERVE"
        )
        return Reason(
            WaitReason.BORROW_BLOCKED_BY_RESERVE,
            f"Share {share} is at its limit ({limit} x {unit}); the idle instances "
            f"belong to RESERVE share(s) {names}, which never lend.",
        )
    in_share = config.preemptionConfiguration.inSharePreemption == "ENABLED"
    tail = (
        " and none of its running jobs has a lower schedulingPriority"
        if in_share
        else " and in-share preemption is off"
    )
    return Reason(
        WaitReason.SHARE_AT_LIMIT,
        f"Share {share} uses {used} of its {limit} x {unit}, no other share has an idle "
        f"instance to lend{tail}.",
    )


def _dispatching(count: int, unit: str, how: str) -> Reason:
    """It fits now (``how``: within quota in free instances, or by borrowing)."""
    return Reason(
        WaitReason.DISPATCHING,
        f"{count} x {unit} can be given to it now ({how}): Batch starts it at its next "
        "scheduling pass.",
    )


def borrowers_of(
    engine: Engine,
    unit: str,
    by_id: Mapping[str, ActiveJob],
    policy: Policy,
    except_share: str,
) -> list[Borrower]:
    """Every job of a share other than ``except_share`` holding borrowed instances of
    ``unit``: shares in policy order, within a share the latest started first."""
    found: list[Borrower] = []
    for other in policy.quotaShares:
        name = other.quotaShareName
        if name == except_share:
            continue
        for job_id in engine.borrowed_holders(name, unit):
            job = by_id[job_id]  # the engine holds only jobs read from Batch
            found.append(Borrower(job_id, job.name, name, unit, job.instance_count))
    return found


def _lent_out(
    engine: Engine,
    me: ActiveJob,
    by_id: Mapping[str, ActiveJob],
    policy: Policy,
    use: tuple[int, int],
    max_named: int,
    viewer_team: str | None = None,
    team_of: Callable[[str], str | None] | None = None,
) -> Reason:
    """``CAPACITY_LENT_OUT``: within quota, but the free instances are too few; names
    the jobs of other shares that borrow the type (the first ``max_named`` of the
    viewer's team; every other one is only counted)."""
    unit, share = me.instance_type, me.share
    used, limit = use
    everyone = borrowers_of(engine, unit, by_id, policy, share)
    if viewer_team is not None:
        lookup = team_of or (lambda _job_id: None)
        everyone = [replace(b, team=lookup(b.job_id)) for b in everyone]
        nameable = [b for b in everyone if b.team == viewer_team]
    else:
        nameable = everyone
    named = tuple(nameable[:max_named])
    more = len(everyone) - len(named)
    borrowed = sum(
        usage.borrowed
        for other in policy.quotaShares
        if other.quotaShareName != share
        and (usage := engine.usage(other.quotaShareName).get(unit)) is not None
    )
    listing = "; ".join(b.words() for b in named)
    if more:
        listing += f"; and {more} more job(s)" if listing else f"{more} job(s)"
    named_text = f": {listing}." if listing else "."
    text = (
        f"Share {share} uses {used} of its {limit} x {unit}; the rest is lent out and not "
        f"reclaimed for it. Jobs of other shares borrow {borrowed} x {unit}{named_text} "
        "Cross-share preemption gives lent capacity back only when that makes room for "
        "the job."
    )
    return Reason(WaitReason.CAPACITY_LENT_OUT, text, named, more)


def _idle_elsewhere(engine: Engine, policy: Policy, share: str, unit: str) -> tuple[int, int]:
    """Idle instances of ``unit`` in other shares: (in shares that lend, in RESERVE ones)."""
    lendable = reserved = 0
    for other in policy.quotaShares:
        if other.quotaShareName == share:
            continue
        usage = engine.usage(other.quotaShareName).get(unit)
        idle = usage.idle if usage else 0
        if other.resourceSharingConfiguration.strategy == "RESERVE":
            reserved += idle
        else:
            lendable += idle
    return min(lendable, engine.free(unit)), reserved


def _estimate(engine: Engine, me: ActiveJob) -> tuple[float | None, str]:
    """When the bounded copy starts ``me`` (epoch seconds), and the basis in words."""
    for transition in engine.run_until_idle():
        if transition.jobName == me.job_id and transition.to in HOLDING_STATUSES:
            return transition.at, (
                "local scheduler run forward from now, every attempt ending at its "
                "MaxRuntimeInSeconds at the latest: the latest start if nothing else "
                "changes (Batch may start it earlier)"
            )
    return None, (
        "not estimated: it waits behind a job without StoppingCondition.MaxRuntimeInSeconds"
    )
