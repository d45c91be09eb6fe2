"""Sweeps: one policy replayed over a grid of settings of its numeric fields, with seeds.

``quotagov whatif WORKLOAD --policy FILE --sweep 'shares.background.borrowLimit=0,50,100,200'
--seeds 3 --out DIR`` replays the workload under every setting of the grid (several
``--sweep`` options make their product) and every seed, and plots the trade-off the
setting moves: the **lenders' p95 wait** (the largest p95 RUNNABLE wait among the
shares whose strategy is ``LEND``) against the **borrowers' p95 completion** (the
largest p95 completion time among the ``LEND_AND_BORROW`` shares), lower being better
on both. A setting is on the **Pareto front** when no other setting is at least as
good on both and better on one (medians over the seeds).

Paths (:func:`resolve`): dotted keys into the policy document, where a list of named
items (quota shares, capacity limits, priority levels) is indexed by the item's name
(``quotaShares.background.resourceSharingConfiguration.borrowLimit``); ``shares`` is
short for ``quotaShares``, and a last key found in exactly one nested object of the
item may skip its parents (``shares.background.borrowLimit``,
``shares.medium.maxCapacity`` when the share has one capacity limit). The field must
exist and be a number; every setting is validated as a whole policy.

Execution (:func:`run_sweep`): every (setting, seed) is one :class:`SweepTask`, run by
:func:`sweep_task`, the same function in a local process pool
(:class:`concurrent.futures.ProcessPoolExecutor`) and on a Dask distributed cluster
(``--scheduler ADDRESS``: :meth:`distributed.Client.get_executor`, the Dask scheduler's
``concurrent.futures`` interface, https://distributed.dask.org/en/stable/api.html);
the results are put in task order, so both give the same document.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quotagov.policy.models import Policy
from quotagov.policy.validation import PolicyError, parse_policy
from quotagov_tools.whatif.errors import OptionError
from quotagov_tools.whatif.governed import LoopOptions, run_policy
from quotagov_tools.whatif.perturb import perturbed
from quotagov_tools.whatif.workload import Workload

#: Keys naming the items of a list in the policy document.
NAME_KEYS = ("quotaShareName", "capacityUnit", "name")
#: Short names of top-level keys.
ALIASES = {"shares": "quotaShares", "classes": "workloadClasses", "levels": "priorityLevels"}


@dataclass(frozen=True, slots=True)
class Axis:
    """One ``--sweep``: a field (its dotted path as given and as resolved) and its values."""

    path: str
    keys: tuple[str | int, ...]
    values: tuple[float, ...]


def _step(node: Any, parts: Sequence[str], i: int) -> tuple[Any, str | int, int] | None:
    """One key of ``parts`` from index ``i`` into ``node``: (child, key, next index).
    A list item is found by name; a name with dots (``ml.g5.xlarge``) spans parts."""
    if isinstance(node, dict):
        for j in range(len(parts), i, -1):
            key = ".".join(parts[i:j])
            key = ALIASES.get(key, key) if i == 0 else key
            if key in node:
                return node[key], key, j
        return None
    if isinstance(node, list):
        for j in range(len(parts), i, -1):
            name = ".".join(parts[i:j])
            for index, item in enumerate(node):
                if isinstance(item, dict) and any(item.get(k) == name for k in NAME_KEYS):
                    return item, index, j
        return None
    return None


def _find_nested(node: Any, key: str, trail: tuple[str | int, ...]) -> list[tuple[str | int, ...]]:
    """Paths below ``node`` whose last key is ``key`` (lists of one item are descended)."""
    found: list[tuple[str | int, ...]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                found.append((*trail, k))
            else:
                found += _find_nested(v, key, (*trail, k))
    elif isinstance(node, list) and len(node) == 1:
        found += _find_nested(node[0], key, (*trail, 0))
    return found


def resolve(document: Mapping[str, Any], path: str) -> tuple[str | int, ...]:
    """The keys of ``path`` in the policy ``document`` (module docstring).

    Raises:
        OptionError: no such field, an ambiguous short path, or a field that is not a
            number (the message names the path and what was found).
    """
    parts = path.split(".")
    node: Any = document
    keys: list[str | int] = []
    i = 0
    while i < len(parts):
        step = _step(node, parts, i)
        if step is None:
            if i == len(parts) - 1 and isinstance(node, dict):
                nested = _find_nested(node, parts[i], ())
                if len(nested) == 1:
                    keys += nested[0]
                    for k in nested[0]:
                        node = node[k]
                    break
                if len(nested) > 1:
                    options = ", ".join(".".join(map(str, n)) for n in nested)
                    raise OptionError([f"--sweep {path}: {parts[i]!r} is ambiguous ({options})"])
            known = _known(node)
            raise OptionError([f"--sweep {path}: no {'.'.join(parts[i:])!r} here (known: {known})"])
        node, key, i = step
        keys.append(key)
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise OptionError(
            [f"--sweep {path}: the field is {type(node).__name__} {node!r}, not a number"]
        )
    return tuple(keys)


def _known(node: Any) -> str:
    if isinstance(node, dict):
        return ", ".join(map(str, node)) or "nothing"
    if isinstance(node, list):
        names = [
            str(item.get(k))
            for item in node
            if isinstance(item, dict)
            for k in NAME_KEYS
            if k in item
        ]
        return ", ".join(names) or "nothing"
    return "nothing: a value"


def parse_axes(options: Sequence[str], policy: Policy) -> list[Axis]:
    """``--sweep PATH=V1,V2,...`` options as axes, checked against ``policy``.

    Raises:
        OptionError: every fault (no ``=``, no value, a value that is not a number, an
            unknown or non-numeric field, a path given twice).
    """
    document = policy.model_dump(mode="json", exclude_none=True)
    faults: list[str] = []
    axes: list[Axis] = []
    for option in options:
        path, sep, text = option.partition("=")
        if not sep or not path or not text.strip():
            faults.append(f"--sweep {option!r}: expected PATH=V1,V2,... (numbers)")
            continue
        values: list[float] = []
        for raw in text.split(","):
            try:
                value = float(raw)
            except ValueError:
                faults.append(f"--sweep {path}: {raw.strip()!r} is not a number")
                continue
            values.append(int(value) if value.is_integer() else value)
        try:
            keys = resolve(document, path)
        except OptionError as exc:
            faults += exc.faults
            continue
        if any(a.keys == keys for a in axes):
            faults.append(f"--sweep {path}: the field is swept twice")
            continue
        axes.append(Axis(path, keys, tuple(dict.fromkeys(values))))
    if faults:
        raise OptionError(faults)
    return axes


def settings(axes: Sequence[Axis]) -> list[dict[str, float]]:
    """Every setting of the grid, ``{path: value}``, in the order the values were given."""
    return [
        dict(zip((a.path for a in axes), combo, strict=True))
        for combo in itertools.product(*(a.values for a in axes))
    ]


def variant(policy: Policy, axes: Sequence[Axis], setting: Mapping[str, float]) -> Policy:
    """``policy`` with ``setting`` applied, validated.

    Raises:
        OptionError: the setting makes an invalid policy (the faults, with the setting).
    """
    document = policy.model_dump(mode="json", exclude_none=True)
    for axis in axes:
        node: Any = document
        for key in axis.keys[:-1]:
            node = node[key]
        node[axis.keys[-1]] = setting[axis.path]
    try:
        return parse_policy(document)
    except PolicyError as exc:
        label = _label(setting)
        raise OptionError([f"--sweep {label}: {fault}" for fault in exc.faults]) from exc


def _label(setting: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in setting.items())


@dataclass(frozen=True, slots=True)
class SweepTask:
    """One run of a sweep: self-contained (picklable), for any executor.

    Attributes:
        index: the setting's index in the grid.
        seed: 0 for the workload as imported, else the perturbed copy's seed.
        policy: the policy document of the setting (JSON-shaped).
        workload, capacity, options: as in :func:`~.governed.run_policy`.
        jitter_seconds, run_noise: the perturbation of a seed's copy.
    """

    index: int
    seed: int
    policy: dict[str, Any]
    workload: Workload
    capacity: dict[str, int] | None
    options: LoopOptions
    jitter_seconds: float
    run_noise: float


def sweep_task(task: SweepTask) -> dict[str, Any]:
    """Run one task: ``{index, seed, total, shares}`` (metrics blocks of the run)."""
    workload = task.workload
    if task.seed:
        workload = perturbed(
            workload, task.seed, jitter_seconds=task.jitter_seconds, run_noise=task.run_noise
        )
    result = run_policy(parse_policy(task.policy), workload, task.capacity, task.options)
    return {
        "index": task.index,
        "seed": task.seed,
        "total": result["total"],
        "shares": result["shares"],
    }


def trade_off(policy: Policy, shares: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The two figures of a run: ``lenderWaitP95`` (seconds, the largest p95 wait of the
    ``LEND`` shares) and ``borrowerCompletionP95`` (seconds, the largest p95 completion
    of the ``LEND_AND_BORROW`` shares); None when no such share has the figure."""
    lenders = [s.quotaShareName for s in policy.quotaShares if _strategy(s) == "LEND"]
    borrowers = [s.quotaShareName for s in policy.quotaShares if _strategy(s) == "LEND_AND_BORROW"]
    waits = [shares[n]["waitSeconds"]["p95"] for n in lenders if n in shares]
    completions = [shares[n]["completionSeconds"]["p95"] for n in borrowers if n in shares]
    return {
        "lenders": lenders,
        "borrowers": borrowers,
        "lenderWaitP95": max((w for w in waits if w is not None), default=None),
        "borrowerCompletionP95": max((c for c in completions if c is not None), default=None),
    }


def _strategy(share: Any) -> str:
    return str(share.resourceSharingConfiguration.strategy)


def pareto(points: Sequence[tuple[float | None, float | None]]) -> list[bool]:
    """For each (x, y), lower better on both: True when no other point is at least as
    good on both and better on one (a point missing a figure is never on the front)."""
    out = []
    for i, (x, y) in enumerate(points):
        if x is None or y is None:
            out.append(False)
            continue
        beaten = any(
            j != i and a is not None and b is not None and a <= x and b <= y and (a < x or b < y)
            for j, (a, b) in enumerate(points)
        )
        out.append(not beaten)
    return out


def _median(values: Sequence[float | None]) -> float | None:
    import statistics

    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


Runner = Callable[[Sequence[SweepTask]], list[dict[str, Any]]]


def local_runner(workers: int | None) -> Runner:
    """Tasks in a local process pool of ``workers`` (None: the cores; 1: this process)."""

    def run(tasks: Sequence[SweepTask]) -> list[dict[str, Any]]:
        n = min(len(tasks), workers or os.cpu_count() or 1)
        if n <= 1:
            return [sweep_task(t) for t in tasks]
        with ProcessPoolExecutor(max_workers=n) as pool:
            return _in_order(pool, tasks)

    return run


def dask_runner(address: str) -> Runner:
    """Tasks on the Dask distributed scheduler at ``address`` (``tcp://host:port``).

    Raises:
        OptionError: dask is not installed (the ``distributed`` extra), or the
            scheduler cannot be reached (within the client's connect timeout).
    """

    def run(tasks: Sequence[SweepTask]) -> list[dict[str, Any]]:
        try:
            from distributed import Client
        except ImportError as exc:
            raise OptionError(
                ["--scheduler: needs the distributed extra (pip install 'quotagov[distributed]')"]
            ) from exc
        try:
            client = Client(address, timeout=10, set_as_default=False)  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError) as exc:
            raise OptionError([f"--scheduler {address}: cannot connect ({exc})"]) from exc
        with client:
            executor = client.get_executor(pure=False)  # type: ignore[no-untyped-call]
            return _in_order(executor, tasks)

    return run


def _in_order(executor: Executor, tasks: Sequence[SweepTask]) -> list[dict[str, Any]]:
    return list(executor.map(sweep_task, tasks))


def run_sweep(
    policy: Policy,
    axes: Sequence[Axis],
    workload: Workload,
    *,
    capacity: Mapping[str, int] | None = None,
    options: LoopOptions | None = None,
    seeds: int = 1,
    jitter_seconds: float = 300.0,
    run_noise: float = 0.1,
    runner: Runner | None = None,
) -> dict[str, Any]:
    """Run the grid; the ``sweep.json`` document.

    Returns:
        ``{"axes": [{path, values}], "seeds": K, "lenders": [...], "borrowers": [...],
        "settings": [{"setting": {path: value}, "lenderWaitP95", "borrowerCompletionP95"
        (seconds, medians over the seeds), "range": {figure: [min, max]},
        "pareto": bool, "total": {waitP95, completionP95, utilization, lostInstanceSeconds}
        (medians)}]}``.

    Raises:
        OptionError: ``seeds < 1``, or a setting that makes an invalid policy (before
            anything runs).
    """
    if seeds < 1:
        raise OptionError([f"--seeds: {seeds} must be >= 1"])
    grid = settings(axes)
    variants = [variant(policy, axes, s) for s in grid]
    seed_list = [0] if seeds == 1 else list(range(1, seeds + 1))
    loop = options or LoopOptions()
    tasks = [
        SweepTask(
            i,
            seed,
            v.model_dump(mode="json", exclude_none=True),
            workload,
            dict(capacity) if capacity else None,
            loop,
            jitter_seconds,
            run_noise,
        )
        for i, v in enumerate(variants)
        for seed in seed_list
    ]
    results = (runner or local_runner(None))(tasks)
    rows: list[dict[str, Any]] = []
    for i, setting in enumerate(grid):
        runs = [r for r in results if r["index"] == i]
        figures = [trade_off(variants[i], r["shares"]) for r in runs]
        row: dict[str, Any] = {"setting": setting}
        ranges: dict[str, list[float] | None] = {}
        for key in ("lenderWaitP95", "borrowerCompletionP95"):
            values = [f[key] for f in figures if f[key] is not None]
            row[key] = _median(values)
            ranges[key] = [min(values), max(values)] if values else None
        row["range"] = ranges
        row["total"] = {
            "waitP95": _median([r["total"]["waitSeconds"]["p95"] for r in runs]),
            "completionP95": _median([r["total"]["completionSeconds"]["p95"] for r in runs]),
            "utilization": _median([r["total"]["utilization"] for r in runs]),
            "lostInstanceSeconds": _median([r["total"]["lostInstanceSeconds"] for r in runs]),
        }
        rows.append(row)
    front = pareto([(r["lenderWaitP95"], r["borrowerCompletionP95"]) for r in rows])
    for row, on in zip(rows, front, strict=True):
        row["pareto"] = on
    first = trade_off(variants[0], {})
    return {
        "axes": [{"path": a.path, "values": list(a.values)} for a in axes],
        "seeds": seeds,
        "lenders": first["lenders"],
        "borrowers": first["borrowers"],
        "settings": rows,
    }


def sweep_lines(document: Mapping[str, Any]) -> list[str]:
    """The sweep as a text table, Pareto-front settings marked ``*``."""
    from quotagov.durations import human_duration

    lines = [
        f"Sweep of {', '.join(a['path'] for a in document['axes'])}, "
        f"{document['seeds']} seed(s): lenders {', '.join(document['lenders']) or 'none'}, "
        f"borrowers {', '.join(document['borrowers']) or 'none'} (* = Pareto front)"
    ]
    for row in document["settings"]:
        mark = "*" if row["pareto"] else " "
        lines.append(
            f" {mark} {_label(row['setting'])}: lenders' p95 wait "
            f"{human_duration(row['lenderWaitP95'])}, borrowers' p95 completion "
            f"{human_duration(row['borrowerCompletionP95'])}"
        )
    return lines


def write_sweep(document: Mapping[str, Any], out: Path) -> list[Path]:
    """Write ``sweep.json`` and ``sweep.png`` (:func:`.plots.sweep_plot`) into ``out``."""
    from quotagov_tools.whatif.plots import sweep_plot

    out.mkdir(parents=True, exist_ok=True)
    path = out / "sweep.json"
    path.write_text(json.dumps(document, indent=2, allow_nan=False) + "\n")
    png = out / "sweep.png"
    png.write_bytes(sweep_plot(document))
    return [path, png]


__all__ = [
    "Axis",
    "SweepTask",
    "dask_runner",
    "local_runner",
    "pareto",
    "parse_axes",
    "resolve",
    "run_sweep",
    "settings",
    "sweep_task",
    "trade_off",
    "variant",
]
