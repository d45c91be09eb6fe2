"""``quotagov demo [--json]``: the controller end to end on the embedded local runtime.

Replays the three-share walkthrough (``quotagov/examples/aws-walkthrough.json``)
through the real API and handlers, in virtual time, and prints a timestamped story
of what happened and why (see :mod:`quotagov_tools.local.demo_story` for the timeline).
``--json`` prints one JSON document instead, with the keys ``submissions``,
``preemptions``, ``escalations``, ``dispositions``, ``notifications`` (the owners'
Slack DMs), ``waiting`` (a waiting job's position, reason and estimated start) and
``audit``.

``--history-out FILE`` writes, after the story, the queue's history as
``quotagov history export`` writes it, plus the ``apiCall`` lines of the Batch calls
CloudTrail recorded (priority changes, share updates): the input of
``quotagov whatif calibrate``.

``--faults SEED`` (with ``--fault-rate``, default 0.03) runs the walkthrough once
without faults (to learn its audit findings and owner DMs), then again with faults injected,
reproducibly from SEED, into every outside dependency (DynamoDB, SQS, EventBridge,
Batch, Slack; :mod:`quotagov_tools.local.faults`), and prints the injected fault counts per
kind and each invariant of :mod:`quotagov_tools.local.invariants` with what it saw.

Exit code 0 only when every step happened as expected; otherwise 1, with the failed
checks on stderr. With ``--faults``: 0 when the fault-free run passed every check, every
invariant held in the faulted run and every kind of fault was injected at least once;
otherwise 1 with the seed and the first broken invariant. The walkthrough's checks are
timed to the fault-free run, so in the faulted run they are printed on stderr as
timeline differences (a throttled submission runs after its redelivery).
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

#: Virtual seconds a faulted run goes on after the walkthrough before the invariants are
#: checked: SQS redeliveries (visibility timeouts up to 360 s, five receives) and the
#: escalations' expiry (one hour) have happened by then.
SETTLE_SECONDS = 2 * 3600


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
    parser.add_argument(
        "--history-out",
        type=Path,
        default=None,
        metavar="FILE",
        help="after the story, write the queue's history (JSON lines, for whatif calibrate)",
    )
    add_fault_options(parser)
    parser.set_defaults(func=run)


def add_fault_options(parser: Any) -> None:
    """``--faults SEED`` and ``--fault-rate RATE`` (shared with ``serve``)."""
    parser.add_argument(
        "--faults",
        type=int,
        default=None,
        metavar="SEED",
        help="inject faults into every outside dependency, reproducibly from SEED",
    )
    parser.add_argument(
        "--fault-rate",
        type=float,
        default=None,
        metavar="RATE",
        help="share (0-1) of calls that meet each kind of fault (default 0.03)",
    )


def fault_plan(args: argparse.Namespace) -> Any:
    """The :class:`~quotagov_tools.local.faults.FaultPlan` of ``--faults``/``--fault-rate``,
    or None without ``--faults``.

    Raises:
        SystemExit: ``--fault-rate`` outside 0-1, or given without ``--faults``.
    """
    from quotagov_tools.local.faults import DEFAULT_RATE, FaultPlan

    if args.faults is None:
        if args.fault_rate is not None:
            raise SystemExit("--fault-rate: needs --faults SEED")
        return None
    rate = DEFAULT_RATE if args.fault_rate is None else args.fault_rate
    try:
        return FaultPlan(args.faults, rate)
    except ValueError as exc:
        raise SystemExit(f"--fault-rate: {exc}") from None


def _play(
    args: argparse.Namespace, plan: Any, sink: Any, echo: bool, baseline: Any
) -> tuple[Any, list[Any], Any]:
    """One run of the walkthrough: its result, the invariants (when ``plan`` is given;
    compared with ``baseline``, a fault-free run's
    :class:`~quotagov_tools.local.invariants.Baseline`) and its own baseline."""
    from quotagov_tools.local.demo_story import Demo
    from quotagov_tools.local.invariants import baseline_of, check_invariants
    from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

    options = RuntimeOptions(
        template=args.template, extra_env={"POWERTOOLS_LOG_LEVEL": "WARNING"}, faults=plan
    )
    with contextlib.redirect_stdout(sink):
        runtime = LocalRuntime(options).start()
    try:
        demo = Demo(runtime, echo=None)
        if echo:
            demo.echo = lambda line: print(line, file=sys.__stdout__, flush=True)
        with contextlib.redirect_stdout(sink):
            result = demo.run()
            invariants: list[Any] = []
            if plan is not None:
                # what the faults delayed (redeliveries, retries) settles, expiries fire
                runtime.advance(SETTLE_SECONDS)
                invariants = check_invariants(runtime, baseline)
            learned = baseline_of(runtime)
        if args.history_out is not None:
            write_history(runtime, args.history_out)
    finally:
        with contextlib.redirect_stdout(sink):
            runtime.stop()
    return result, invariants, learned


def run(args: argparse.Namespace) -> int:
    """Run the demo; print the story (or the JSON document); 0 when every check passed
    (and, with ``--faults``, every invariant held)."""
    started = time.monotonic()
    plan = fault_plan(args)
    logs = io.StringIO()
    # The handlers log and emit metrics on stdout like in Lambda; keep stdout for the story.
    sink = sys.stderr if args.logs else logs
    baseline: Any = None
    if plan is not None:
        clean, _, baseline = _play(args, None, sink, False, None)
        if not clean.ok:
            for failure in clean.failures:
                print(f"FAILED (fault-free run): {failure}", file=sys.stderr)
            return 1
    result, invariants, _ = _play(args, plan, sink, not args.json, baseline)
    elapsed = time.monotonic() - started
    if plan is not None:
        return _report_faults(args, plan, result, invariants, elapsed)
    if args.json:
        print(json.dumps(result.document, indent=2, sort_keys=True, default=str))
    else:
        print(
            f"demo finished in {elapsed:.1f} s (wall clock); {len(result.failures)} failed checks"
        )
    for failure in result.failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 0 if result.ok else 1


def write_history(runtime: Any, out: Path) -> None:
    """The local runtime's queue history to ``out``: one line per service job
    (:func:`~quotagov.governance.history.export_history` on the simulated Batch), then
    one ``apiCall`` line per recorded call that changed a job or a share
    (:func:`~quotagov.governance.history.api_call_line`)."""
    from quotagov.governance.history import api_call_line, export_history

    with out.open("w", encoding="utf-8") as handle:
        export_history(runtime.batch, runtime.job_queue, handle, sleep=lambda _: None)
        for envelope in runtime.published:
            if envelope.get("detail-type") != "AWS API Call via CloudTrail":
                continue
            line = api_call_line(envelope["detail"])
            if line is not None:
                handle.write(json.dumps(line, sort_keys=True) + "\n")


def _report_faults(
    args: argparse.Namespace, plan: Any, result: Any, invariants: list[Any], elapsed: float
) -> int:
    """Print the fault counts and the invariants; 0 when all held and every kind fired.

    The walkthrough's own checks are timed to the fault-free run (bg-1 RUNNING at t=1 s);
    a throttled submission waits for its SQS redelivery, so under faults they are
    printed as timeline differences, not failures: the invariants are the verdict (the
    fault-free run, played first, must pass every check)."""
    out = sys.stderr if args.json else sys.stdout
    if args.json:
        print(json.dumps(result.document, indent=2, sort_keys=True, default=str))
    print(
        f"faults (seed {plan.seed}, rate {plan.rate}): {plan.summary()}; "
        f"{plan.backoff_seconds:.1f} s of SDK backoff skipped",
        file=out,
    )
    for invariant in invariants:
        mark = "holds" if invariant.holds else "BROKEN"
        print(f"invariant {invariant.name}: {mark}: {invariant.detail}", file=out)
    broken = [i for i in invariants if not i.holds]
    missing = plan.missing()
    print(
        f"demo --faults {plan.seed} finished in {elapsed:.1f} s (wall clock); "
        f"{len(result.failures)} walkthrough checks differ from the fault-free timeline "
        f"(stderr), {len(broken)} broken invariants, "
        f"{len(missing)} fault kinds not injected",
        file=out,
    )
    for failure in result.failures:
        print(f"timeline differs: {failure}", file=sys.stderr)
    if broken:
        print(
            f"FAILED: seed {plan.seed}: invariant {broken[0].name} broken: {broken[0].detail}",
            file=sys.stderr,
        )
    if missing:
        print(
            f"FAILED: seed {plan.seed}: never injected: {', '.join(k.value for k in missing)}",
            file=sys.stderr,
        )
    return 0 if not broken and not missing else 1
