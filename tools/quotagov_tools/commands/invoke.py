"""``quotagov invoke FUNCTION --event FILE``: run one handler in-process, like ``sam local invoke``.

``FUNCTION`` is a logical id of ``template.yaml`` (``JobsApiFunction``...); its handler
path and environment come from the template. The handler runs against the embedded
local runtime (moto, simulated Batch, fake Slack; see :mod:`quotagov_tools.local.runtime`),
and what the invocation set off (queue messages, EventBridge events) is delivered
afterwards. The handler's return value is printed as JSON on stdout.

Exit codes: 0 when the handler returned, 1 when it raised (the error on stderr),
2 for a usage error (unknown function, unreadable event file).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from quotagov_tools.deploy.template import TemplateError


def register(subparsers: Any) -> None:
    """Add the ``invoke`` subcommand."""
    parser = subparsers.add_parser(
        "invoke",
        help="run one function's handler in-process on an event file",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("function", metavar="FUNCTION", help="logical id in template.yaml")
    parser.add_argument(
        "--event", "-e", required=True, type=Path, help="event JSON file ('-' for stdin)"
    )
    parser.add_argument("--template", type=Path, default=None, help="SAM template (template.yaml)")
    parser.add_argument(
        "--resign-slack",
        action="store_true",
        help="sign the event's body anew with the runtime's Slack signing secret and clock "
        "(a recorded Slack request is otherwise stale or signed with another secret: 401)",
    )
    parser.set_defaults(func=run)


def _read_event(path: Path) -> Any:
    text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    return json.loads(text)


def run(args: argparse.Namespace) -> int:
    """Run the handler; print its result; return the exit code."""
    from quotagov_tools.local.fake_slack import sign_event
    from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

    try:
        event = _read_event(args.event)
    except (OSError, ValueError) as exc:
        print(f"quotagov invoke: --event {args.event}: {exc}", file=sys.stderr)
        return 2
    # The handlers' logs and metrics (Powertools writes them to stdout, as in Lambda)
    # go to stderr, so that stdout carries only the result.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            runtime = LocalRuntime(RuntimeOptions(template=args.template)).start()
        except TemplateError as exc:
            print(f"quotagov invoke: {exc}", file=sys.stderr)
            return 2
        try:
            if args.function not in runtime.functions:
                known = ", ".join(sorted(runtime.functions))
                print(
                    f"quotagov invoke: unknown function {args.function!r} (template has: {known})",
                    file=sys.stderr,
                )
                return 2
            if args.resign_slack and isinstance(event, dict):
                event = sign_event(event, runtime.signing_secret, runtime.clock.now())
            record = runtime.invoke(args.function, event)
            runtime.pump()
        finally:
            runtime.stop()
    if not record.ok:
        print(f"quotagov invoke: {args.function} raised {record.error}", file=sys.stderr)
        return 1
    print(json.dumps(record.result, indent=2, sort_keys=True, default=str))
    return 0
