"""``quotagov whatif WORKLOAD --policy NAME=FILE [--policy NAME=FILE ...] --out DIR``.

Replays a workload under each governance policy (the deployed YAML), with the
policy's routing, dispositions and thrash guard in the loop, and writes
``DIR/report.json``, ``DIR/report.html`` and the PNG plots; prints a comparison table
and one verdict line per policy. See :mod:`quotagov.whatif` and the README section
"Try a policy before you deploy it".

Exit codes: 0 done; 2 bad options, an invalid policy or an unreadable workload (every
fault on stderr, naming the file, row and field).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from quotagov.commands.simulate import ProgressBar

FORMATS = ("scenario", "history", "openb", "csv")


def register(subparsers: Any) -> None:
    """Add the ``whatif`` subcommand."""
    p = subparsers.add_parser(
        "whatif",
        help="compare governance policies on a workload (report, plots)",
        description="Replay a workload under each governance policy, governance rules in "
        "the loop, and compare waits, completion, utilization and lost work.",
    )
    add_workload_arguments(p)
    p.add_argument("--policy", action="append", required=True, metavar="NAME=FILE",
                   help="a governance policy file (repeatable; the first is the baseline)")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="directory for report.json, report.html and the plots")
    p.add_argument("--seeds", type=int, default=1, metavar="K",
                   help="replay K perturbed copies; figures become median [min..max]")
    p.add_argument("--jitter", type=float, default=300.0, metavar="SECONDS",
                   help="largest arrival shift of a perturbed copy (default 300 s)")
    p.add_argument("--run-noise", type=float, default=0.1, metavar="F",
                   help="largest relative run-time change of a perturbed copy (default 0.1)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="processes running policies and seeds in parallel (default: cores)")
    p.set_defaults(func=run)


def add_workload_arguments(p: argparse.ArgumentParser, *, positional: bool = True) -> None:
    """The workload and governance-loop options (shared with ``simulate --policy``, whose
    positional argument is its own)."""
    if positional:
        p.add_argument("workload", metavar="WORKLOAD", help="the workload file")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="scenario | history (quotagov history export) | openb | csv "
                   "(default: by extension: .jsonl history, .csv openb, else scenario)")
    p.add_argument("--capacity", action="append", default=[], metavar="TYPE=N",
                   help="instances of TYPE in the service environment (repeatable; "
                   "default: the workload's, else the sum of the policy's limits)")
    p.add_argument("--map", action="append", default=[], metavar="KEY=TEAM:CLASS[:LEVEL]",
                   help="place a QoS class (openb), a quota share (scenario, untagged "
                   "history) or a group column value (csv) into a team and class")
    p.add_argument("--gpu-type", action="append", default=[], metavar="N=TYPE[*COUNT]",
                   help="openb/csv: a task of N GPUs becomes COUNT instances of TYPE "
                   "(default N x ml.g5.xlarge)")
    p.add_argument("--compress", type=float, default=1.0, metavar="F",
                   help="openb/csv: divide every time and duration by F")
    p.add_argument("--column", action="append", default=[], metavar="FIELD=COLUMN",
                   help="csv: which column holds name, group, gpus, submitted, started, "
                   "ended (and optionally phase)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="openb/csv: only the first N rows")
    p.add_argument("--checkpoint-interval", type=float, default=900.0, metavar="SECONDS",
                   help="openb/csv: checkpoint interval assumed for every task (0: none)")
    p.add_argument("--decision-delay", type=float, default=3600.0, metavar="SECONDS",
                   help="how long an asked owner takes to decide (default 3600 s)")
    p.add_argument("--owner-choice", choices=("resubmit", "reclassify", "abandon"),
                   default="resubmit", help="what an asked owner decides (default resubmit)")
    p.add_argument("--reaction", type=float, default=0.0, metavar="SECONDS",
                   help="the controller's delay from a job event to its action (default 0)")
    p.add_argument("--startup-seconds", type=float, default=0.0, metavar="SECONDS",
                   help="SCHEDULED/STARTING time of every attempt (default 0)")


def _format_of(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    name = str(args.workload).lower()
    if name.endswith((".jsonl", ".ndjson")):
        return "history"
    if name.endswith(".csv"):
        return "openb"
    return "scenario"


def load_workload(args: argparse.Namespace) -> Any:
    """The workload the options name.

    Raises:
        WhatIfError: bad options or an unreadable/invalid workload (every fault).
    """
    from quotagov.whatif import importers
    from quotagov.whatif.mapping import parse_gpu_types, parse_maps

    maps = parse_maps(args.map)
    fmt = _format_of(args)
    if fmt == "scenario":
        return importers.from_scenario(args.workload, maps=maps)
    if fmt == "history":
        return importers.from_history(args.workload, maps=maps)
    columns = importers.Columns.parse(args.column) if fmt == "csv" else importers.OPENB_COLUMNS
    return importers.from_csv(
        args.workload,
        columns=columns,
        maps=maps,
        gpu_types=parse_gpu_types(args.gpu_type) or None,
        compress=args.compress,
        checkpoint_interval=args.checkpoint_interval,
        limit=args.limit,
    )


def loop_options(args: argparse.Namespace) -> Any:
    """The governance loop's options from the command line."""
    from quotagov.whatif.governed import LoopOptions

    return LoopOptions(
        decision_delay_seconds=args.decision_delay,
        owner_choice=args.owner_choice,
        reaction_seconds=args.reaction,
        startup_seconds=args.startup_seconds,
    )


def load_policy_file(path: str) -> Any:
    """A validated policy from a file.

    Raises:
        WhatIfError: unreadable or invalid (every fault, prefixed with the file).
    """
    from quotagov.policy.validation import PolicyError, load_policy
    from quotagov.whatif.errors import OptionError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise OptionError([f"{path}: cannot read: {exc.strerror or exc}"]) from exc
    try:
        return load_policy(text)
    except PolicyError as exc:
        raise OptionError([f"{path}: {fault}" for fault in exc.faults]) from exc


def _policies(values: list[str]) -> dict[str, Any]:
    from quotagov.whatif.errors import OptionError

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
    from quotagov.whatif import WhatIf, WhatIfError, run_whatif, write_report
    from quotagov.whatif.mapping import parse_capacity
    from quotagov.whatif.report import comparison_rows, text_table

    try:
        policies = _policies(args.policy)
        capacity = parse_capacity(args.capacity) or None
        workload = load_workload(args)
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
        bar = ProgressBar(sys.stderr, label="whatif", unit="runs done") if sys.stderr.isatty() \
            else None
        report, series = run_whatif(config, progress=bar)
        if bar is not None:
            bar.close()
    except (WhatIfError, InvalidConfigError) as exc:
        return _fail(exc)
    written = write_report(report, series, args.out)
    w = report["workload"]
    print(f"Workload {w['name']}: {w['jobs']} jobs, {len(policies)} policies, "
          f"{w['seeds']} seed(s)" + (" (median [min..max])" if w["seeds"] > 1 else ""))
    sys.stdout.write(text_table(comparison_rows(report["policies"])))
    print()
    for line in report["verdicts"].values():
        print(line)
    print()
    print("Wrote " + ", ".join(str(p) for p in written))
    return 0
