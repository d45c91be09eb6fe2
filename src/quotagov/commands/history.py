"""``quotagov history export --job-queue ARN [--since T] --out FILE``: a queue's job history.

Writes one JSON line per service job (``quotagov.governance.history``), the input of
``quotagov whatif FILE --format history``. Needs AWS credentials with
``batch:ListServiceJobs`` and ``batch:DescribeServiceJob``; the Region from
``--region`` or the environment.

Exit codes: 0 done; 2 a bad ``--since``, an unwritable file, or a failing AWS call
(one line on stderr; the lines written before stay).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add ``history`` (with its ``export`` subcommand)."""
    parser = subparsers.add_parser("history", help="export a job queue's history for whatif")
    actions = parser.add_subparsers(dest="history_command", metavar="ACTION")
    actions.required = True
    export = actions.add_parser(
        "export", help="ListServiceJobs + DescribeServiceJob to JSON lines (paginated)"
    )
    export.add_argument("--job-queue", required=True, metavar="ARN", help="the job queue")
    export.add_argument(
        "--since",
        default=None,
        metavar="T",
        help="only jobs created after T (ISO 8601, e.g. 2026-05-01T00:00:00Z, or epoch seconds)",
    )
    export.add_argument(
        "--out", required=True, type=Path, metavar="FILE", help="the JSON-lines file to write"
    )
    export.add_argument("--region", default=None, help="AWS Region (default: the environment)")
    export.set_defaults(func=run)


def parse_since(text: str | None) -> float | None:
    """``--since`` as epoch seconds.

    Raises:
        ValueError: neither ISO 8601 nor a number.
    """
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"--since: {text!r} is neither ISO 8601 nor epoch seconds") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()


def run(args: argparse.Namespace, batch: Any = None) -> int:
    """Export; ``batch`` is the Batch port (default: boto3 with adaptive retries)."""
    from quotagov.governance.history import export_history
    from quotagov.governance.ports import BatchError

    try:
        since = parse_since(args.since)
    except ValueError as exc:
        print(f"quotagov history export: {exc}", file=sys.stderr)
        return 2
    if batch is None:
        from quotagov.adapters.batch_boto3 import Boto3Batch, make_batch_client

        batch = Boto3Batch(make_batch_client(region_name=args.region))
    try:
        handle = args.out.open("w", encoding="utf-8")
    except OSError as exc:
        print(f"quotagov history export: {args.out}: cannot write: {exc.strerror}", file=sys.stderr)
        return 2
    with handle:
        try:
            summary = export_history(batch, args.job_queue, handle, since=since, sleep=time.sleep)
        except BatchError as exc:
            print(f"quotagov history export: {exc}", file=sys.stderr)
            return 2
    print(
        f"{args.out}: {summary.jobs} jobs from {summary.pages} page(s)"
        f" ({summary.throttled} throttled call(s) retried)"
    )
    return 0
