"""``quotagov whatif WORKLOAD --policy NAME=FILE [--policy NAME=FILE ...] --out DIR``.

Replays a workload under each governance policy (the deployed YAML), with the
policy's routing, dispositions and thrash guard in the loop, and writes
``DIR/report.json``, ``DIR/report.html`` and the PNG plots; prints the warnings and
regressions first, then a comparison table and one verdict line per policy. See
:mod:`quotagov_tools.whatif` and ``docs/simulator/whatif.md``.

Two more forms:

- ``quotagov whatif calibrate HISTORY --policy FILE --out DIR``: replays an exported
  history under the policy in force and compares it job by job with what happened
  (:mod:`quotagov_tools.whatif.calibration`): ``calibration.json``, ``calibration.png``;
- ``quotagov whatif WORKLOAD --policy FILE --sweep PATH=V1,V2,... [--scheduler ADDRESS]
  --out DIR``: one policy over a grid of settings (:mod:`quotagov_tools.whatif.sweep`):
  ``sweep.json``, ``sweep.png``, on the local process pool or a Dask cluster.

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
        "the loop, and compare waits, completion, utilization and lost work. With --sweep: "
        "one policy over a grid of settings. 'quotagov whatif calibrate HISTORY --policy "
        "FILE --out DIR': replay a history under the policy in force and compare it job by "
        "job with what happened.",
    )
    add_workload_arguments(p)
    p.add_argument(
        "history",
        nargs="?",
        default=None,
        metavar="HISTORY",
        help="with WORKLOAD 'calibrate': the history file to calibrate on",
    )
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
    p.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="PATH=V1,V2,...",
        help="replay the one --policy over these values of a numeric field (dotted "
        "path, e.g. shares.background.borrowLimit=0,50,100; repeatable: the product)",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the sweep on this Dask distributed scheduler (tcp://host:port; "
        "needs the distributed extra)",
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
    """Run the comparison (or the calibration, or the sweep); 0 when the report is
    written, 2 on bad input."""
    from quotagov.scheduler import InvalidConfigError
    from quotagov_tools.whatif import WhatIfError

    try:
        if args.workload == "calibrate" and args.history is not None:
            return _calibrate(args)
        if args.history is not None:
            return _fail(
                WhatIfError([f"{args.history}: one workload only (or: whatif calibrate HISTORY)"])
            )
        if args.sweep:
            return _sweep(args)
        if args.scheduler:
            return _fail(WhatIfError(["--scheduler: only with --sweep"]))
    except (WhatIfError, InvalidConfigError) as exc:
        return _fail(exc)
    return _compare(args)


def _one_policy(values: list[str], what: str) -> tuple[str, Any]:
    """The single ``--policy`` of a calibration or a sweep: ``FILE`` or ``NAME=FILE``."""
    from quotagov_tools.whatif.errors import OptionError

    if len(values) != 1:
        raise OptionError([f"--policy: {what} takes one policy, {len(values)} given"])
    value = values[0]
    name, sep, path = value.partition("=")
    if not sep or Path(value).exists():
        name, path = Path(value).stem, value
    return name, load_policy_file(path)


def _calibrate(args: argparse.Namespace) -> int:
    from quotagov_tools.whatif.calibration import (
        calibrate,
        fidelity_lines,
        read_history,
        write_calibration,
    )
    from quotagov_tools.whatif.mapping import parse_capacity, parse_maps

    _, policy = _one_policy(args.policy, "calibrate")
    history = read_history(args.history, maps=parse_maps(args.map))
    from quotagov_tools.commands.workload_options import loop_options

    document = calibrate(history, policy, parse_capacity(args.capacity) or None, loop_options(args))
    written = write_calibration(document, args.out)
    for line in fidelity_lines(document):
        print(line)
    print("Wrote " + ", ".join(str(p) for p in written))
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from quotagov_tools.commands.workload_options import load_workload, loop_options
    from quotagov_tools.whatif.mapping import parse_capacity
    from quotagov_tools.whatif.sweep import (
        dask_runner,
        local_runner,
        parse_axes,
        run_sweep,
        sweep_lines,
        write_sweep,
    )

    _, policy = _one_policy(args.policy, "--sweep")
    axes = parse_axes(args.sweep, policy)
    workload = load_workload(args, [policy])
    runner = dask_runner(args.scheduler) if args.scheduler else local_runner(args.workers)
    document = run_sweep(
        policy,
        axes,
        workload,
        capacity=parse_capacity(args.capacity) or None,
        options=loop_options(args),
        seeds=args.seeds,
        jitter_seconds=args.jitter,
        run_noise=args.run_noise,
        runner=runner,
    )
    written = write_sweep(document, args.out)
    for line in sweep_lines(document):
        print(line)
    print("Wrote " + ", ".join(str(p) for p in written))
    return 0


def _compare(args: argparse.Namespace) -> int:
    """The comparison of the policies."""
    from quotagov.scheduler import InvalidConfigError
    from quotagov_tools.commands.workload_options import format_of, load_workload, loop_options
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
        if format_of(args) == "history":
            report["fidelity"] = _fidelity(args, next(iter(policies.values())), capacity)
    except (WhatIfError, InvalidConfigError) as exc:
        return _fail(exc)
    written = write_report(report, series, args.out)
    w = report["workload"]
    print(
        f"Workload {w['name']}: {_count(w['jobs'], 'job', 'jobs')}, "
        f"{_count(len(policies), 'policy', 'policies')}, "
        f"{w['seeds']} seed(s)" + (" (median [min..max])" if w["seeds"] > 1 else "")
    )
    for line in lead_lines(report):
        print(line)
    if "fidelity" in report:
        from quotagov_tools.whatif.calibration import fidelity_lines

        print("Fidelity (the history replayed under the first policy, against what happened)")
        for line in fidelity_lines(report["fidelity"]):
            print(f"  {line}")
        print()
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


def _fidelity(args: argparse.Namespace, policy: Any, capacity: Any) -> dict[str, Any]:
    """The report's ``fidelity`` section: the history calibrated under the first policy
    (taken as the one in force when the history was made)."""
    from quotagov_tools.commands.workload_options import loop_options
    from quotagov_tools.whatif.calibration import calibrate, fidelity, read_history
    from quotagov_tools.whatif.mapping import parse_maps

    history = read_history(args.workload, maps=parse_maps(args.map))
    document = calibrate(history, policy, capacity, loop_options(args))
    return {"policy": next(iter(_names(args.policy))), **fidelity(document)}


def _names(values: list[str]) -> list[str]:
    return [v.partition("=")[0] for v in values]


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def lead_lines(report: dict[str, Any]) -> list[str]:
    """What matters first: the environment warnings, then the regressions beyond noise
    (worst first, at most :data:`LEAD_REGRESSIONS`; every one is in ``report.json``)."""
    from quotagov_tools.whatif.report import regression_line

    lines: list[str] = []
    for warning in report.get("warnings", []):
        lines.append(f"WARNING {warning}")
    found = report.get("regressions", [])
    if found:
        lines.append(f"REGRESSIONS ({len(found)}, worst first)")
        lines += [f"  {regression_line(r)}" for r in found[:LEAD_REGRESSIONS]]
        if len(found) > LEAD_REGRESSIONS:
            lines.append(f"  ... {len(found) - LEAD_REGRESSIONS} more in report.json")
    elif len(report["policies"]) > 1 and report["workload"]["seeds"] > 1:
        lines.append("No regression beyond noise against the baseline.")
    elif len(report["policies"]) > 1:
        lines.append("No regression against the baseline (one seed: noise not measured).")
    if lines:
        lines.append("")
    return lines


#: Regressions printed before the table.
LEAD_REGRESSIONS = 10


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
