"""Calibration: replay an exported history under the policy in force, job by job.

``quotagov whatif calibrate HISTORY --policy DEPLOYED.yaml --out DIR`` answers "how far
can the what-if be trusted on this queue": the jobs of a history
(``quotagov history export``, or ``quotagov demo --history-out``) are replayed as they
were submitted to Batch, and the replay is compared with what happened.

The replay (:func:`replay`):

- every job of the history at its own submission time, in the quota share Batch put
  it in (``quotaShareName``), routed by the policy for its ``schedulingPriority`` and
  ``preemptionRetriesBeforeTermination`` (:class:`~.governed.GovernedRun`); the
  controller's successors are jobs of the history, so the loop's own dispositions and
  thrash guard are off (``LoopOptions.dispositions=False``);
- the history's ``apiCall`` lines (``UpdateServiceJob``, ``UpdateQuotaShare``,
  ``TerminateServiceJob``) at their times, as a scenario's admin actions;
- a job's RUNNING seconds: for a job that SUCCEEDED, its last attempt plus what
  checkpoints saved before (:func:`~.importers.run_seconds_of`); a job still running
  or queued at the export, or one that failed or was terminated, never completes by
  itself in the replay (how long it needed is unknown; it ends, if at all, by
  preemptions or calls, as it did);
- up to the history's end (its latest time), so a job unfinished there is compared
  in the state it was in.

Compared per job (:func:`compare`): first start, end (seconds, replay minus history),
preemption count and final state. A job that differs gets the reason when one is known
(:func:`_reason`): the policy refuses it now, its priority changed by a call the
history does not carry, it was terminated by one, or it never started; otherwise "a
Batch decision the spec (``docs/simulator/spec.md``) does not reproduce, or an event
missing from the history".

The document (``calibration.json``)::

    {"history", "jobs", "compared", "observedSeconds",
     "startErrorSeconds": {"p50", "p95", "max"}, "endErrorSeconds": {...},
     "samePreemptions": share, "sameFinalState": share, "exact": bool,
     "worst": [ROW, ...], "rows": [ROW, ...]}
    ROW = {"jobName", "startHistory", "startReplay", "endHistory", "endReplay",
           "startErrorSeconds", "endErrorSeconds", "preemptions": [history, replay],
           "finalState": [history, replay], "reason",     # reason None: the same
           "divergesAt"}                                  # differing rows only

``worst`` lists the differing jobs by when they first differ (``divergesAt``): the
first is where the replay left the history; a later one without a reason of its own is
marked as most likely its consequence.

Errors are absolute seconds; a job that started (or ended) on one side only has no
start (end) error and counts under ``sameFinalState``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from quotagov.policy.models import Policy
from quotagov.scheduler import ScenarioAction
from quotagov.scheduler.metrics import percentile
from quotagov_tools.whatif.errors import WorkloadError
from quotagov_tools.whatif.governed import GovernedRun, LoopOptions, default_capacity
from quotagov_tools.whatif.importers import run_seconds_of
from quotagov_tools.whatif.mapping import Placement
from quotagov_tools.whatif.workload import Workload, WorkloadJob

#: Rows listed under ``worst``.
WORST = 10
#: The reason given when nothing known explains a difference.
UNEXPLAINED = (
    "no known cause: a Batch decision the spec does not reproduce, or an event missing "
    "from the history"
)


@dataclass(frozen=True, slots=True)
class Observed:
    """What happened to one job, seconds from the history's first submission.

    Attributes:
        name: the job's name in the replay (a repeated Batch name gets ``#2``...).
        status: Batch's status at the export.
        statusReason: Batch's reason for it (None when none).
        schedulingPriority: the priority at the export.
        firstStartedAt, stoppedAt: first attempt's start; end (None: not ended).
        preemptions: preempted attempts.
    """

    name: str
    status: str
    statusReason: str | None
    schedulingPriority: int | None
    firstStartedAt: float | None
    stoppedAt: float | None
    preemptions: int


@dataclass(frozen=True, slots=True)
class History:
    """A history read for calibration: the workload to replay and what happened.

    Attributes:
        workload: the jobs pinned to their shares, and the ``apiCall`` lines as actions.
        observed: job name -> what happened.
        end: the history's latest time (seconds from the first submission).
        calls: job name -> the ``apiCall`` event names that touched it.
    """

    workload: Workload
    observed: dict[str, Observed]
    end: float
    calls: dict[str, list[str]]


def _seconds(value: Any) -> float | None:
    return None if value is None else float(value)


def read_history(path: str | Path, *, maps: Mapping[str, Placement]) -> History:
    """Read a history file for :func:`replay`.

    Args:
        path: JSON lines of ``quotagov history export`` (job lines and ``apiCall`` lines).
        maps: placement of untagged jobs by share (``--map SHARE=TEAM:CLASS``).

    Raises:
        WorkloadError: unreadable file, a line that is not a JSON object, a job line
            without ``jobName``, ``instanceType``, ``instanceCount``, ``submittedAt``
            or ``attempts``, an untagged job whose share is not mapped, no job at all
            (line and field named; every fault listed).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise WorkloadError([f"{path}: cannot read: {exc.strerror}"]) from exc
    faults: list[str] = []
    raw_jobs: list[tuple[str, dict[str, Any]]] = []
    raw_calls: list[tuple[str, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        if not isinstance(item, dict):
            faults.append(f"{where}: not a JSON object")
        elif item.get("record") == "apiCall":
            raw_calls.append((where, item))
        else:
            missing = [
                k
                for k in ("jobName", "instanceType", "instanceCount", "submittedAt", "attempts")
                if item.get(k) is None
            ]
            faults += [f"{where}, field {k}: missing" for k in missing]
            if not missing:
                raw_jobs.append((where, item))
    if not raw_jobs and not faults:
        faults.append(f"{path}: no job to replay")
    if faults:
        raise WorkloadError(faults)
    t0 = min(float(item["submittedAt"]) for _, item in raw_jobs)
    times = [t0]
    jobs: list[WorkloadJob] = []
    observed: dict[str, Observed] = {}
    by_id: dict[str, str] = {}
    seen: dict[str, int] = {}
    for where, item in sorted(raw_jobs, key=lambda wi: float(wi[1]["submittedAt"])):
        base = str(item["jobName"])
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}#{seen[base]}"
        if item.get("jobId"):
            by_id[str(item["jobId"])] = name
        team, klass, level = item.get("team"), item.get("workloadClass"), item.get("priorityLevel")
        share = item.get("quotaShareName")
        if not team or not klass:
            placement = maps.get(str(share))
            if placement is None:
                faults.append(
                    f"{where}, field team: job {base!r} has no quotagov tags and its share "
                    f"{share!r} is not mapped (give --map SHARE=TEAM:CLASS)"
                )
                continue
            team, klass = placement.team, placement.workloadClass
            level = level or placement.priorityLevel
        attempts = [
            (float(a["startedAt"]) - t0, _seconds(a.get("stoppedAt")))
            for a in item["attempts"]
            if a.get("startedAt") is not None
        ]
        interval = _seconds(item.get("checkpointIntervalSeconds")) or None
        finished: list[Mapping[str, Any]] = [
            {"startedAt": s, "stoppedAt": e - t0} for s, e in attempts if e is not None
        ]
        running = bool(attempts) and attempts[-1][1] is None
        stopped = _seconds(item.get("stoppedAt"))
        if running or not attempts or item.get("status") != "SUCCEEDED":
            # still running or queued at the export, or ended without finishing its
            # work (failed, terminated): how long it needed is unknown, and in the
            # replay it too ends only by what ended it in the history
            run = math.inf
        else:
            run = run_seconds_of(finished, interval)
        times += [t0 + s for s, _ in attempts] + [e for _, e in attempts if e is not None]
        jobs.append(
            WorkloadJob(
                name=name,
                team=str(team),
                workloadClass=str(klass),
                priorityLevel=str(level) if level else None,
                instanceType=str(item["instanceType"]),
                instanceCount=int(item["instanceCount"]),
                submittedAt=float(item["submittedAt"]) - t0,
                runSeconds=run,
                checkpointIntervalSeconds=interval,
                quotaShareName=str(share) if share else None,
                origin=where,
            )
        )
        observed[name] = Observed(
            name=name,
            status=str(item.get("status")),
            statusReason=item.get("statusReason"),
            schedulingPriority=item.get("schedulingPriority"),
            firstStartedAt=attempts[0][0] if attempts else None,
            stoppedAt=None if stopped is None else stopped - t0,
            preemptions=int(item.get("preemptions") or 0),
        )
    actions: list[ScenarioAction] = []
    calls: dict[str, list[str]] = {}
    for index, (where, item) in enumerate(raw_calls):
        at = float(item["eventTime"]) - t0
        times.append(float(item["eventTime"]))
        action, target = _action(item, by_id, where, faults)
        if action is not None:
            actions.append(replace(action, at=max(0.0, at), index=index))
            if target is not None:
                calls.setdefault(target, []).append(action.type)
    if faults:
        raise WorkloadError(faults)
    workload = Workload(path.name, tuple(jobs), actions=tuple(actions))
    return History(workload, observed, max(times) - t0, calls)


def _action(
    item: Mapping[str, Any], by_id: Mapping[str, str], where: str, faults: list[str]
) -> tuple[ScenarioAction | None, str | None]:
    """An ``apiCall`` line as a scenario action, and the job it targets."""
    params = dict(item.get("requestParameters") or {})
    kind = str(item.get("eventName"))
    if kind == "UpdateQuotaShare":
        share = (
            params.pop("quotaShareName", None)
            or str(params.pop("quotaShareArn", "")).rsplit("/", 1)[-1]
        )
        if not share:
            faults.append(f"{where}, field requestParameters: no quotaShareArn")
            return None, None
        fields = {k: v for k, v in params.items() if k != "jobQueue"}
        return ScenarioAction(0.0, kind, {"quotaShareName": share, **fields}), None
    job = by_id.get(str(params.get("jobId")))
    if job is None:  # a job outside the exported window: nothing to replay
        return None, None
    if kind == "UpdateServiceJob":
        if "schedulingPriority" not in params:
            return None, job
        fields = {"jobName": job, "schedulingPriority": int(params["schedulingPriority"])}
        return ScenarioAction(0.0, kind, fields), job
    return ScenarioAction(0.0, "TerminateServiceJob", {"jobName": job}), job


def replay(
    history: History,
    policy: Policy,
    capacity: Mapping[str, int] | None = None,
    options: LoopOptions | None = None,
) -> GovernedRun:
    """The history's jobs and calls replayed under ``policy`` up to the history's end.

    ``capacity``: the environment (None: the sum of the policy's limits,
    :func:`~.governed.default_capacity`). ``options``: the loop's delays and queueing
    (dispositions are always off here).
    """
    loop = replace(options or LoopOptions(), dispositions=False)
    run = GovernedRun(policy, history.workload, capacity or default_capacity(policy), loop)
    run.run(horizon=history.end)
    return run


def compare(history: History, run: GovernedRun) -> dict[str, Any]:
    """The calibration document (module docstring) of ``run`` against ``history``."""
    refused = {job.name: reason for job, reason in run.refused}
    rows: list[dict[str, Any]] = []
    for name, seen in history.observed.items():
        job = history.workload.jobs[[j.name for j in history.workload.jobs].index(name)]
        row: dict[str, Any] = {"jobName": name}
        if name in refused:
            row.update(
                startErrorSeconds=None,
                endErrorSeconds=None,
                preemptions=[seen.preemptions, None],
                finalState=[seen.status, "REFUSED"],
                reason=f"the policy refuses it now: {refused[name]}",
            )
            rows.append(row)
            continue
        view = run.engine.job(name)
        sim_end = view.stoppedAt if view.status in ("SUCCEEDED", "FAILED") else None
        start = _error(view.firstStartedAt, seen.firstStartedAt)
        end = _error(sim_end, seen.stoppedAt)
        state = view.status
        row.update(
            startHistory=seen.firstStartedAt,
            startReplay=view.firstStartedAt,
            endHistory=seen.stoppedAt,
            endReplay=sim_end,
            startErrorSeconds=start,
            endErrorSeconds=end,
            preemptions=[seen.preemptions, len(view.preemptions)],
            finalState=[seen.status, state],
        )
        same = (
            not start
            and not end
            and seen.preemptions == len(view.preemptions)
            and seen.status == state
            and (seen.firstStartedAt is None) == (view.firstStartedAt is None)
            and (seen.stoppedAt is None) == (sim_end is None)
        )
        row["reason"] = None if same else _reason(seen, job, view, history, run)
        rows.append(row)
    starts = [abs(r["startErrorSeconds"]) for r in rows if r["startErrorSeconds"] is not None]
    ends = [abs(r["endErrorSeconds"]) for r in rows if r["endErrorSeconds"] is not None]
    n = len(rows)
    differing = [r for r in rows if r["reason"] is not None]
    _order_by_divergence(differing)
    return {
        "history": history.workload.name,
        "jobs": n,
        "compared": n - sum(1 for r in rows if r["finalState"][1] == "REFUSED"),
        "observedSeconds": history.end,
        "startErrorSeconds": _spread(starts),
        "endErrorSeconds": _spread(ends),
        "samePreemptions": _share(
            sum(1 for r in rows if r["preemptions"][0] == r["preemptions"][1]), n
        ),
        "sameFinalState": _share(
            sum(1 for r in rows if r["finalState"][0] == r["finalState"][1]), n
        ),
        "exact": not differing,
        "worst": differing[:WORST],
        "rows": rows,
    }


def _error(replayed: float | None, happened: float | None) -> float | None:
    if replayed is None or happened is None:
        return None
    return round(replayed - happened, 6)


def _spread(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "max": None}
    ordered = sorted(values)
    return {
        "p50": percentile(ordered, 50),
        "p95": percentile(ordered, 95),
        "max": ordered[-1],
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None


def _diverges_at(row: Mapping[str, Any], end: float) -> float:
    """When a differing job first differs (seconds): the earlier of the two starts when
    they differ, else of the two ends, else the history's end of the job (or of the
    history)."""
    for a, b in ((row["startHistory"], row["startReplay"]), (row["endHistory"], row["endReplay"])):
        if a != b:
            return float(min(x for x in (a, b) if x is not None))
    return float(row["endHistory"]) if row["endHistory"] is not None else end


def _order_by_divergence(rows: list[dict[str, Any]]) -> None:
    """Sort the differing rows by when they first differ (``divergesAt``); a job that
    differs after an earlier one did, for no reason of its own, is marked as what it
    most likely is: a consequence of the first divergence, which the replay then
    carries on."""
    if not rows:
        return
    horizon = max((r["endHistory"] or 0) for r in rows)
    for row in rows:
        row["divergesAt"] = _diverges_at(row, horizon)
    rows.sort(key=lambda r: (r["divergesAt"], r["jobName"]))
    first = rows[0]
    for row in rows[1:]:
        if row["divergesAt"] > first["divergesAt"] and not row["reason"].startswith("its sched"):
            row["reason"] = (
                f"after the replay had diverged at {first['jobName']} "
                f"({first['divergesAt']:g} s): most likely a consequence of it"
            )


def _reason(seen: Observed, job: WorkloadJob, view: Any, history: History, run: GovernedRun) -> str:
    """Why a job's replay differs from its history, when the history says."""
    calls = history.calls.get(seen.name, [])
    if (
        seen.schedulingPriority is not None
        and seen.schedulingPriority != view.schedulingPriority
        and "UpdateServiceJob" not in calls
    ):
        return (
            f"its schedulingPriority ended at {seen.schedulingPriority}, the replay's is "
            f"{view.schedulingPriority}: an UpdateServiceJob the history does not carry"
        )
    if (
        seen.status == "FAILED"
        and seen.statusReason
        and view.status != "FAILED"
        and "TerminateServiceJob" not in calls
    ):
        return (
            f"it failed ({seen.statusReason}) and the replay's did not: a "
            "TerminateServiceJob (or a failure) the history does not carry"
        )
    if view.firstStartedAt is None and seen.firstStartedAt is not None:
        return "it never started in the replay: " + (view.statusReason or "held RUNNABLE")
    if view.quotaShareName != job.quotaShareName:
        return (
            f"the policy routes it to {view.quotaShareName!r}, Batch ran it in "
            f"{job.quotaShareName!r}"
        )
    return UNEXPLAINED


def calibrate(
    history: History,
    policy: Policy,
    capacity: Mapping[str, int] | None = None,
    options: LoopOptions | None = None,
) -> dict[str, Any]:
    """:func:`replay` then :func:`compare`: the calibration document."""
    return compare(history, replay(history, policy, capacity, options))


def fidelity(document: Mapping[str, Any], worst: int = 5) -> dict[str, Any]:
    """The ``fidelity`` section of a what-if report: the calibration without its rows."""
    out = {k: v for k, v in document.items() if k not in ("rows", "worst")}
    out["worst"] = list(document["worst"][:worst])
    return out


def fidelity_lines(doc: Mapping[str, Any]) -> list[str]:
    """The calibration figures as text lines (terminal, report page)."""
    from quotagov.durations import human_duration

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x * 100:.1f} %"

    s, e = doc["startErrorSeconds"], doc["endErrorSeconds"]
    lines = [
        f"{doc['jobs']} jobs of {doc['history']} replayed under the policy in force "
        f"({doc['compared']} compared): "
        + ("exact, every job as it happened" if doc["exact"] else "differences below"),
        f"start error p50 {human_duration(s['p50'])}, p95 {human_duration(s['p95'])}, "
        f"max {human_duration(s['max'])}; end error p50 {human_duration(e['p50'])}, "
        f"p95 {human_duration(e['p95'])}, max {human_duration(e['max'])}",
        f"same preemption count {pct(doc['samePreemptions'])}; "
        f"same final state {pct(doc['sameFinalState'])}",
    ]
    for row in doc["worst"]:
        errors = ", ".join(
            f"{label} {row[key]:+g} s"
            for label, key in (("start", "startErrorSeconds"), ("end", "endErrorSeconds"))
            if row[key]
        )
        states = (
            ""
            if row["finalState"][0] == row["finalState"][1]
            else (f", {row['finalState'][0]} in the history, {row['finalState'][1]} replayed")
        )
        preempt = (
            ""
            if row["preemptions"][0] == row["preemptions"][1]
            else (f", preemptions {row['preemptions'][0]} -> {row['preemptions'][1]}")
        )
        lines.append(
            f"{row['jobName']}: {errors or 'same times'}{states}{preempt}: {row['reason']}"
        )
    return lines


def write_calibration(document: Mapping[str, Any], out: Path) -> list[Path]:
    """Write ``calibration.json`` and ``calibration.png`` (:func:`.plots.calibration_plot`)."""
    from quotagov_tools.whatif.plots import calibration_plot

    out.mkdir(parents=True, exist_ok=True)
    path = out / "calibration.json"
    path.write_text(json.dumps(document, indent=2, allow_nan=False) + "\n")
    png = out / "calibration.png"
    png.write_bytes(calibration_plot(document))
    return [path, png]
