"""The simulator's JSON output written as it goes, byte for byte what :func:`dump_output`
writes for the whole document, without building it in memory.

Output format (``../shared/spec/scenario-format.md``, "Output"): ``{jobs, metrics,
scenario, transitions}`` with sorted keys and a 2-space indent, numbers normalized as
:func:`~.simulation.normalize` does. Sorted, ``transitions`` comes last; they are
produced during the run, so they are written as they happen to a temporary file (on
disk, not in memory) and copied after the rest. With ``transitions=False`` the key is
left out of the document altogether (``quotagov simulate --output json-no-transitions``).

Memory: the engine's own records plus one line per transition on disk; no transition
object or output dict is kept (at 1,000,000 jobs that is several GB less,
``benchmarks/simulate_scale.py``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from typing import IO, Any

from quotagov.scheduler.metrics import JobClock, compute_metrics
from quotagov.scheduler.scenario import Scenario
from quotagov.scheduler.simulation import (
    Progress,
    build_engine,
    cyclic_gc_paused,
    job_record,
    normalize,
)
from quotagov.scheduler.state import TERMINAL_STATES, Transition

_COPY_CHUNK = 1 << 20


def _num_text(value: float) -> str:
    """A number as :func:`~.simulation.normalize` then ``json.dumps`` would write it."""
    if isinstance(value, int):
        return str(value)
    if value.is_integer():
        return str(int(value))
    return repr(round(value, 6))


def _nested(value: Any, depth: int) -> str:
    """``json.dumps`` of ``value`` as it appears ``depth`` levels deep in the document."""
    text = json.dumps(value, sort_keys=True, indent=2, allow_nan=False)
    return text.replace("\n", "\n" + "  " * depth)


def stream_output(
    scenario: Scenario,
    out: IO[str],
    progress: Progress | None = None,
    transitions: bool = True,
) -> int:
    """Run ``scenario`` and write its output document to ``out`` as the run goes.

    With ``transitions=True`` the text is identical to
    ``dump_output(simulate(scenario))``.

    Args:
        scenario: a validated scenario.
        out: a text stream (``sys.stdout``, an open file).
        progress: optional callback ``(settled, total)``, as for :func:`simulate`.
        transitions: False leaves the ``transitions`` key out.

    Returns:
        The number of transitions of the run.
    """
    engine = build_engine(scenario)
    total = len(scenario.jobs)
    step = max(1, total // 200)
    count = 0
    settled = 0
    quote: dict[str, str] = {}
    spool = tempfile.TemporaryFile("w+", encoding="utf-8") if transitions else None  # noqa: SIM115 (closed in the finally below)

    def q(text: str) -> str:
        encoded = quote.get(text)
        if encoded is None:
            encoded = quote[text] = json.dumps(text)
        return encoded

    def record(t: Transition) -> None:
        nonlocal count, settled
        if spool is not None:
            spool.write(
                ("    {\n" if not count else ",\n    {\n")
                + f'      "at": {_num_text(t.at)},\n'
                + f'      "from": {q(t.from_)},\n'
                + f'      "jobName": {q(t.jobName)},\n'
                + f'      "reason": {q(t.reason)},\n'
                + f'      "to": {q(t.to)}\n'
                + "    }"
            )
        count += 1
        if progress is not None and t.to in TERMINAL_STATES:
            settled += 1
            if settled % step == 0:
                progress(settled, total)

    engine.add_listener(record)
    clock = JobClock()
    engine.add_listener(clock)
    horizon = scenario.options.horizonSeconds
    try:
        with cyclic_gc_paused():
            # one advance per event time, so the engine hands back (and forgets) each
            # time's transitions instead of keeping the whole run's
            engine.advance_to(engine.now)
            while True:
                t = engine.next_event_time()
                if t is None or (horizon is not None and t > horizon):
                    break
                engine.advance_to(t)
            if horizon is not None:
                engine.advance_to(max(horizon, engine.now))
            if progress is not None:
                progress(settled, total)
            views = engine.jobs()
            metrics = compute_metrics(
                views,
                engine.usage_integrals(),
                [s.quotaShareName for s in scenario.shares],
                duration=engine.now,
                waits=clock.waits_until(engine.now),
                capacity=engine.capacity,
            )
            out.write('{\n  "jobs": {')
            first = True
            for view in sorted(views, key=lambda v: v.jobName):
                out.write("\n    " if first else ",\n    ")
                first = False
                out.write(json.dumps(view.jobName) + ": " + _nested(job_record(view), 2))
            out.write("\n  },\n" if not first else "},\n")
            out.write('  "metrics": ' + _nested(normalize(metrics), 1) + ",\n")
            out.write('  "scenario": ' + json.dumps(scenario.name))
            if spool is None:
                out.write("\n}\n")
            else:
                out.write(',\n  "transitions": [')
                if count:
                    out.write("\n")
                    spool.seek(0)
                    shutil.copyfileobj(spool, out, _COPY_CHUNK)
                    out.write("\n  ]\n}\n")
                else:
                    out.write("]\n}\n")
    finally:
        if spool is not None:
            spool.close()
    return count
