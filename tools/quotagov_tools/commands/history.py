"""``quotagov history export --job-queue ARN [--since T] --out FILE``: a queue's job history.

Writes one JSON line per service job (``quotagov.governance.history``), the input of
``quotagov whatif FILE --format history``. Needs AWS credentials with
``batch:ListServiceJobs`` and ``batch:DescribeServiceJob``; the Region from
``--region``, else the job queue's ARN, else the environment (``AWS_REGION``).

The lines go to a temporary file next to ``--out`` (``.<name>.<pid>.part``), renamed
to ``--out`` only when the export is complete: a failed export leaves no empty or
partial file, and an earlier ``--out`` as it was.

Exit codes: 0 done; 2 a bad ``--since``, an unwritable file, or any failing AWS call
(no Region, no credentials, a refused or failing Batch call): one line on stderr.
"""

from __future__ import annotations

import argparse
import datetime
import os
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
    export.add_argument(
        "--region",
        default=None,
        help="AWS Region (default: the job queue ARN's, else the environment's)",
    )
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
    """Export; ``batch`` is the Batch port (default: boto3 with adaptive retries in
    ``--region``, else the job queue ARN's Region)."""
    from botocore.exceptions import BotoCoreError, ClientError, NoRegionError

    from quotagov.batch_semantics import queue_region
    from quotagov.governance.history import export_history
    from quotagov.governance.ports import BatchError

    def fail(message: str) -> int:
        print(f"quotagov history export: {message}", file=sys.stderr)
        return 2

    try:
        since = parse_since(args.since)
    except ValueError as exc:
        return fail(str(exc))
    out: Path = args.out
    part = out.with_name(f".{out.name}.{os.getpid()}.part")
    try:
        handle = part.open("x", encoding="utf-8")
    except OSError as exc:
        return fail(f"{out}: cannot write: {exc.strerror}")
    done = False
    try:
        with handle:
            if batch is None:
                from quotagov.adapters.batch_boto3 import Boto3Batch, make_batch_client

                region = args.region or queue_region(args.job_queue) or None
                batch = Boto3Batch(make_batch_client(region_name=region))
            summary = export_history(batch, args.job_queue, handle, since=since, sleep=time.sleep)
        part.replace(out)
        done = True
    except NoRegionError:
        return fail("no AWS Region: give --region, or --job-queue as an ARN")
    except (BatchError, BotoCoreError, ClientError) as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"{out}: cannot write: {exc.strerror}")
    finally:
        if not done:
            part.unlink(missing_ok=True)
    print(
        f"{out}: {summary.jobs} jobs from {summary.pages} page(s)"
        f" ({summary.throttled} throttled call(s) retried)"
    )
    return 0
