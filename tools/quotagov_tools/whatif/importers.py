"""Workload importers: a scenario, a job history (JSON lines), the OpenB trace, any CSV.

Every importer returns a :class:`~.workload.Workload` or raises
:class:`~.errors.WorkloadError` with every fault found, each naming the row (or line,
or job index) and the field: ``row 12, field num_gpu: 3 GPUs have no --gpu-type``.
What an importer leaves out on purpose is counted in ``Workload.notes``, never
dropped silently.

- ``scenario`` (:func:`from_scenario`): today's scenario format; each job's quota share
  is placed with ``--map SHARE=TEAM:CLASS[:LEVEL]``; the scenario's capacity is the
  environment; its ``schedulingPriority`` values are not used (the policy's levels
  decide); its admin actions are kept (``Workload.actions``) and replayed in every run
  as an admin's Batch calls (:mod:`.governed`).
- ``history`` (:func:`from_history`): the JSON lines ``quotagov history export``
  writes; team, class and level come from quotagov's tags, else from ``--map`` by
  quota share. A job's run time is the RUNNING time it needed: its last attempt plus
  what checkpoints saved in the preempted ones (:func:`quotagov.batch_semantics.saved_seconds`).
  Jobs that never started (``neverStartedDropped``) or were still running at the export
  (``stillRunningDropped``) are counted, not replayed.
- ``openb`` (:func:`from_csv` with :data:`OPENB_COLUMNS`): the Alibaba OpenB GPU pod
  trace (``examples/traces/README.md``; Weng et al., USENIX ATC 2023). QoS classes are
  placed with ``--map``, GPU counts become instance types with ``--gpu-type`` (default:
  ``N`` GPUs -> ``N`` x ``ml.g5.xlarge``; a GPU-sharing task takes a whole GPU), times
  are divided by ``--compress``. A task's run time is ``deletion_time -
  scheduled_time``. ``Pending`` tasks (never placed) and CPU-only tasks are counted
  and dropped (``pendingDropped``, ``cpuOnlyDropped``), as are tasks with no run time
  (``zeroRunDropped``). Every task is assumed to checkpoint every
  ``checkpoint_interval`` seconds (the trace does not say; 0 = never).
- ``csv``: any CSV with a column mapping (:class:`Columns`): ``--column FIELD=COLUMN``
  for each of :data:`COLUMN_FIELDS` (``phase`` optional).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from quotagov.batch_semantics import saved_seconds
from quotagov.scheduler import ScenarioError, load_scenario
from quotagov_tools.whatif.errors import MissingColumnsError, WorkloadError
from quotagov_tools.whatif.mapping import KNOWN_GPUS, GpuType, Placement
from quotagov_tools.whatif.workload import Workload, WorkloadJob

#: Faults reported at most (the rest are counted).
MAX_FAULTS = 25
#: The fields a CSV's ``--column FIELD=COLUMN`` mapping must name (:class:`Columns`).
COLUMN_FIELDS = ("name", "group", "gpus", "submitted", "started", "ended")
#: The fields it may name.
OPTIONAL_COLUMN_FIELDS = ("phase",)


@dataclass(frozen=True, slots=True)
class Columns:
    """Which CSV column holds each field a job needs.

    Attributes:
        name: job id.
        group: the value ``--map`` places into a team and class (OpenB: ``qos``).
        gpus: GPUs asked for (mapped by ``--gpu-type``).
        submitted: submission time, seconds.
        started: time the task was placed, seconds (empty: never placed).
        ended: end time, seconds.
        phase: optional; ``Pending`` rows are counted and dropped.
    """

    name: str
    group: str
    gpus: str
    submitted: str
    started: str
    ended: str
    phase: str | None = None

    @classmethod
    def parse(cls, values: list[str]) -> Columns:
        """``["name=task", "group=queue", ...]`` (the ``--column`` options).

        Raises:
            WorkloadError: an unknown field, or a required field not given.
        """
        fields: dict[str, str] = {}
        faults: list[str] = []
        known = COLUMN_FIELDS + OPTIONAL_COLUMN_FIELDS
        for value in values:
            key, sep, column = value.partition("=")
            if not sep or key not in known or not column:
                faults.append(f"--column {value!r}: expected FIELD=COLUMN, FIELD one of {known}")
            else:
                fields[key] = column
        missing = [k for k in COLUMN_FIELDS if k not in fields]
        if missing:
            faults.append(f"--column: no column given for {', '.join(missing)}")
        if faults:
            raise WorkloadError(faults)
        return cls(**fields)


#: The OpenB pod list's columns (``examples/traces/README.md``).
OPENB_COLUMNS = Columns(
    name="name",
    group="qos",
    gpus="num_gpu",
    submitted="creation_time",
    started="scheduled_time",
    ended="deletion_time",
    phase="pod_phase",
)


class _Faults:
    def __init__(self) -> None:
        self.items: list[str] = []
        self.more = 0

    def add(self, fault: str) -> None:
        if len(self.items) < MAX_FAULTS:
            self.items.append(fault)
        else:
            self.more += 1

    def raise_any(self) -> None:
        if self.items:
            tail = [f"... and {self.more} more faults"] if self.more else []
            raise WorkloadError(self.items + tail)


def _sorted(name: str, jobs: list[WorkloadJob], **kwargs: Any) -> Workload:
    """The workload with its jobs in submission order, times shifted to start at 0.

    Job names are made unique (Batch job names need not be): a repeated name gets
    ``#2``, ``#3``... in file order, counted in ``notes["renamedDuplicates"]``. A
    scenario's ``actions`` move with the jobs (one before the first submission to 0).
    """
    if not jobs:
        raise WorkloadError([f"{name}: no job to replay (notes: {kwargs.get('notes', {})})"])
    seen: dict[str, int] = {}
    taken = {j.name for j in jobs}
    renamed = 0
    for i, job in enumerate(jobs):
        n = seen.get(job.name, 0) + 1
        seen[job.name] = n
        if n > 1:
            new = f"{job.name}#{n}"
            while new in taken:
                n += 1
                new = f"{job.name}#{n}"
            taken.add(new)
            jobs[i] = replace(job, name=new)
            renamed += 1
    if renamed:
        notes = dict(kwargs.get("notes") or {})
        notes["renamedDuplicates"] = renamed
        kwargs["notes"] = notes
    jobs.sort(key=lambda j: j.submittedAt)
    t0 = jobs[0].submittedAt
    if t0:
        jobs = [_shifted(j, t0) for j in jobs]
        kwargs["actions"] = tuple(
            replace(a, at=max(0.0, a.at - t0)) for a in kwargs.get("actions", ())
        )
    return Workload(name, tuple(jobs), **kwargs)


def _shifted(job: WorkloadJob, t0: float) -> WorkloadJob:
    return replace(job, submittedAt=job.submittedAt - t0)


def from_csv(
    path: str | Path,
    *,
    columns: Columns = OPENB_COLUMNS,
    maps: Mapping[str, Placement],
    gpu_types: Mapping[int, GpuType] | None = None,
    compress: float = 1.0,
    checkpoint_interval: float = 900.0,
    limit: int | None = None,
) -> Workload:
    """Import a CSV task list (the OpenB pod list by default).

    Args:
        path: the CSV file.
        columns: which column is which (:data:`OPENB_COLUMNS`).
        maps: group value (``qos``) -> team, class, level.
        gpu_types: GPU count -> instance type and count (default ``N`` x ``ml.g5.xlarge``).
        compress: time compression factor F > 0: every time and duration is divided by F.
        checkpoint_interval: seconds between checkpoints of every job; 0 = none.
        limit: import only the first ``limit`` data rows (a slice of the trace).

    Raises:
        MissingColumnsError: a column ``columns`` names is not in the file.
        WorkloadError: unreadable file, a row with a bad or unmapped value (row number
            and field named).
    """
    if compress <= 0:
        raise WorkloadError([f"--compress: {compress} must be > 0"])
    faults = _Faults()
    notes: dict[str, int] = {}
    jobs: list[WorkloadJob] = []
    path = Path(path)
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise WorkloadError([f"{path}: cannot read: {exc.strerror}"]) from exc
    with handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        wanted = [c for c in vars_of(columns) if c]
        missing = [c for c in wanted if c not in header]
        if missing:
            raise MissingColumnsError(
                [
                    f"{path}: unknown column {c!r} (the file has: {', '.join(header)})"
                    for c in missing
                ]
            )
        for index, row in enumerate(reader):
            if limit is not None and index >= limit:
                break
            job = _csv_job(
                row,
                index + 2,
                columns,
                maps,
                gpu_types,
                compress,
                checkpoint_interval,
                faults,
                notes,
            )
            if job is not None:
                jobs.append(job)
    faults.raise_any()
    return _sorted(path.name, jobs, notes=notes, gpusPerInstance=_gpus_per_instance(gpu_types))


def vars_of(columns: Columns) -> list[str | None]:
    """The column names a :class:`Columns` refers to."""
    return [
        columns.name,
        columns.group,
        columns.gpus,
        columns.submitted,
        columns.started,
        columns.ended,
        columns.phase,
    ]


def _gpus_per_instance(gpu_types: Mapping[int, GpuType] | None) -> dict[str, int]:
    """GPUs of each instance type used: the known ones, else GPUs / instances of the map."""
    if not gpu_types:
        return {"ml.g5.xlarge": 1}
    return {
        t.instanceType: KNOWN_GPUS.get(t.instanceType, max(1, n // t.instanceCount))
        for n, t in gpu_types.items()
    }


def _number(row: Mapping[str, str], column: str, line: int, faults: _Faults) -> float | None:
    text = (row.get(column) or "").strip()
    try:
        value = float(text)
    except ValueError:
        faults.add(f"row {line}, field {column}: {text!r} is not a number")
        return None
    if value < 0:
        faults.add(f"row {line}, field {column}: {text} is negative")
        return None
    return value


def _csv_job(
    row: Mapping[str, str],
    line: int,
    columns: Columns,
    maps: Mapping[str, Placement],
    gpu_types: Mapping[int, GpuType] | None,
    compress: float,
    checkpoint_interval: float,
    faults: _Faults,
    notes: dict[str, int],
) -> WorkloadJob | None:
    def note(key: str) -> None:
        notes[key] = notes.get(key, 0) + 1

    if columns.phase and (row.get(columns.phase) or "").strip() == "Pending":
        note("pendingDropped")
        return None
    gpus_text = (row.get(columns.gpus) or "").strip()
    try:
        gpus = int(gpus_text)
    except ValueError:
        faults.add(f"row {line}, field {columns.gpus}: {gpus_text!r} is not a whole number")
        return None
    if gpus < 0:
        faults.add(f"row {line}, field {columns.gpus}: {gpus} is negative")
        return None
    if gpus == 0:
        note("cpuOnlyDropped")
        return None
    if (row.get(columns.started) or "").strip() == "":
        note("neverStartedDropped")
        return None
    group = (row.get(columns.group) or "").strip()
    placement = maps.get(group)
    if placement is None:
        faults.add(
            f"row {line}, field {columns.group}: {group!r} is not mapped to a team and class "
            f"(give --map {group or 'VALUE'}=TEAM:CLASS)"
        )
        return None
    if gpu_types:
        itype = gpu_types.get(gpus)
        if itype is None:
            faults.add(
                f"row {line}, field {columns.gpus}: {gpus} GPUs have no --gpu-type "
                f"(mapped: {', '.join(str(n) for n in sorted(gpu_types))})"
            )
            return None
    else:
        itype = GpuType("ml.g5.xlarge", gpus)
    submitted = _number(row, columns.submitted, line, faults)
    started = _number(row, columns.started, line, faults)
    ended = _number(row, columns.ended, line, faults)
    if submitted is None or started is None or ended is None:
        return None
    run = ended - started
    if run <= 0:
        note("zeroRunDropped")
        return None
    name = (row.get(columns.name) or "").strip() or f"row-{line}"
    return WorkloadJob(
        name=name,
        team=placement.team,
        workloadClass=placement.workloadClass,
        priorityLevel=placement.priorityLevel,
        instanceType=itype.instanceType,
        instanceCount=itype.instanceCount,
        submittedAt=submitted / compress,
        runSeconds=run / compress,
        checkpointIntervalSeconds=checkpoint_interval or None,
        origin=f"row {line}",
    )


def from_scenario(path: str | Path, *, maps: Mapping[str, Placement]) -> Workload:
    """Import a scenario file; each job's quota share is placed by ``maps``.

    Raises:
        WorkloadError: the scenario is invalid, a share is not mapped, a job has no
            ``runSeconds``.
    """
    try:
        scenario = load_scenario(str(path))
    except ScenarioError as exc:
        raise WorkloadError(exc.faults) from exc
    faults = _Faults()
    jobs: list[WorkloadJob] = []
    for i, spec in enumerate(scenario.jobs):
        placement = maps.get(spec.quotaShareName)
        if placement is None:
            faults.add(
                f"jobs[{i}].quotaShareName: share {spec.quotaShareName!r} is not mapped to a "
                f"team and class (give --map {spec.quotaShareName}=TEAM:CLASS)"
            )
            continue
        if spec.runSeconds is None:
            faults.add(f"jobs[{i}].runSeconds: a what-if job needs a finite run time")
            continue
        jobs.append(
            WorkloadJob(
                name=spec.jobName,
                team=placement.team,
                workloadClass=placement.workloadClass,
                priorityLevel=placement.priorityLevel,
                instanceType=spec.instanceType,
                instanceCount=spec.instanceCount,
                submittedAt=spec.submittedAt,
                runSeconds=spec.runSeconds,
                checkpointIntervalSeconds=spec.checkpointIntervalSeconds,
                quotaShareName=spec.quotaShareName,
                origin=f"jobs[{i}]",
            )
        )
    faults.raise_any()
    return _sorted(
        scenario.name, jobs, capacity=dict(scenario.capacity), actions=tuple(scenario.actions)
    )


#: Keys of one history line (``quotagov history export``).
HISTORY_KEYS = (
    "jobName",
    "jobId",
    "team",
    "workloadClass",
    "priorityLevel",
    "quotaShareName",
    "schedulingPriority",
    "instanceType",
    "instanceCount",
    "submittedAt",
    "startedAt",
    "stoppedAt",
    "status",
    "attempts",
    "checkpointIntervalSeconds",
)


def _history_lines(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise WorkloadError([f"{path}: cannot read: {exc.strerror}"]) from exc
    with handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                yield number, json.loads(text)
            except ValueError as exc:
                yield number, exc


def run_seconds_of(attempts: list[Mapping[str, Any]], interval: float | None) -> float:
    """RUNNING seconds a job needed: its last attempt plus what checkpoints saved before.

    ``attempts`` are ``{startedAt, stoppedAt}`` in seconds, oldest first.
    """
    if not attempts:
        return 0.0
    durations = [max(0.0, float(a["stoppedAt"]) - float(a["startedAt"])) for a in attempts]
    return durations[-1] + sum(saved_seconds(d, interval) for d in durations[:-1])


def from_history(path: str | Path, *, maps: Mapping[str, Placement]) -> Workload:
    """Import a JSON-lines job history (``quotagov history export``).

    Its ``apiCall`` lines (a job's priority changed, a share updated after submission)
    are counted in ``notes["apiCallsNotReplayed"]``: a comparison routes every job as
    each policy would; ``quotagov whatif calibrate`` (:mod:`.calibration`) replays them.

    Raises:
        WorkloadError: a line that is not JSON or lacks a field, an untagged job whose
            share is not mapped (line and field named).
    """
    path = Path(path)
    faults = _Faults()
    notes: dict[str, int] = {}
    jobs: list[WorkloadJob] = []
    for number, item in _history_lines(path):
        where = f"line {number}"
        if isinstance(item, Exception) or not isinstance(item, dict):
            faults.add(f"{where}: not a JSON object")
            continue
        if item.get("record") == "apiCall":  # a share's or job's change: see calibration
            notes["apiCallsNotReplayed"] = notes.get("apiCallsNotReplayed", 0) + 1
            continue
        job = _history_job(item, where, maps, faults, notes)
        if job is not None:
            jobs.append(job)
    faults.raise_any()
    return _sorted(path.name, jobs, notes=notes)


def _history_job(
    item: Mapping[str, Any],
    where: str,
    maps: Mapping[str, Placement],
    faults: _Faults,
    notes: dict[str, int],
) -> WorkloadJob | None:
    for key in ("jobName", "instanceType", "instanceCount", "submittedAt", "attempts"):
        if key not in item:
            faults.add(f"{where}, field {key}: missing")
            return None
    attempts = [
        a
        for a in item["attempts"]
        if a.get("startedAt") is not None and a.get("stoppedAt") is not None
    ]
    if not attempts:
        # still running when the history was exported (started, not stopped), or never
        # started at all: neither has a run to replay
        running = any(a.get("startedAt") is not None for a in item["attempts"])
        key = "stillRunningDropped" if running else "neverStartedDropped"
        notes[key] = notes.get(key, 0) + 1
        return None
    team, klass, level = item.get("team"), item.get("workloadClass"), item.get("priorityLevel")
    if not team or not klass:
        placement = maps.get(str(item.get("quotaShareName")))
        if placement is None:
            faults.add(
                f"{where}, field team: job {item['jobName']!r} has no quotagov tags and its "
                f"share {item.get('quotaShareName')!r} is not mapped (give --map SHARE=TEAM:CLASS)"
            )
            return None
        team, klass = placement.team, placement.workloadClass
        level = level or placement.priorityLevel
    interval = item.get("checkpointIntervalSeconds")
    try:
        run = run_seconds_of(attempts, float(interval) if interval else None)
        count = int(item["instanceCount"])
        submitted = float(item["submittedAt"])
    except (TypeError, ValueError, KeyError) as exc:
        faults.add(f"{where}: bad value ({exc})")
        return None
    if run <= 0:
        notes["zeroRunDropped"] = notes.get("zeroRunDropped", 0) + 1
        return None
    return WorkloadJob(
        name=str(item["jobName"]),
        team=str(team),
        workloadClass=str(klass),
        priorityLevel=str(level) if level else None,
        instanceType=str(item["instanceType"]),
        instanceCount=count,
        submittedAt=submitted,
        runSeconds=run,
        checkpointIntervalSeconds=float(interval) if interval else None,
        origin=where,
    )
