"""``quotagov demo [--json]``: the controller end to end on the embedded local runtime.

Replays the three-share walkthrough (``quotagov/examples/aws-walkthrough.json``)
through the real API and handlers, in virtual time, and prints a timestamped story
of what happened and why (see :mod:`quotagov_tools.local.demo_story` for the timeline).
``--json`` prints one JSON document instead, with the keys ``submissions``,
``preemptions``, ``escalations``, ``dispositions``, ``notifications`` (the owners'
Slack DMs), ``waiting`` (a waiting job's position, reason and estimated start) and
``audit``.

Exit code 0 only when every step happened as expected; otherwise 1, with the failed
checks on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``demo`` subcommand."""
    parser = subparsers.add_parser(
        "demo",
        help="run the controller end to end on the walkthrough (embedded runtime)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--template", type=Path, default=None, help="SAM template (template.yaml)")
    parser.add_argument("--logs", action="store_true", help="show the handlers' own logs on stderr")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; print the story (or the JSON document); 0 when every check passed."""
    from quotagov_tools.local.demo_story import Demo
    from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

    started = time.monotonic()
    echo = None if args.json else (lambda line: print(line, flush=True))
    logs = io.StringIO()
    # The handlers log and emit metrics on stdout like in Lambda; keep stdout for the story.
    sink = sys.stderr if args.logs else logs
    options = RuntimeOptions(template=args.template, extra_env={"POWERTOOLS_LOG_LEVEL": "WARNING"})
    with contextlib.redirect_stdout(sink):
        runtime = LocalRuntime(options).start()
    try:
        demo = Demo(runtime, echo=None)
        if echo is not None:
            demo.echo = lambda line: print(line, file=sys.__stdout__, flush=True)
        with contextlib.redirect_stdout(sink):
            result = demo.run()
    finally:
        with contextlib.redirect_stdout(sink):
            runtime.stop()
    elapsed = time.monotonic() - started
    if args.json:
        print(json.dumps(result.document, indent=2, sort_keys=True, default=str))
    else:
        print(
            f"demo finished in {elapsed:.1f} s (wall clock); {len(result.failures)} failed checks"
        )
    for failure in result.failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 0 if result.ok else 1
