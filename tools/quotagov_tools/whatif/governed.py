"""One what-if run: a workload replayed under a governance policy, its rules in the loop.

What the controller does in AWS, done here on the local scheduler
(:class:`quotagov.scheduler.Engine`), with the same rule functions:

- **Routing.** Each job is routed as ``POST /jobs`` routes it
  (:func:`quotagov.governance.routing.route` on
  :meth:`~quotagov.governance.routing.RoutingInput.from_workload_row`, submitted as the
  team's first member with a role the policy binds to the team or class):
  class, level, instance type and count, checkpointing, the first share of the class
  that can hold it. A refused job is counted (``refusedJobs``, reasons in
  ``refusals``) and never submitted; so is a job larger than the whole environment.
- **Retries exhausted** (a job FAILED with ``RETRIES_EXHAUSTED``): the dispositions'
  own rule, :func:`~quotagov.governance.dispositions.rules.on_retries_exhausted`,
  decides it: ``resubmit`` (a successor in the same share) or ``reclassify`` (the next
  share of the class) when the ``maxResubmits`` cap allows; ``abandon`` when nothing
  else remains; otherwise the owner is asked (``askOwner``) and answers after
  ``decision_delay_seconds`` with ``owner_choice`` (or, when that is not possible, the
  first choice that is: resubmit, reclassify, abandon).
- **Thrash guard**: a job preempted ``thrashGuard.preemptions`` times within
  ``windowSeconds`` (:func:`~quotagov.governance.dispositions.rules.thrash_detected`)
  is terminated and reclassified into the next share, when the cap allows.
- A successor needs the work its predecessor did not save: the remaining RUNNING
  seconds after the last checkpoint (``checkpointIntervalSeconds``), or all of it.
  It is submitted ``reaction_seconds`` after the decision, at the original's
  priority level, and routed again into its target share.

- **A scenario's admin actions** (``Workload.actions``) are replayed at their times
  as an admin's Batch calls, around quotagov like in the scenario: ``UpdateServiceJob``
  sets the job's ``schedulingPriority``, ``TerminateServiceJob`` fails it
  (``TERMINATED``, no disposition: it did not run out of retries),
  ``UpdateQuotaShare`` changes the policy's share of that name from then on. An action
  whose target is not in the run (a job refused at submission, a share the policy does
  not have), whose job had already ended, or whose new configuration the scheduler
  refuses is skipped. Each one is listed in ``scenarioActions`` with its outcome
  (``applied``/``skipped``) and, when skipped, the reason.

Counted per run: dispositions by kind (``resubmit`` and ``reclassify`` count
successors, whatever asked for them; ``askOwner`` the owner's decisions asked for;
``thrashGuard`` the early terminations; ``abandon`` the jobs given up), and every
action in ``actions`` (time, kind, job, successor, share, why).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from quotagov.batch_semantics import TERMINAL_STATUSES, saved_seconds
from quotagov.governance.dispositions.record import Choice
from quotagov.governance.dispositions.rules import (
    choices_for_generation,
    next_share,
    on_retries_exhausted,
    thrash_detected,
)
from quotagov.governance.routing import NotATeamMemberError, RoutingInput, route
from quotagov.policy.models import Policy, WorkloadClass
from quotagov.policy.roles import representative_role
from quotagov.scheduler import (
    Engine,
    EngineError,
    InvalidConfigError,
    JobSpec,
    Options,
    ScenarioAction,
    ShareConfig,
    Transition,
)
from quotagov.scheduler.metrics import (
    JobClock,
    capacity_instance_seconds,
    metrics_block,
    usage_of_jobs,
    usage_of_shares,
)
from quotagov.scheduler.simulation import cyclic_gc_paused, normalize
from quotagov.scheduler.state import HOLDING_STATES, REASON_RETRIES_EXHAUSTED
from quotagov_tools.whatif.mapping import KNOWN_GPUS
from quotagov_tools.whatif.workload import Workload, WorkloadJob

OwnerChoice = Literal["resubmit", "reclassify", "abandon"]

#: Kinds of ``dispositions`` counted (successors by kind, asks, early terminations).
DISPOSITION_KINDS = ("resubmit", "reclassify", "askOwner", "thrashGuard", "abandon")
#: ``statusReason`` of a job the thrash guard terminated.
REASON_THRASH_GUARD = "THRASH_GUARD"
#: The ``RoleArn`` a what-if job names when the policy binds no execution role to its
#: team or class: routing then refuses it, as it refuses such a submission.
NO_BOUND_ROLE = "arn:aws:iam::111122223333:role/whatif-training"
#: Points kept of the sorted waits and completions for the plots (quantiles).
PLOT_POINTS = 1000


@dataclass(frozen=True, slots=True)
class LoopOptions:
    """How the governance loop and the scheduler behave in a run.

    Attributes:
        decision_delay_seconds: how long an asked owner takes to decide (seconds).
        owner_choice: what the owner then chooses.
        reaction_seconds: the controller's delay from a job event to its action
            (EventBridge, Lambda, ``SubmitServiceJob``), seconds.
        startup_seconds: SCHEDULED/STARTING time of every attempt (scheduler option).
        queueing: ``STRICT_FIFO`` or ``BEST_EFFORT_FIFO`` (scheduler option).
        series_bins: points of the used-capacity-over-time series.
        dispositions: False to leave out the controller's dispositions and thrash
            guard (the replay of a history, whose successors are its own jobs:
            :mod:`.calibration`).
    """

    decision_delay_seconds: float = 3600.0
    owner_choice: OwnerChoice = "resubmit"
    reaction_seconds: float = 0.0
    startup_seconds: float = 0.0
    queueing: Literal["STRICT_FIFO", "BEST_EFFORT_FIFO"] = "STRICT_FIFO"
    series_bins: int = 200
    dispositions: bool = True


@dataclass(slots=True)
class _Job:
    """What the loop knows of a submitted job."""

    source: WorkloadJob
    workload_class: WorkloadClass
    share: str
    generation: int
    original: str
    preempted_at: list[float] = field(default_factory=list)
    thrashing: bool = False


def policy_shares(policy: Policy) -> list[ShareConfig]:
    """The policy's quota shares as scheduler share configurations."""
    return [
        ShareConfig.from_batch({"quotaShareName": s.quotaShareName, **s.batch_configuration()})
        for s in policy.quotaShares
    ]


def default_capacity(policy: Policy) -> dict[str, int]:
    """The environment a policy implies: the sum of its shares' limits per instance type."""
    out: dict[str, int] = {}
    for share in policy.quotaShares:
        for limit in share.capacityLimits:
            out[limit.capacityUnit] = out.get(limit.capacityUnit, 0) + limit.maxCapacity
    return out


class _Router:
    """:func:`route` for workload jobs, cached by everything routing reads."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._cache: dict[tuple[Any, ...], tuple[str | None, int, int | None, list[str]]] = {}

    def level_of(self, job: WorkloadJob) -> str | None:
        team = self.policy.teams.get(job.team)
        if job.priorityLevel:
            return job.priorityLevel
        return team.directLevels[0] if team else None

    def route(
        self, job: WorkloadJob, share: str | None
    ) -> tuple[str | None, int, int | None, list[str]]:
        """``(share, schedulingPriority, retries, refusal reasons)`` for the job."""
        level = self.level_of(job)
        key = (
            job.team,
            job.workloadClass,
            level,
            share,
            job.instanceType,
            job.instanceCount,
            job.checkpointIntervalSeconds is not None,
        )
        found = self._cache.get(key)
        if found is None:
            found = self._route(job, share, level)
            self._cache[key] = found
        return found

    def _route(
        self, job: WorkloadJob, share: str | None, level: str | None
    ) -> tuple[str | None, int, int | None, list[str]]:
        team = self.policy.teams.get(job.team)
        if team is None:
            return None, 0, None, [f"team: unknown team {job.team!r}"]
        if not team.members:
            return None, 0, None, [f"team: team {job.team!r} has no member to submit as"]
        role = representative_role(
            [*team.executionRoles, *_class_roles(self.policy, job.workloadClass)]
        )
        routing_input = RoutingInput.from_workload_row(
            principal=team.members[0].principal,
            team=job.team,
            workload_class=job.workloadClass,
            priority_level=level or "",
            quota_share_name=share,
            instance_type=job.instanceType,
            instance_count=job.instanceCount,
            role_arn=role or NO_BOUND_ROLE,
            checkpoint_interval_seconds=job.checkpointIntervalSeconds,
        )
        try:
            decision = route(self.policy, routing_input)
        except NotATeamMemberError as exc:
            return None, 0, None, [str(exc)]
        if not decision.accepted or decision.routing is None:
            return None, 0, None, decision.reasons
        r = decision.routing
        return r.quotaShareName, r.schedulingPriority, r.preemptionRetriesBeforeTermination, []


class _UsedSeries:
    """Instances held in the whole environment over time (a step function)."""

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts
        self.used = 0
        self.steps: list[tuple[float, int]] = [(0.0, 0)]

    def __call__(self, t: Transition) -> None:
        if t.to == "SCHEDULED":
            self.used += self.counts[t.jobName]
        elif t.from_ in HOLDING_STATES and t.to not in HOLDING_STATES:
            self.used -= self.counts[t.jobName]
        else:
            return
        if self.steps[-1][0] == t.at:
            self.steps[-1] = (t.at, self.used)
        else:
            self.steps.append((t.at, self.used))

    def binned(self, end: float, bins: int) -> list[list[float]]:
        """``[[bin start seconds, mean instances held in the bin], ...]`` over ``[0, end]``.

        The ``bins`` edges are ``end * i / bins``; each step of the step function adds
        ``instances x seconds`` to every bin it overlaps, found by bisection on the
        edges, so a piece always lands in the bin that holds it (a load held the whole
        run gives the same mean in every bin). Means are rounded to 6 places.
        """
        if end <= 0 or bins < 1:
            return []
        edges = [end * i / bins for i in range(bins)] + [end]
        sums = [0.0] * bins
        steps = [*self.steps, (end, 0)]
        for (t0, used), (t1, _) in itertools.pairwise(steps):
            a, b = max(0.0, t0), min(end, t1)
            if not used or b <= a:
                continue
            i = min(bins - 1, bisect.bisect_right(edges, a) - 1)
            while a < b and i < bins:
                edge = min(b, edges[i + 1])
                sums[i] += used * (edge - a)
                a = edge
                i += 1
        widths = [edges[i + 1] - edges[i] for i in range(bins)]
        return [
            [edges[i], round(sums[i] / widths[i], 6) if widths[i] else 0.0] for i in range(bins)
        ]


def _quantiles(values: Sequence[float], points: int = PLOT_POINTS) -> list[float]:
    """At most ``points`` evenly spaced order statistics of the sorted ``values``."""
    ordered = sorted(values)
    n = len(ordered)
    if n <= points:
        return ordered
    return [ordered[min(n - 1, round(i * (n - 1) / (points - 1)))] for i in range(points)]


class GovernedRun:
    """A workload replayed under a policy: build, :meth:`run`, read :attr:`result`.

    Args:
        policy: the governance policy (validated).
        workload: the jobs.
        capacity: the service environment, instances per type (None: the workload's,
            else :func:`default_capacity`).
        options: the loop's behaviour.

    Raises:
        quotagov.scheduler.InvalidConfigError: the policy's shares do not make a valid
            job queue (the policy validator refuses those first).
    """

    def __init__(
        self,
        policy: Policy,
        workload: Workload,
        capacity: Mapping[str, int] | None = None,
        options: LoopOptions | None = None,
    ) -> None:
        self.policy = policy
        self.workload = workload
        self.options = options or LoopOptions()
        self.capacity = dict(capacity or workload.capacity or default_capacity(policy))
        self.engine = Engine(
            self.capacity,
            policy_shares(policy),
            Options(startupSeconds=self.options.startup_seconds, queueing=self.options.queueing),
            start=0,
        )
        self.router = _Router(policy)
        self.share_names = frozenset(s.quotaShareName for s in policy.quotaShares)
        self.jobs: dict[str, _Job] = {}
        self.counts: dict[str, int] = {}
        self.refused: list[tuple[WorkloadJob, str]] = []
        #: Disposition counts by ``("total",)``, ``("share", name)``, ``("team", name)``.
        self.dispositions: dict[tuple[str, ...], dict[str, int]] = {}
        self.actions: list[dict[str, Any]] = []
        #: The scenario's admin actions as replayed (:meth:`_replay`).
        self.scenario_actions: list[dict[str, Any]] = []
        self.successor_of: dict[str, str] = {}
        self.names = {j.name for j in workload.jobs}
        self.clock = JobClock()
        self.series = _UsedSeries(self.counts)
        self.engine.add_listener(self.clock)
        self.engine.add_listener(self.series)
        self.engine.add_listener(self._on_transition)

    # -- submission ------------------------------------------------------------------

    def _submit(
        self,
        job: WorkloadJob,
        name: str,
        at: float,
        share: str | None,
        generation: int,
        original: str,
        run_seconds: float,
    ) -> str | None:
        """Route and schedule one submission; the refusal reason, or None when submitted."""
        env = self.capacity.get(job.instanceType, 0)
        if job.instanceCount > env:
            return (
                f"instanceCount: {job.instanceCount} x {job.instanceType} is larger than the "
                f"environment ({env} of that type)"
            )
        routed, priority, retries, reasons = self.router.route(job, share)
        if routed is None:
            return reasons[0] if reasons else "routing: refused"
        klass = self.policy.workloadClasses[job.workloadClass]
        spec = JobSpec(
            jobName=name,
            quotaShareName=routed,
            instanceType=job.instanceType,
            instanceCount=job.instanceCount,
            runSeconds=run_seconds if math.isfinite(run_seconds) else None,
            schedulingPriority=priority,
            preemptionRetriesBeforeTermination=retries,
            checkpointIntervalSeconds=job.checkpointIntervalSeconds,
            submittedAt=at,
        )
        try:
            self.engine.schedule_submission(spec)
        except EngineError as exc:  # a value the scheduler refuses: a refusal, not a crash
            return f"{job.origin or name}: {exc}"
        self.jobs[name] = _Job(job, klass, routed, generation, original)
        self.counts[name] = job.instanceCount
        return None

    # -- the loop --------------------------------------------------------------------

    def _on_transition(self, t: Transition) -> None:
        info = self.jobs.get(t.jobName)
        if info is None or t.kind is None or not self.options.dispositions:
            return
        info.preempted_at.append(t.at)
        if t.to == "FAILED" and t.reason == REASON_RETRIES_EXHAUSTED:
            self._exhausted(t, info)
        elif t.to == "RUNNABLE":
            self._thrash_check(t, info)

    def _count(self, kind: str, info: _Job) -> None:
        """Count a disposition in the total, the job's share and its team."""
        for key in (("total",), ("share", info.share), ("team", info.source.team)):
            counts = self.dispositions.setdefault(key, dict.fromkeys(DISPOSITION_KINDS, 0))
            counts[kind] += 1

    def _log(self, at: float, action: str, job: str, why: str, **extra: Any) -> None:
        self.actions.append({"at": at, "action": action, "jobName": job, "reason": why, **extra})

    def _exhausted(self, t: Transition, info: _Job) -> None:
        klass = info.workload_class
        verdict = on_retries_exhausted(info.generation, klass, info.share)
        choices = verdict.choices
        why = f"FAILED after {len(info.preempted_at)} preemption(s): retries exhausted"
        if verdict.choice in (Choice.RESUBMIT, Choice.RECLASSIFY):
            self._successor(
                t.jobName,
                info,
                verdict.choice,
                t.at + self.options.reaction_seconds,
                f"{why}; class policy {verdict.choice}",
            )
        elif verdict.choice is Choice.ABANDON:
            self._count("abandon", info)
            self._log(
                t.at,
                "abandon",
                t.jobName,
                f"{why}; maxResubmits={klass.onRetriesExhausted.maxResubmits} reached",
            )
        else:
            self._count("askOwner", info)
            self._log(t.at, "askOwner", t.jobName, f"{why}; owner asked ({', '.join(choices)})")
            at = t.at + self.options.decision_delay_seconds
            wanted = Choice(self.options.owner_choice)
            choice = wanted if wanted in choices else choices[0]
            name = t.jobName

            def decide(engine: Engine) -> None:
                if choice is Choice.ABANDON:
                    self._count("abandon", info)
                    self._log(engine.now, "abandon", name, "the owner abandoned it")
                else:
                    self._successor(name, info, choice, engine.now, f"the owner chose {choice}")

            self.engine.schedule_action(at, decide)

    def _thrash_check(self, t: Transition, info: _Job) -> None:
        guard = info.workload_class.thrashGuard
        if guard is None or info.thrashing:
            return
        if not thrash_detected([round(x * 1000) for x in info.preempted_at], guard):
            return
        if Choice.RECLASSIFY not in choices_for_generation(
            info.generation, info.workload_class, info.share
        ):
            return
        info.thrashing = True
        name = t.jobName
        why = (
            f"thrash guard: {guard.preemptions} preemptions within {guard.windowSeconds} s "
            f"in share {info.share!r}"
        )

        def terminate_and_reclassify(engine: Engine) -> None:
            if engine.job(name).status in ("SUCCEEDED", "FAILED"):
                return
            self._count("thrashGuard", info)
            self._log(engine.now, "thrashGuard", name, why)
            self._successor(name, info, Choice.RECLASSIFY, engine.now, why, terminate_first=True)

        self.engine.schedule_action(t.at + self.options.reaction_seconds, terminate_and_reclassify)

    def _successor(
        self,
        name: str,
        info: _Job,
        choice: Choice,
        at: float,
        why: str,
        *,
        terminate_first: bool = False,
    ) -> None:
        """Submit the successor of ``name`` (at ``at``, >= now) in its target share."""
        engine = self.engine
        view = engine.job(name)
        remaining = view.remainingSeconds
        if remaining is not None and view.status == "RUNNING" and view.runningSince is not None:
            # terminated while running: only what the last checkpoint saved is kept
            ran = engine.now - view.runningSince
            remaining += ran - saved_seconds(ran, info.source.checkpointIntervalSeconds)
        if terminate_first:
            engine.terminate(name, REASON_THRASH_GUARD)
        target = info.share
        if choice is Choice.RECLASSIFY:
            target = next_share(info.workload_class, info.share) or info.share
        successor = f"{info.original}-r{info.generation + 1}"
        while successor in self.jobs or successor in self.names:
            successor += "'"  # a workload job already has that name
        work = remaining if remaining is not None and remaining > 0 else info.source.runSeconds
        refused = self._submit(
            info.source,
            successor,
            max(at, engine.now),
            target,
            info.generation + 1,
            info.original,
            work,
        )
        if refused is not None:
            # the chain ends with the predecessor's failure (counted in failedJobs)
            self._log(engine.now, "successorRefused", name, refused, share=target)
            return
        self.successor_of[name] = successor
        self._count(str(choice), info)
        self._log(at, str(choice), name, why, successor=successor, share=target)

    # -- a scenario's admin actions ----------------------------------------------------

    def _replay(self, action: ScenarioAction) -> None:
        """Schedule ``action`` at its time; it records its outcome in :attr:`scenario_actions`."""
        fields = dict(action.fields)

        def apply(engine: Engine) -> None:
            skipped = self._apply_admin_call(engine, action.type, fields)
            entry: dict[str, Any] = {"at": engine.now, "type": action.type, **fields}
            entry["outcome"] = "applied" if skipped is None else "skipped"
            if skipped is not None:
                entry["reason"] = skipped
            self.scenario_actions.append(entry)

        self.engine.schedule_action(action.at, apply)

    def _apply_admin_call(self, engine: Engine, kind: str, fields: Mapping[str, Any]) -> str | None:
        """Make the admin's Batch call now; why it was skipped, or None when applied."""
        if kind == "UpdateQuotaShare":
            share = str(fields["quotaShareName"])
            if share not in self.share_names:
                return f"the policy has no quota share {share!r}"
            changes = {k: v for k, v in fields.items() if k != "quotaShareName"}
            try:
                engine.update_share(share, **changes)
            except InvalidConfigError as exc:
                return "; ".join(exc.faults)
            return None
        name = str(fields["jobName"])
        if name not in self.jobs:
            return f"job {name!r} was refused at submission"
        status = engine.job(name).status
        if status in TERMINAL_STATUSES:
            return f"job {name!r} had already ended ({status})"
        if kind == "UpdateServiceJob":
            engine.update_priority(name, int(fields["schedulingPriority"]))
        else:
            engine.terminate(name)
        return None

    # -- running ---------------------------------------------------------------------

    def run(self, horizon: float | None = None) -> dict[str, Any]:
        """Submit the workload, run until nothing is pending (or to ``horizon`` seconds),
        return :attr:`result`. A job whose ``runSeconds`` is ``math.inf`` never
        completes by itself (a job still running when a history was exported)."""
        for job in self.workload.jobs:
            refused = self._submit(
                job, job.name, job.submittedAt, job.quotaShareName, 0, job.name, job.runSeconds
            )
            if refused is not None:
                self.refused.append((job, refused))
        for action in self.workload.actions:
            self._replay(action)
        with cyclic_gc_paused():
            self.engine.run(horizon)  # listeners see every transition; none is kept
            self.result = self._result()
        return self.result

    def _result(self) -> dict[str, Any]:
        engine = self.engine
        end = engine.now
        views = engine.jobs()
        waits = {v.jobName: v.waitSeconds for v in views}
        held = self.clock.held_until(end)
        integrals = engine.usage_integrals()
        cap_seconds = capacity_instance_seconds(self.capacity, end)
        origins = {
            name: self.jobs[info.original].source.submittedAt
            for name, info in self.jobs.items()
            if info.generation
        }
        carried = set(self.successor_of)
        share_names = [s.quotaShareName for s in self.policy.quotaShares]
        by_share: dict[str, list[Any]] = {n: [] for n in share_names}
        by_team: dict[str, list[Any]] = {}
        for v in views:
            by_share.setdefault(v.quotaShareName, []).append(v)
            by_team.setdefault(self.jobs[v.jobName].source.team, []).append(v)
        refused_by_team: dict[str, int] = {}
        refusals: dict[str, int] = {}
        for job, reason in self.refused:
            refusals[reason] = refusals.get(reason, 0) + 1
            refused_by_team[job.team] = refused_by_team.get(job.team, 0) + 1
            by_team.setdefault(job.team, [])

        def block(
            jobs: list[Any], usage: Any, key: tuple[str, ...], refused: int = 0
        ) -> dict[str, Any]:
            out = metrics_block(
                jobs,
                usage,
                waits,
                cap_seconds,
                origins=origins,
                carried_on=carried,
                refused=refused,
            )
            out["dispositions"] = dict(
                self.dispositions.get(key) or dict.fromkeys(DISPOSITION_KINDS, 0)
            )
            return out

        total = block(views, usage_of_shares(integrals, share_names), ("total",), len(self.refused))
        gpus = {**KNOWN_GPUS, **self.workload.gpusPerInstance}
        if all(v.instanceType in gpus for v in views):
            total["lostGpuSeconds"] = sum(
                v.lostSeconds * v.instanceCount * gpus[v.instanceType] for v in views
            )
        shares = {
            n: block(by_share[n], usage_of_shares(integrals, [n]), ("share", n))
            for n in share_names
        }
        teams = {
            t: block(jobs, usage_of_jobs(jobs, held), ("team", t), refused_by_team.get(t, 0))
            for t, jobs in sorted(by_team.items())
        }
        completions: dict[str, list[float]] = {}
        for v in views:
            if v.status == "SUCCEEDED" and v.stoppedAt is not None:
                team = self.jobs[v.jobName].source.team
                start = origins.get(v.jobName, v.submittedAt)
                completions.setdefault(team, []).append(v.stoppedAt - start)
        all_waits = [w for ws in waits.values() for w in ws]
        result: dict[str, Any] = normalize(
            {
                "durationSeconds": end,
                "capacity": dict(self.capacity),
                "total": total,
                "shares": shares,
                "teams": teams,
                "refusals": dict(sorted(refusals.items(), key=lambda kv: -kv[1])),
                "actions": self.actions,
                "scenarioActions": self.scenario_actions,
                "series": {
                    "usedCapacity": self.series.binned(end, self.options.series_bins),
                    "waitQuantiles": _quantiles(all_waits),
                    "completionByTeam": {t: _quantiles(c) for t, c in sorted(completions.items())},
                    "lostByShare": {n: shares[n]["lostInstanceSeconds"] for n in share_names},
                },
            }
        )
        return result


def run_policy(
    policy: Policy,
    workload: Workload,
    capacity: Mapping[str, int] | None = None,
    options: LoopOptions | None = None,
) -> dict[str, Any]:
    """Replay ``workload`` under ``policy``; the run's result (see :class:`GovernedRun`).

    Returns:
        ``{durationSeconds, capacity, total, shares, teams, refusals, actions,
        scenarioActions, series}``;
        ``total``, each share and each team is a :func:`~quotagov.scheduler.metrics.metrics_block`
        (``total`` also has ``dispositions`` and, when every instance type's GPUs are
        known, ``lostGpuSeconds``); numbers normalized.
    """
    return GovernedRun(policy, workload, capacity, options).run()


def _class_roles(policy: Policy, class_name: str) -> list[str]:
    """The execution roles bound to workload class ``class_name`` ([] when unknown)."""
    klass = policy.workloadClasses.get(class_name)
    return list(klass.executionRoles) if klass is not None else []
