"""The simulator's JSON output written as it goes, byte for byte what :func:`dump_output`
writes for the whole document, without building it in memory.

Output format (``docs/simulator/spec.md``, "Output"): ``{jobs, metrics,
scenario, transitions}`` with sorted keys and a 2-space indent, numbers normalized as
:func:`~.simulation.normalize` does. Sorted, ``transitions`` comes last; they are
produced during the run, so they are written as they happen to a temporary file (on
disk, not in memory) and copied after the rest. With ``transitions=False`` the key is
left out of the document altogether (``quotagov simulate --output json-no-transitions``).

The job records and transitions are written from templates of that exact layout
(:func:`job_record_text`), not through ``json.dumps`` of a dict per record; the
property test ``tests/scheduler/test_streaming.py`` holds them to ``dump_output``.

Memory: the engine's own records plus one line per transition on disk; no transition
object, job snapshot or output dict is kept (``benchmarks/simulate_scale.py``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any

from quotagov.scheduler.metrics import compute_metrics
from quotagov.scheduler.scenario import Scenario
from quotagov.scheduler.simulation import (
    Progress,
    build_engine,
    cyclic_gc_paused,
    normalize,
)
from quotagov.scheduler.state import TERMINAL_STATES, Preemption, Transition
from quotagov.scheduler.views import JobView

_COPY_CHUNK = 1 << 20
#: Transitions formatted before one write to the spool.
_BATCH = 2048

#: A transition entry, in pieces: "at", then per ``from`` (:data:`_FROM`) up to the
#: job's name, then per ``(reason, to)`` (:data:`_REASON_TO`) the rest.
_AT = ',\n    {\n      "at": '


class _Pieces(dict[Any, str]):
    """Template pieces per value, made once from ``make(value)``."""

    def __init__(self, make: Callable[[Any], str]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, key: Any) -> str:
        if len(self) > 4096:  # only a handful in a run; bounded anyway
            self.clear()
        value = self[key] = self._make(key)
        return value


_JOB = (
    ",\n    %s: {\n"
    '      "attempts": %d,\n'
    '      "firstStartedAt": %s,\n'
    '      "lostSeconds": %s,\n'
    '      "preemptions": %s,\n'
    '      "quotaShareName": %s,\n'
    '      "status": %s,\n'
    '      "statusReason": %s,\n'
    '      "stoppedAt": %s,\n'
    '      "submittedAt": %s\n'
    "    }"
)
_PREEMPTION = (
    '\n        {\n          "at": %s,\n          "forJob": %s,\n'
    '          "kind": %s,\n          "lostSeconds": %s\n        }'
)


def _num_text(value: float | None) -> str:
    """A number as :func:`~.simulation.normalize` then ``json.dumps`` would write it:
    an int, an integral float as an int, else ``repr(round(value, 6))``."""
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if value.is_integer():
        return str(int(value))
    if 1e-4 <= abs(value) < 1e9:
        # ".6f" rounds to 6 decimals exactly as round() does; below 1e9 floats are
        # closer together than 1e-6, so no shorter decimal names the same float and the
        # digits without trailing zeros are repr's (which is fixed-point from 1e-4 on)
        text = f"{value:.6f}".rstrip("0")
        return text + "0" if text[-1] == "." else text
    return repr(round(value, 6))


def _is_plain(value: str) -> bool:
    """Whether ``json.dumps`` writes ``value`` as it is between quotes (printable ASCII
    without ``"`` or backslash)."""
    return value.isascii() and value.isprintable() and '"' not in value and "\\" not in value


def _str_text(value: str | None) -> str:
    """``json.dumps`` of a string (or None), quoting plain ASCII text directly."""
    if value is None:
        return "null"
    if _is_plain(value):
        return '"' + value + '"'
    return json.dumps(value)


class _Quoted(dict[str, str]):
    """``json.dumps`` of each status, reason and share name met (a handful), computed
    once (emptied if it ever grows past a few thousand)."""

    def __missing__(self, key: str) -> str:
        if len(self) > 4096:
            self.clear()
        value = self[key] = _str_text(key)
        return value


#: Statuses, reasons and share names as JSON text.
_QUOTED = _Quoted()


_FROM = _Pieces(lambda before: f',\n      "from": {_str_text(before)},\n      "jobName": ')
_REASON_TO = _Pieces(
    lambda pair: (
        f',\n      "reason": {_str_text(pair[0])},\n      "to": {_str_text(pair[1])}\n    }}'
    )
)


def _preemptions_text(preemptions: tuple[Preemption, ...]) -> str:
    if not preemptions:
        return "[]"
    items = ",".join(
        _PREEMPTION
        % (_num_text(p.at), _str_text(p.forJob), _str_text(p.kind), _num_text(p.lostSeconds))
        for p in preemptions
    )
    return "[" + items + "\n      ]"


def job_record_text(view: JobView) -> str:
    """``,\\n    "name": {record}``: one entry of the ``jobs`` mapping as ``dump_output``
    writes it (:func:`~.simulation.job_record`, keys sorted, at depth 2), with a leading
    separator (the caller drops it before the first entry)."""
    reason = view.statusReason
    return _JOB % (
        _str_text(view.jobName),
        view.attempts,
        _num_text(view.firstStartedAt),
        _num_text(view.lostSeconds),
        _preemptions_text(view.preemptions) if view.preemptions else "[]",
        _QUOTED[view.quotaShareName],
        _QUOTED[view.status],
        # an unschedulable job's reason is its own sentence: not worth keeping
        "null" if reason is None else _str_text(reason),
        _num_text(view.stoppedAt),
        _num_text(view.submittedAt),
    )


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
    from_text = _FROM
    reason_to_text = _REASON_TO
    batch: list[str] = []
    last_at: list[Any] = [None, ""]
    spool = tempfile.TemporaryFile("w+", encoding="utf-8") if transitions else None  # noqa: SIM115 (closed in the finally below)
    write_batch = spool.write if spool is not None else None
    terminal = TERMINAL_STATES
    # every job is registered before the run: when no name needs escaping (the common
    # case), a transition quotes its job's name as it is
    plain_names = all(_is_plain(name) for name in engine.job_names())

    def record(t: Transition) -> None:
        nonlocal count, settled
        count += 1
        if write_batch is not None:
            at = t[0]
            if at is not last_at[0]:
                last_at[0] = at
                last_at[1] = _AT + _num_text(at)
            batch.append(
                f'{last_at[1]}{from_text[t[2]]}"{t[1]}"{reason_to_text[t[4], t[3]]}'
                if plain_names
                else f"{last_at[1]}{from_text[t[2]]}{_str_text(t[1])}{reason_to_text[t[4], t[3]]}"
            )
            if len(batch) >= _BATCH:
                write_batch("".join(batch))
                batch.clear()
        if progress is not None and t[3] in terminal:
            settled += 1
            if settled % step == 0:
                progress(settled, total)

    engine.add_listener(record)
    try:
        with cyclic_gc_paused():
            engine.run(scenario.options.horizonSeconds)
            if spool is not None and batch:
                spool.write("".join(batch))
                batch.clear()
            if progress is not None:
                progress(settled, total)
            out.write('{\n  "jobs": {')
            written = 0

            def written_views(views: Iterator[JobView]) -> Iterator[JobView]:
                """Write each view's record as it passes (the first without separator)."""
                nonlocal written
                records: list[str] = []
                for view in views:
                    records.append(job_record_text(view))
                    if len(records) >= _BATCH:
                        out.write("".join(records)[0 if written else 1 :])
                        written += len(records)
                        records.clear()
                    yield view
                if records:
                    out.write("".join(records)[0 if written else 1 :])
                    written += len(records)

            names = engine.job_names()
            in_name_order = names == sorted(names)
            # metrics are summed in registration order, records written in name order:
            # one pass serves both when the two orders are one (the common case)
            views = engine.iter_jobs()
            metrics = compute_metrics(
                written_views(views) if in_name_order else views,
                engine.usage_integrals(),
                [s.quotaShareName for s in scenario.shares],
                duration=engine.now,
                capacity=engine.capacity,
            )
            del names
            if not in_name_order:
                for _ in written_views(engine.iter_jobs(by_name=True)):
                    pass
            out.write("\n  },\n" if written else "},\n")
            out.write('  "metrics": ' + _nested(normalize(metrics), 1) + ",\n")
            out.write('  "scenario": ' + json.dumps(scenario.name))
            if spool is None:
                out.write("\n}\n")
            else:
                out.write(',\n  "transitions": [')
                if count:
                    spool.seek(0)
                    spool.read(1)  # the first entry's separator: "," (its newline stays)
                    shutil.copyfileobj(spool, out, _COPY_CHUNK)
                    out.write("\n  ]\n}\n")
                else:
                    out.write("]\n}\n")
            del engine  # freed now, while the collector is still paused
    finally:
        if spool is not None:
            spool.close()
    return count
