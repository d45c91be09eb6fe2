"""The workload and governance-loop options of ``whatif`` and ``simulate --policy``.

One place for the options both commands take (``--format``, ``--map``, ``--gpu-type``,
``--compress``, ``--capacity``, the loop's delays) and for turning them into a
:class:`~quotagov_tools.whatif.Workload`, :class:`~quotagov_tools.whatif.LoopOptions` and policies.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FORMATS = ("scenario", "history", "openb", "csv")


def add_workload_arguments(p: argparse.ArgumentParser, *, positional: bool = True) -> None:
    """The workload and governance-loop options (shared with ``simulate --policy``, whose
    positional argument is its own)."""
    if positional:
        p.add_argument("workload", metavar="WORKLOAD", help="the workload file")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="scenario | history (quotagov history export) | openb | csv (any task "
        "list, with --column) (default: by extension: .jsonl history, .csv openb, "
        "else scenario)",
    )
    p.add_argument(
        "--capacity",
        action="append",
        default=[],
        metavar="TYPE=N",
        help="instances of TYPE in the service environment (repeatable; "
        "default: the workload's, else the sum of the policy's limits)",
    )
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="KEY=TEAM:CLASS[:LEVEL]",
        help="place a QoS class (openb), a quota share (scenario, untagged "
        "history) or a group column value (csv) into a team and class",
    )
    p.add_argument(
        "--gpu-type",
        action="append",
        default=[],
        metavar="N=TYPE[*COUNT]",
        help="openb/csv: a task of N GPUs becomes COUNT instances of TYPE "
        "(default N x ml.g5.xlarge)",
    )
    p.add_argument(
        "--compress",
        type=float,
        default=1.0,
        metavar="F",
        help="openb/csv: divide every time and duration by F",
    )
    p.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help="csv: which column holds each of name, group (the value --map places), "
        "gpus, submitted, started, ended (times in seconds; all six needed) and "
        "optionally phase (Pending rows dropped)",
    )
    p.add_argument(
        "--limit", type=int, default=None, metavar="N", help="openb/csv: only the first N rows"
    )
    p.add_argument(
        "--checkpoint-interval",
        type=float,
        default=900.0,
        metavar="SECONDS",
        help="openb/csv: checkpoint interval assumed for every task (0: none)",
    )
    p.add_argument(
        "--decision-delay",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="how long an asked owner takes to decide (default 3600 s)",
    )
    p.add_argument(
        "--owner-choice",
        choices=("resubmit", "reclassify", "abandon"),
        default="resubmit",
        help="what an asked owner decides (default resubmit)",
    )
    p.add_argument(
        "--reaction",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the controller's delay from a job event to its action (default 0)",
    )
    p.add_argument(
        "--queueing",
        choices=("STRICT_FIFO", "BEST_EFFORT_FIFO"),
        default="STRICT_FIFO",
        help="how a share's queue treats a head that cannot start (default STRICT_FIFO)",
    )
    p.add_argument(
        "--startup-seconds",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="SCHEDULED/STARTING time of every attempt (default 0)",
    )


def format_of(args: argparse.Namespace) -> str:
    """The workload format: ``--format``, else by the file name (``.jsonl``/``.ndjson``
    history, ``.csv`` openb, anything else scenario)."""
    if args.format:
        return str(args.format)
    name = str(args.workload).lower()
    if name.endswith((".jsonl", ".ndjson")):
        return "history"
    if name.endswith(".csv"):
        return "openb"
    return "scenario"


def load_workload(args: argparse.Namespace, policies: Iterable[Any]) -> Any:
    """The workload the options name, its ``--map`` targets checked against ``policies``.

    Raises:
        WhatIfError: bad options (a ``--map`` team, class or level that none of the
            policies has among them) or an unreadable/invalid workload (every fault).
    """
    from quotagov_tools.whatif import importers
    from quotagov_tools.whatif.errors import MissingColumnsError, OptionError, WorkloadError
    from quotagov_tools.whatif.mapping import parse_gpu_types, parse_maps, placement_faults

    maps = parse_maps(args.map)
    faults = placement_faults(maps, policies)
    if faults:
        raise OptionError(faults)
    fmt = format_of(args)
    if fmt == "scenario":
        return importers.from_scenario(args.workload, maps=maps)
    if fmt == "history":
        return importers.from_history(args.workload, maps=maps)
    columns = importers.Columns.parse(args.column) if fmt == "csv" else importers.OPENB_COLUMNS
    try:
        return importers.from_csv(
            args.workload,
            columns=columns,
            maps=maps,
            gpu_types=parse_gpu_types(args.gpu_type) or None,
            compress=args.compress,
            checkpoint_interval=args.checkpoint_interval,
            limit=args.limit,
        )
    except MissingColumnsError as exc:
        if fmt != "openb":
            raise
        assumed = "--format openb" if args.format else "assumed from the .csv suffix"
        fields = ", ".join(importers.COLUMN_FIELDS)
        hint = (
            f"{args.workload}: read as the OpenB pod list ({assumed}); for any other CSV "
            f"give --format csv and --column FIELD=COLUMN for each of {fields} "
            "(optionally phase), e.g. --column name=id --column group=queue"
        )
        raise WorkloadError([*exc.faults, hint]) from exc


def loop_options(args: argparse.Namespace) -> Any:
    """The governance loop's options from the command line."""
    from quotagov_tools.whatif.governed import LoopOptions

    return LoopOptions(
        decision_delay_seconds=args.decision_delay,
        owner_choice=args.owner_choice,
        reaction_seconds=args.reaction,
        startup_seconds=args.startup_seconds,
        queueing=args.queueing,
    )


def load_policy_file(path: str) -> Any:
    """A validated policy from a file.

    Raises:
        WhatIfError: unreadable or invalid (every fault, prefixed with the file).
    """
    from quotagov.policy.validation import PolicyError, load_policy
    from quotagov_tools.whatif.errors import OptionError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise OptionError([f"{path}: cannot read: {exc.strerror or exc}"]) from exc
    except UnicodeDecodeError as exc:
        raise OptionError([f"{path}: cannot read: not UTF-8 text ({exc.reason})"]) from exc
    try:
        return load_policy(text)
    except PolicyError as exc:
        raise OptionError([f"{path}: {fault}" for fault in exc.faults]) from exc
