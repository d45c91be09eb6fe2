"""The workload a what-if run replays: service jobs with their team, class and level.

A :class:`Workload` is what every importer returns (:mod:`.importers`): the jobs in
submission order, with times in seconds from the workload's start (the first
submission is at 0 unless the file says otherwise), plus what the import dropped and
why (``notes``), so the report can say it, and a scenario's admin actions (``actions``),
which every run replays (:mod:`.governed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from quotagov.scheduler import ScenarioAction


@dataclass(frozen=True, slots=True)
class WorkloadJob:
    """One job of a workload, as a researcher would submit it to quotagov.

    Attributes:
        name: unique job name (``jobName``).
        team: the policy team it is submitted for.
        workloadClass: the policy workload class.
        priorityLevel: a priority level name of the policy; None = the team's first
            direct level.
        instanceType: SageMaker training instance type (``ml.g5.xlarge``).
        instanceCount: instances (>= 1).
        submittedAt: seconds from the workload's start.
        runSeconds: seconds of RUNNING it needs to succeed (> 0).
        checkpointIntervalSeconds: how often it checkpoints, seconds; None = never.
        quotaShareName: a share asked for explicitly (None: the class's first that fits).
        origin: where it came from (``row 12``, ``line 3``, ``jobs[4]``), for messages.
    """

    name: str
    team: str
    workloadClass: str
    priorityLevel: str | None
    instanceType: str
    instanceCount: int
    submittedAt: float
    runSeconds: float
    checkpointIntervalSeconds: float | None = None
    quotaShareName: str | None = None
    origin: str = ""


@dataclass(frozen=True, slots=True)
class Workload:
    """A workload: its jobs (by submission time), an optional environment, import notes.

    Attributes:
        name: shown in reports (file name by default).
        jobs: the jobs, sorted by ``submittedAt`` (ties keep file order).
        capacity: instances per type of the environment the workload came with (a
            scenario's ``capacity``); None when the format has none.
        notes: counts of what the import left out or changed, by reason
            (``{"pendingDropped": 946, "cpuOnlyDropped": 1087}``).
        gpusPerInstance: GPUs of each instance type, when the importer knows them
            (the OpenB importer does); reports then speak of GPU-hours.
        actions: a scenario's admin actions (``UpdateServiceJob``,
            ``UpdateQuotaShare``, ``TerminateServiceJob``), times shifted like the jobs'
            (an action before the first submission is at 0, still before it); () for
            the other formats.
    """

    name: str
    jobs: tuple[WorkloadJob, ...]
    capacity: dict[str, int] | None = None
    notes: dict[str, int] = field(default_factory=dict)
    gpusPerInstance: dict[str, int] = field(default_factory=dict)
    actions: tuple[ScenarioAction, ...] = ()

    def summary(self) -> dict[str, object]:
        """The report's ``workload`` block: ``{name, jobs, submissionSpanSeconds,
        instanceSeconds, teams, notes, scenarioActions}`` (``scenarioActions``: how many
        admin actions each run replays)."""
        teams: dict[str, int] = {}
        for j in self.jobs:
            teams[j.team] = teams.get(j.team, 0) + 1
        span = (self.jobs[-1].submittedAt - self.jobs[0].submittedAt) if self.jobs else 0
        return {
            "name": self.name,
            "jobs": len(self.jobs),
            "submissionSpanSeconds": span,
            "instanceSeconds": sum(j.runSeconds * j.instanceCount for j in self.jobs),
            "teams": dict(sorted(teams.items())),
            "notes": dict(sorted(self.notes.items())),
            "scenarioActions": len(self.actions),
        }
