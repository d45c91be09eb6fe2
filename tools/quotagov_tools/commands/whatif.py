"""``quotagov whatif WORKLOAD --policy NAME=FILE [--policy NAME=FILE ...] --out DIR``.

Replays a workload under each governance policy (the deployed YAML), with the
policy's routing, dispositions and thrash guard in the loop, and writes
``DIR/report.json``, ``DIR/report.html`` and the PNG plots; prints a comparison table
and one verdict line per policy. See :mod:`quotagov_tools.whatif` and ``docs/simulator/whatif.md``.

Exit codes: 0 done; 2 bad options, an invalid policy or an unreadable workload (every
fault on stderr, naming the file, row and field).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from quotagov_tools.commands.progress import ProgressBar
from quotagov_tools.commands.workload_options import add_workload_arguments, load_policy_file


def register(subparsers: Any) -> None:
    """Add the ``whatif`` subcommand."""
    p = subparsers.add_parser(
        "whatif",
        help="compare governance policies on a workload (report, plots)",
        description="Replay a workload under each governance policy, governance rules in "
        "the loop, and compare waits, completion, utilization and lost work.",
    )
    add_workload_arguments(p)
    p.add_argument(
        "--policy",
        action="append",
        required=True,
        metavar="NAME=FILE",
        help="a governance policy file (repeatable; the first is the baseline)",
    )
    p.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="directory for report.json, report.html and the plots",
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=1,
        metavar="K",
        help="replay K perturbed copies; figures become median [min..max]",
    )
    p.add_argument(
        "--jitter",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="largest arrival shift of a perturbed copy (default 300 s)",
    )
    p.add_argument(
        "--run-noise",
        type=float,
        default=0.1,
        metavar="F",
        help="largest relative run-time change of a perturbed copy (default 0.1)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes running policies and seeds in parallel (default: cores)",
    )
    p.set_defaults(func=run)


def _policies(values: list[str]) -> dict[str, Any]:
    from quotagov_tools.whatif.errors import OptionError

    out: dict[str, Any] = {}
    faults: list[str] = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            faults.append(f"--policy {value!r}: expected NAME=FILE")
            continue
        if name in out:
            faults.append(f"--policy {value!r}: the name {name!r} is used twice")
            continue
        try:
            out[name] = load_policy_file(path)
        except OptionError as exc:
            faults += exc.faults
    if faults:
        raise OptionError(faults)
    return out


def _fail(exc: Exception) -> int:
    faults = getattr(exc, "faults", [str(exc)])
    print(f"quotagov whatif: {len(faults)} problem(s):", file=sys.stderr)
    for fault in faults:
        print(f"  {fault}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run the comparison; 0 when the report is written, 2 on bad input."""
    from quotagov.scheduler import InvalidConfigError
    from quotagov_tools.commands.workload_options import load_workload, loop_options
    from quotagov_tools.whatif import WhatIf, WhatIfError, run_whatif, write_report
    from quotagov_tools.whatif.mapping import parse_capacity
    from quotagov_tools.whatif.report import comparison_rows, text_table

    try:
        policies = _policies(args.policy)
        capacity = parse_capacity(args.capacity) or None
        workload = load_workload(args, policies.values())
        config = WhatIf(
            policies=policies,
            workload=workload,
            capacity=capacity,
            options=loop_options(args),
            seeds=args.seeds,
            jitter_seconds=args.jitter,
            run_noise=args.run_noise,
            workers=args.workers,
        )
        bar = (
            ProgressBar(sys.stderr, label="whatif", unit="runs done")
            if sys.stderr.isatty()
            else None
        )
        report, series = run_whatif(config, progress=bar)
        if bar is not None:
            bar.close()
    except (WhatIfError, InvalidConfigError) as exc:
        return _fail(exc)
    written = write_report(report, series, args.out)
    w = report["workload"]
    print(
        f"Workload {w['name']}: {_count(w['jobs'], 'job', 'jobs')}, "
        f"{_count(len(policies), 'policy', 'policies')}, "
        f"{w['seeds']} seed(s)" + (" (median [min..max])" if w["seeds"] > 1 else "")
    )
    sys.stdout.write(text_table(comparison_rows(report["policies"])))
    print()
    for line in report["verdicts"].values():
        print(line)
    print()
    for line in summary_lines(report):
        print(line)
    print()
    print("Wrote " + ", ".join(str(p) for p in written))
    return 0


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def summary_lines(report: dict[str, Any]) -> list[str]:
    """What the table does not show: the refusals by reason per policy (with seeds, the
    largest count over the seeds), what the import left out, and the scenario's admin
    actions as replayed (first run)."""
    lines = ["Refused at submission (jobs by reason)"]
    for name, entry in report["policies"].items():
        refusals = entry["refusals"]
        if not refusals:
            lines.append(f"  {name}: none")
        for reason, n in sorted(refusals.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {name}: {n} x {reason}")
    notes = report["workload"]["notes"]
    left_out = ", ".join(f"{k}: {n}" for k, n in notes.items())
    lines.append(f"Left out by the import: {left_out or 'none'}")
    if report["workload"].get("scenarioActions"):
        lines.append("Scenario admin actions (replayed as an admin's Batch calls)")
        for name, entry in report["policies"].items():
            for a in entry["scenarioActions"]:
                outcome = a["outcome"] + (f" ({a['reason']})" if "reason" in a else "")
                lines.append(f"  {name}: {a['type']} at {a['at']:g} s {outcome}")
    return lines
