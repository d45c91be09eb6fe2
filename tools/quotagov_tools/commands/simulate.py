"""``quotagov simulate SCENARIO [--output table|json|json-no-transitions]``: a what-if run.

- ``table`` (default): a readable timeline of the status changes, the jobs, the admin
  actions and a per-share summary (durations in d/h/m/s, failed jobs), for a person.
- ``json``: exactly the spec's output document (``docs/simulator/spec.md``),
  byte-identical for the same input, written as the run goes
  (:func:`~quotagov.scheduler.stream_output`: the document is never held in memory);
- ``json-no-transitions``: the same document without its ``transitions`` list.

``quotagov simulate WORKLOAD --policy FILE [--format ...]`` replays a workload (any
``whatif`` format) under one governance policy with its rules in the loop
(:mod:`quotagov_tools.whatif.governed`) and shows the controller's admin actions
(resubmissions, reclassifications, owner decisions, thrash-guard terminations,
refusals), the scenario's own admin actions as replayed (applied or skipped, and why;
a skipped one is also said on stderr), what the import left out, failed jobs and
per-share and per-team figures; ``--output json`` prints the run's result document
with the import's ``notes``.

Invalid scenarios exit 2 with one message per fault on stderr. Scenarios of 10,000
jobs or more show a progress bar on stderr when stderr is a terminal (a few lines of
our own, no library).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from quotagov.durations import human_duration
from quotagov.scheduler import ScenarioError, load_scenario, simulate, stream_output
from quotagov.scheduler.simulation import Progress
from quotagov_tools.commands.progress import ProgressBar

#: Scenarios with at least this many jobs get a progress bar (on a terminal).
PROGRESS_THRESHOLD = 10_000

# Transitions shown in the table's timeline (the others follow from them).
_TIMELINE_TO = {"RUNNABLE", "SCHEDULED", "RUNNING", "SUCCEEDED", "FAILED"}


def register(subparsers: Any) -> None:
    """Add the ``simulate`` subcommand."""
    parser = subparsers.add_parser(
        "simulate",
        help="replay a scenario on the local quota-share scheduler",
        description="Replay a scenario (JSON or YAML) on the local scheduler and report "
        "transitions, per-job outcomes and per-share metrics.",
    )
    parser.add_argument(
        "scenario",
        metavar="SCENARIO",
        help="scenario file (.json or .yaml), or with "
        "--policy any workload file of quotagov whatif",
    )
    parser.add_argument(
        "--policy",
        default=None,
        metavar="FILE",
        help="a governance policy: replay the workload with its routing, dispositions and "
        "thrash guard in the loop",
    )
    parser.add_argument(
        "--output",
        choices=("table", "json", "json-no-transitions"),
        default="table",
        help="table (default): timeline and summary; json: the spec's output document; "
        "json-no-transitions: the same without the transitions list",
    )
    parser.add_argument(
        "--allow-unschedulable",
        action="store_true",
        help="run a scenario with jobs that can never be admitted (more instances than "
        "the environment has, or than their share can hold with its borrow limit): they "
        "are reported as UNSCHEDULABLE and never block their share (default: an error)",
    )
    parser.add_argument(
        "--max-rows",
        type=int,
        default=200,
        metavar="N",
        help="table output: at most N timeline rows and N job rows (default 200)",
    )
    from quotagov_tools.commands.workload_options import add_workload_arguments

    add_workload_arguments(parser, positional=False)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns 0, or 2 for an invalid scenario, policy or workload."""
    if args.policy is not None:
        return _run_governed(args)
    try:
        scenario = load_scenario(args.scenario, allow_unschedulable=args.allow_unschedulable)
    except ScenarioError as exc:
        print(f"quotagov simulate: invalid scenario {args.scenario}:", file=sys.stderr)
        if _looks_like_policy(args.scenario):
            print(
                "  (document): this is a governance policy, not a scenario: replay a "
                f"workload under it with quotagov simulate WORKLOAD --policy {args.scenario}",
                file=sys.stderr,
            )
        for fault in exc.faults:
            print(f"  {fault}", file=sys.stderr)
        return 2
    bar: ProgressBar | None = None
    progress: Progress | None = None
    if len(scenario.jobs) >= PROGRESS_THRESHOLD and sys.stderr.isatty():
        bar = ProgressBar(sys.stderr)
        progress = bar
    if args.output in ("json", "json-no-transitions"):
        stream_output(scenario, sys.stdout, progress=progress, transitions=args.output == "json")
        if bar is not None:
            bar.close()
        return 0
    document = simulate(scenario, progress=progress)
    if bar is not None:
        bar.close()
    actions = [{"at": a.at, "type": a.type, **a.fields} for a in scenario.actions]
    sys.stdout.write(render_table(document, max_rows=args.max_rows, actions=actions))
    return 0


def _looks_like_policy(path: str) -> bool:
    """True when ``path`` holds a governance policy document (quota shares and classes)."""
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and {"quotaShares", "workloadClasses"} <= set(data)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return str(value)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    cells = [[_fmt(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
    out = [line, "  ".join("-" * w for w in widths)]
    for row in cells:
        out.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return out


_TIMELINE_COLUMNS = ("t (s)", "job", "change", "reason", "detail")
_JOB_COLUMNS = (
    "job",
    "share",
    "status",
    "firstStartedAt",
    "stoppedAt",
    "attempts",
    "preemptions",
    "lost (s)",
)
_SUMMARY_COLUMNS = (
    "share",
    "used inst-s",
    "borrowed",
    "lent",
    "util (env)",
    "util (limit)",
    "wait p50",
    "p95",
    "max",
    "compl p50",
    "p95",
    "x-share",
    "in-share",
    "lost inst-s",
    "goodput",
    "failed",
    "refused",
)


def _timeline(transitions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The transitions shown (:data:`_TIMELINE_TO`), a RUNNING at once folded into its
    SCHEDULED row (``SCHEDULED -> RUNNING``: no startup time)."""
    timeline = []
    scheduled: dict[str, dict[str, Any]] = {}
    for t in transitions:
        if t["to"] == "SCHEDULED":
            scheduled[t["jobName"]] = t = {**t}
        start = scheduled.get(t["jobName"])
        if t["to"] == "RUNNING" and start is not None and start["at"] == t["at"]:
            start["to"] = "SCHEDULED -> RUNNING"
            continue
        if t["to"] in _TIMELINE_TO:
            timeline.append(t)
    return timeline


def _timeline_lines(document: dict[str, Any], max_rows: int) -> list[str]:
    """The timeline table: a preemption's row names the job it was for and the work lost."""
    timeline = _timeline(document["transitions"])
    details: dict[tuple[Any, str], dict[str, Any]] = {}
    for name, job in document["jobs"].items():
        for p in job["preemptions"]:
            details[(p["at"], name)] = p
    rows = []
    for t in timeline[:max_rows]:
        note = ""
        p = details.get((t["at"], t["jobName"]))
        preempted = t["reason"].startswith("PREEMPTED") or t["reason"] == "RETRIES_EXHAUSTED"
        if preempted and p is not None:
            note = f"for {p['forJob']}, lost {_fmt(p['lostSeconds'])} s"
        rows.append((t["at"], t["jobName"], f"{t['from']} -> {t['to']}", t["reason"], note))
    lines = _table(_TIMELINE_COLUMNS, rows)
    if len(timeline) > max_rows:
        lines.append(f"... {len(timeline) - max_rows} more (use --output json for all)")
    return lines


def _job_lines(jobs: dict[str, Any], max_rows: int) -> list[str]:
    """The jobs table: share, status, times, attempts, preemptions and lost seconds."""
    rows = []
    for name, job in list(jobs.items())[:max_rows]:
        pre = ", ".join(
            f"{p['kind']} at {_fmt(p['at'])} for {p['forJob']}" for p in job["preemptions"]
        )
        rows.append(
            (
                name,
                job["quotaShareName"],
                job["status"],
                job["firstStartedAt"],
                job["stoppedAt"],
                job["attempts"],
                pre or "none",
                job["lostSeconds"],
            )
        )
    lines = _table(_JOB_COLUMNS, rows)
    if len(jobs) > max_rows:
        lines.append(f"... {len(jobs) - max_rows} more jobs")
    return lines


def _summary_row(name: str, m: dict[str, Any]) -> tuple[Any, ...]:
    """One share's (or the total's) metrics, in :data:`_SUMMARY_COLUMNS` order."""
    return (
        name,
        m["usedInstanceSeconds"],
        m["borrowedInstanceSeconds"],
        m["lentInstanceSeconds"],
        m["utilization"],
        m["utilizationOfLimit"],
        human_duration(m["waitSeconds"]["p50"]),
        human_duration(m["waitSeconds"]["p95"]),
        human_duration(m["waitSeconds"]["max"]),
        human_duration(m["completionSeconds"]["p50"]),
        human_duration(m["completionSeconds"]["p95"]),
        m["preemptions"]["CROSS_SHARE"],
        m["preemptions"]["IN_SHARE"],
        m["lostInstanceSeconds"],
        m["goodput"],
        m["failedJobs"],
        m["refusedJobs"],
    )


def _admin_lines(actions: Sequence[dict[str, Any]]) -> list[str]:
    """The scenario's admin actions (``UpdateServiceJob``, ``UpdateQuotaShare``, ...)."""
    if not actions:
        return ["none"]
    rows = []
    for a in actions:
        detail = ", ".join(f"{k}={v}" for k, v in a.items() if k not in ("at", "type"))
        rows.append((a["at"], a["type"], detail))
    return _table(("t (s)", "action", "detail"), rows)


def render_table(
    document: dict[str, Any],
    max_rows: int = 200,
    actions: Sequence[dict[str, Any]] = (),
) -> str:
    """The human-readable report of an output document: timeline, jobs, per-share summary.

    Args:
        document: the simulation's output document (``docs/simulator/spec.md``, "Output").
        max_rows: at most this many timeline rows and job rows (a line says how many
            more there are).
        actions: the scenario's admin actions (``{at, type, ...fields}``), shown in
            their own section.
    """
    metrics = document["metrics"]
    blocks = [*metrics["shares"].items(), ("TOTAL", metrics["total"])]
    return (
        "\n".join(
            [
                f"Scenario: {document['scenario']}",
                "",
                "Timeline",
                *_timeline_lines(document, max_rows),
                "",
                "Jobs",
                *_job_lines(document["jobs"], max_rows),
                "",
                "Admin actions (scenario)",
                *_admin_lines(actions),
                "",
                f"Per-share summary ({human_duration(metrics['durationSeconds'])} simulated;"
                f" {metrics['total']['failedJobs']} failed job(s))",
                *_table(_SUMMARY_COLUMNS, [_summary_row(name, m) for name, m in blocks]),
            ]
        )
        + "\n"
    )


def _run_governed(args: argparse.Namespace) -> int:
    """``simulate WORKLOAD --policy FILE``: one governed run, table or JSON."""
    import json

    from quotagov.scheduler import InvalidConfigError
    from quotagov_tools.commands.workload_options import (
        load_policy_file,
        load_workload,
        loop_options,
    )
    from quotagov_tools.whatif import WhatIfError, run_policy
    from quotagov_tools.whatif.mapping import parse_capacity

    args.workload = args.scenario
    try:
        policy = load_policy_file(args.policy)
        capacity = parse_capacity(args.capacity) or None
        workload = load_workload(args, [policy])
        result = run_policy(policy, workload, capacity, loop_options(args))
    except (WhatIfError, InvalidConfigError) as exc:
        faults = getattr(exc, "faults", [str(exc)])
        print(f"quotagov simulate: {len(faults)} problem(s):", file=sys.stderr)
        for fault in faults:
            print(f"  {fault}", file=sys.stderr)
        return 2
    for a in result["scenarioActions"]:
        if a["outcome"] == "skipped":
            print(
                f"quotagov simulate: scenario action {a['type']} at {_fmt(a['at'])} s "
                f"skipped: {a['reason']}",
                file=sys.stderr,
            )
    if args.output == "json":
        result.pop("series", None)
        result["notes"] = dict(sorted(workload.notes.items()))
        sys.stdout.write(json.dumps(result, sort_keys=True, indent=2) + "\n")
    else:
        sys.stdout.write(
            render_governed(workload.name, args.policy, result, args.max_rows, notes=workload.notes)
        )
    return 0


def _scenario_action_lines(actions: Sequence[dict[str, Any]]) -> list[str]:
    """The scenario's admin actions as replayed: time, call, what it set, outcome."""
    if not actions:
        return ["none"]
    rows = []
    for a in actions:
        detail = ", ".join(
            f"{k}={v}" for k, v in a.items() if k not in ("at", "type", "outcome", "reason")
        )
        outcome = a["outcome"] + (f": {a['reason']}" if "reason" in a else "")
        rows.append((a["at"], a["type"], detail, outcome))
    return _table(("t (s)", "action", "detail", "outcome"), rows)


def render_governed(
    name: str,
    policy: str,
    result: dict[str, Any],
    max_rows: int = 200,
    notes: dict[str, int] | None = None,
) -> str:
    """The table of a governed run: the controller's admin actions, the scenario's
    (replayed), refusals, what the import left out (``notes``), per-share and per-team
    summary."""
    actions = result["actions"]
    rows = [
        (
            f"{_fmt(a['at'])} ({human_duration(a['at'])})",
            a["action"],
            a["jobName"],
            a.get("successor") or "",
            a.get("share") or "",
            a["reason"],
        )
        for a in actions[:max_rows]
    ]
    lines = [
        f"Workload: {name} under policy {policy} "
        f"({human_duration(result['durationSeconds'])} simulated, environment "
        + ", ".join(f"{n} x {t}" for t, n in result["capacity"].items())
        + ")",
        "",
        "Admin actions (the controller's decisions)",
        *(
            _table(("t (s)", "action", "job", "successor", "share", "why"), rows)
            if rows
            else ["none"]
        ),
    ]
    if len(actions) > max_rows:
        lines.append(f"... {len(actions) - max_rows} more (use --output json for all)")
    lines += ["", "Scenario admin actions (replayed as an admin's Batch calls)"]
    lines += _scenario_action_lines(result["scenarioActions"])
    lines += ["", "Refused at submission"]
    refusals = result["refusals"]
    lines += [f"  {n} x {reason}" for reason, n in refusals.items()] or ["  none"]
    left_out = ", ".join(f"{k}: {n}" for k, n in sorted((notes or {}).items()))
    lines += ["", f"Left out by the import: {left_out or 'none'}"]
    blocks = [
        *((f"share {k}", m) for k, m in result["shares"].items()),
        *((f"team {k}", m) for k, m in result["teams"].items()),
        ("TOTAL", result["total"]),
    ]
    lines += [
        "",
        "Summary",
        *_table(_SUMMARY_COLUMNS, [_summary_row(n, m) for n, m in blocks]),
        "",
    ]
    return "\n".join(lines)
