"""``quotagov serve [--port 3000] [--host 127.0.0.1]``: the local runtime behind a local
HTTP server.

Serves the template's API routes (``POST /jobs``, ``GET /jobs/{jobId}``, ...,
``POST /slack/interactions``) on ``127.0.0.1`` exactly as API Gateway would deliver
them to the handlers, plus the ``/_local/...`` endpoints (fake Slack messages, virtual
clock, admin Batch calls); see :mod:`quotagov_tools.local.http_server` and ``docs/local.md``.

The caller's IAM identity comes from the ``X-Quotagov-Principal`` header. The Slack
signing secret is ``SLACK_SIGNING_SECRET`` from the environment, or a random one
printed at start-up. The virtual clock starts at the current time (so that
Slack request timestamps signed now are accepted) and moves only through
``POST /_local/clock``.

``--faults SEED`` (and ``--fault-rate``) inject faults into every outside dependency
as ``quotagov demo --faults`` does (:mod:`quotagov_tools.local.faults`); the counts per kind
are printed when the server stops.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from quotagov_tools.commands.demo import add_fault_options, fault_plan


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand."""
    parser = subparsers.add_parser(
        "serve",
        help="serve the API and Slack interactions locally (embedded runtime)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, default=3000, help="TCP port (default 3000; 0: any)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on; must be a loopback address (default 127.0.0.1)",
    )
    parser.add_argument("--template", type=Path, default=None, help="SAM template (template.yaml)")
    add_fault_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Start the runtime and serve until interrupted."""
    from quotagov_tools.local.http_server import PRINCIPAL_HEADER, LocalServer
    from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

    secret = os.environ.get("SLACK_SIGNING_SECRET") or None
    plan = fault_plan(args)
    options = RuntimeOptions(
        template=args.template,
        slack_signing_secret=secret,
        start=float(int(time.time())),
        faults=plan,
    )
    runtime = LocalRuntime(options).start()
    try:
        server = LocalServer(runtime, host=args.host, port=args.port)
    except (OSError, ValueError) as exc:
        runtime.stop()
        print(f"quotagov serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    print(f"quotagov serve: listening on {server.url}", flush=True)
    print(f"  identity header: {PRINCIPAL_HEADER}: <principal ARN>", flush=True)
    print(f"  OpenAPI document: {server.url}/openapi.json", flush=True)
    if secret is None:
        print(f"  SLACK_SIGNING_SECRET (random): {runtime.signing_secret}", flush=True)
    if plan is not None:
        print(f"  injecting faults: seed {plan.seed}, rate {plan.rate}", flush=True)
    for route in runtime.routes:
        auth = "IAM" if route.iam_auth else "none"
        print(f"  {route.method:6} {route.path:36} -> {route.function} (auth: {auth})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        runtime.stop()
        if plan is not None:
            print(f"quotagov serve: faults injected: {plan.summary()}", flush=True)
    return 0
