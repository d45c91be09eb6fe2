"""The comparison: runs aggregated over seeds, deltas against the first policy, verdicts.

``report.json`` (written by :mod:`.runner`) is::

    {"workload": {"jobs": N, ..., "seeds": K, "capacity": {...}, "options": {...}},
     "warnings": ["policy 'x': its quota shares' capacity limits total 24 x ..."],
     "regressions": [{policy, against, scope, name, figure, label, before, after,
                      change, percent, noise}],          # worst first
     "policies": {NAME: {"total": M, "shares": {SHARE: M}, "teams": {TEAM: M},
                         "durationSeconds": s, "refusals": {reason: n},
                         "adminActions": n, "scenarioActions": [{at, type, ...,
                                                                 outcome, reason}],
                         "usedCapacity": [[bin start s, mean instances], ...],
                         "delta": {"total": D, "shares": {...}, "teams": {...}},
                         "spread": {"total": R, ...}}},      # spread only when K > 1
     "verdicts": {NAME: "one line"},
     "fidelity": {...}}                  # only for a history, see :mod:`.calibration`

Each ``M`` is a :func:`quotagov.scheduler.metrics.metrics_block` (``total`` adds
``dispositions``); with ``K > 1`` seeds every number of ``M`` is the **median** over
the seeds and ``spread`` holds ``[min, max]`` at the same place. ``D`` holds, for the
compared figures (:data:`COMPARED`), ``{"change": this - first, "percent": change
over |first| x 100}`` (``percent`` null when the first is 0 or null). ``refusals``
counts jobs per refusal reason (with seeds, the largest count over the seeds);
``adminActions`` counts the controller's actions and ``scenarioActions`` lists the
scenario's admin actions as replayed (applied or skipped, and why), and
``usedCapacity`` the instances held over time (``LoopOptions.series_bins`` bins of
equal width), all three of the first run. ``warnings`` (:func:`limit_warnings`) and
``regressions`` (:func:`regressions`) are what the terminal and the page show first.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from quotagov.durations import human_duration

#: The figures a delta block compares (keys of a metrics block).
COMPARED = (
    "waitSeconds",
    "completionSeconds",
    "utilization",
    "utilizationOfLimit",
    "preemptions",
    "lostInstanceSeconds",
    "lostGpuSeconds",
    "goodput",
    "failedJobs",
    "refusedJobs",
    "dispositions",
)

_SECONDS_PER_WEEK = 7 * 86400


def _combine(values: Sequence[Any], how: str) -> Any:
    """Median (``how="median"``) or ``[min, max]`` (``"range"``) of same-shaped values."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    first = present[0]
    if isinstance(first, dict):
        keys: list[str] = []
        for v in present:
            keys += [k for k in v if k not in keys]
        return {k: _combine([v.get(k) for v in present], how) for k in keys}
    if isinstance(first, bool) or not isinstance(first, int | float):
        return first
    if how == "median":
        return statistics.median(present)
    return [min(present), max(present)]


def aggregate(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One policy's entry from its runs (one per seed): medians, and spreads when K > 1."""
    parts = ("total", "shares", "teams")
    out: dict[str, Any] = {p: _combine([r[p] for r in runs], "median") for p in parts}
    out["durationSeconds"] = _combine([r["durationSeconds"] for r in runs], "median")
    refusals: dict[str, int] = {}
    for r in runs:
        for reason, n in r["refusals"].items():
            refusals[reason] = max(refusals.get(reason, 0), n)
    out["refusals"] = refusals
    if len(runs) > 1:
        out["spread"] = {p: _combine([r[p] for r in runs], "range") for p in parts}
    return out


def _delta(this: Any, base: Any) -> Any:
    if isinstance(this, dict) or isinstance(base, dict):
        this = this if isinstance(this, dict) else {}
        base = base if isinstance(base, dict) else {}
        return {k: _delta(this.get(k), base.get(k)) for k in dict.fromkeys([*base, *this])}
    if this is None or base is None:
        return {"change": None, "percent": None}
    change = this - base
    return {"change": change, "percent": change / abs(base) * 100 if base else None}


def delta_block(this: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`COMPARED` figures of ``this`` metrics block against ``base``."""
    return {k: _delta(this.get(k), base.get(k)) for k in COMPARED if k in this or k in base}


def with_deltas(policies: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Add each policy's ``delta`` block against the first policy (the first's is zero)."""
    names = list(policies)
    base = policies[names[0]]
    for entry in policies.values():
        entry["delta"] = {
            "against": names[0],
            "total": delta_block(entry["total"], base["total"]),
            "shares": {
                s: delta_block(m, base["shares"].get(s, {})) for s, m in entry["shares"].items()
            },
            "teams": {
                t: delta_block(m, base["teams"].get(t, {})) for t, m in entry["teams"].items()
            },
        }
    return policies


def rate_window(duration: float) -> tuple[float | None, str]:
    """How a rate is stated for a run of ``duration`` seconds: ``(seconds, label)``.

    Scaled to the workload's span, so a short run is never extrapolated to weeks:
    under 2 days the figure is the run's total (``(None, "over the run (1 h 20 m)")``),
    under 3 weeks per day, else per week.
    """
    if duration < 2 * 86400:
        return None, f"over the run ({human_duration(duration)})"
    if duration < 3 * _SECONDS_PER_WEEK:
        return 86400.0, "per day"
    return float(_SECONDS_PER_WEEK), "per week"


def lost_rate(entry: Mapping[str, Any], window: float | None) -> tuple[float | None, str]:
    """Work lost per ``window`` seconds of the run (None: the run's total), in GPU-hours
    (when every instance type's GPUs are known) else instance-hours."""
    duration = entry.get("durationSeconds") or 0
    total = entry["total"]
    lost, unit = total.get("lostGpuSeconds"), "GPU-h"
    if lost is None:
        lost, unit = total["lostInstanceSeconds"], "instance-h"
    if not duration:
        return None, unit
    scale = window / duration if window is not None else 1.0
    return lost * scale / 3600, unit


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f} %"


def _overlaps(entry: Mapping[str, Any], base: Mapping[str, Any], path: Sequence[str]) -> bool:
    """True when the min-max ranges of a figure overlap (only with seeds)."""
    a, b = entry.get("spread"), base.get("spread")
    for key in path:
        a = a.get(key) if isinstance(a, dict) else None
        b = b.get(key) if isinstance(b, dict) else None
    if not (isinstance(a, list) and isinstance(b, list)):
        return False
    return bool(a[0] <= b[1] and b[0] <= a[1])


def verdict(name: str, entry: Mapping[str, Any], base_name: str, base: Mapping[str, Any]) -> str:
    """One line comparing ``entry`` with the first policy.

    Example: ``candidate vs today: p95 completion -22 % for research, +4 % for applied;
    p95 wait -31 %; 3.1 GPU-h lost per week more; utilization 71 % -> 78 %``.
    A change whose seed ranges overlap is marked ``(within noise)``; lost work is stated
    per the :func:`rate_window` of the longer run (the run's total under 2 days).
    """
    if entry is base:
        return f"{name}: the baseline the others are compared with"
    parts: list[str] = []
    teams = []
    for team, d in sorted(entry["delta"]["teams"].items()):
        pct = d.get("completionSeconds", {}).get("p95", {}).get("percent")
        if pct is not None:
            noise = _overlaps(entry, base, ("teams", team, "completionSeconds", "p95"))
            teams.append(
                (abs(pct), f"{pct:+.0f} % for {team}" + (" (within noise)" if noise else ""))
            )
    if teams:
        teams.sort(reverse=True)
        parts.append("p95 completion " + ", ".join(t for _, t in teams[:3]))
    wait = entry["delta"]["total"]["waitSeconds"]["p95"]
    if wait["percent"] is not None:
        noise = _overlaps(entry, base, ("total", "waitSeconds", "p95"))
        parts.append(f"p95 wait {wait['percent']:+.0f} %" + (" (within noise)" if noise else ""))
    elif wait["change"] is not None:
        parts.append(f"p95 wait {human_duration(wait['change'])} more")
    window, per = rate_window(
        max(entry.get("durationSeconds") or 0, base.get("durationSeconds") or 0)
    )
    lost, unit = lost_rate(entry, window)
    lost_base, _ = lost_rate(base, window)
    if lost is not None and lost_base is not None:
        diff = lost - lost_base
        more = "more" if diff >= 0 else "less"
        parts.append(f"{abs(diff):.1f} {unit} lost {per} {more}")
    parts.append(
        f"utilization {_pct(base['total']['utilization'])} -> {_pct(entry['total']['utilization'])}"
    )
    for key, label in (("failedJobs", "failed"), ("refusedJobs", "refused")):
        a, b = base["total"][key], entry["total"][key]
        if a != b:
            parts.append(f"{label} {a} -> {b}")
    return f"{name} vs {base_name}: " + "; ".join(parts)


def verdicts(policies: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """:func:`verdict` for every policy (the first is the baseline)."""
    names = list(policies)
    base = policies[names[0]]
    return {n: verdict(n, policies[n], names[0], base) for n in names}


def _cell(entry: Mapping[str, Any], path: Sequence[str], fmt: str) -> str:
    value: Any = entry["total"]
    spread: Any = entry.get("spread", {}).get("total")
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
        spread = spread.get(key) if isinstance(spread, dict) else None
    text = format_figure(value, fmt)
    if isinstance(spread, list) and spread[0] != spread[1]:
        text += f" [{format_figure(spread[0], fmt)}..{format_figure(spread[1], fmt)}]"
    return text


def format_figure(value: Any, fmt: str) -> str:
    """A figure as shown in the reports: ``fmt`` is ``duration`` (seconds), ``hours``
    (seconds shown as hours), ``percent`` (a fraction) or ``count``; None is ``-``."""
    if value is None:
        return "-"
    if fmt == "duration":
        return human_duration(value)
    if fmt == "percent":
        return f"{value * 100:.1f} %"
    if fmt == "hours":
        return f"{value / 3600:.1f} h"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


#: Rows of the comparison table: label, path in the total block, format.
TABLE_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("wait p50", ("waitSeconds", "p50"), "duration"),
    ("wait p95", ("waitSeconds", "p95"), "duration"),
    ("wait max", ("waitSeconds", "max"), "duration"),
    ("completion p50", ("completionSeconds", "p50"), "duration"),
    ("completion p95", ("completionSeconds", "p95"), "duration"),
    ("utilization", ("utilization",), "percent"),
    ("utilization of limit", ("utilizationOfLimit",), "percent"),
    ("preemptions cross-share", ("preemptions", "CROSS_SHARE"), "count"),
    ("preemptions in-share", ("preemptions", "IN_SHARE"), "count"),
    ("lost instance-hours", ("lostInstanceSeconds",), "hours"),
    ("goodput", ("goodput",), "percent"),
    ("failed jobs", ("failedJobs",), "count"),
    ("refused jobs", ("refusedJobs",), "count"),
    ("resubmitted", ("dispositions", "resubmit"), "count"),
    ("reclassified", ("dispositions", "reclassify"), "count"),
    ("owner asked", ("dispositions", "askOwner"), "count"),
    ("thrash guard", ("dispositions", "thrashGuard"), "count"),
)


def comparison_rows(policies: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    """The comparison table: a header row (``figure``, policy names), then one row each."""
    names = list(policies)
    rows = [["figure", *names]]
    for label, path, fmt in TABLE_ROWS:
        rows.append([label, *(_cell(policies[n], path, fmt) for n in names)])
    return rows


def text_table(rows: Sequence[Sequence[str]]) -> str:
    """Rows as aligned text columns (first row the header)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


#: Which way each figure gets worse and how it is shown: path in a metrics block ->
#: (+1 when a higher value is worse, -1 when a lower one is; :func:`format_figure`'s
#: format). The one rule of both regression lists (this module's and the policy
#: review's, :mod:`quotagov_tools.whatif.policy_review`).
FIGURE_RULES: Mapping[tuple[str, ...], tuple[int, str]] = {
    ("waitSeconds", "p95"): (1, "duration"),
    ("completionSeconds", "p95"): (1, "duration"),
    ("preemptions", "CROSS_SHARE"): (1, "count"),
    ("preemptions", "IN_SHARE"): (1, "count"),
    ("lostInstanceSeconds",): (1, "hours"),
    ("goodput",): (-1, "percent"),
    ("failedJobs",): (1, "count"),
    ("refusedJobs",): (1, "count"),
}

#: Figures a regression is looked for in: (path in a metrics block, label); which way
#: is worse: :data:`FIGURE_RULES`.
REGRESSION_FIGURES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("completionSeconds", "p95"), "p95 completion"),
    (("waitSeconds", "p95"), "p95 wait"),
    (("lostInstanceSeconds",), "lost work"),
    (("failedJobs",), "failed jobs"),
    (("refusedJobs",), "refused jobs"),
    (("goodput",), "goodput"),
)
#: A change smaller than this (percent of the baseline's value) is not a regression.
REGRESSION_MIN_PERCENT = 5.0


def figure_at(block: Any, path: Sequence[str]) -> Any:
    """The value at ``path`` in a metrics ``block`` (None where a key is missing)."""
    for key in path:
        block = block.get(key) if isinstance(block, Mapping) else None
    return block


def regressions(policies: Mapping[str, Mapping[str, Any]], seeds: int) -> list[dict[str, Any]]:
    """Every figure of every team, share and total that got worse than the baseline
    (the first policy) beyond noise, worst first.

    A change is a regression when it goes the bad way (:data:`REGRESSION_FIGURES`), by
    at least :data:`REGRESSION_MIN_PERCENT` of the baseline's value (any change from
    0), and, with ``seeds > 1``, when the two policies' ``[min..max]`` ranges over the
    seeds do not overlap (``noise: "beyond noise"``); with one seed the noise is not
    measured (``noise: "not measured (1 seed)"``).

    Returns:
        ``[{policy, against, scope ("team"|"share"|"total"), name, figure, label,
        before, after, change, percent}]``, sorted by ``percent`` (a change from 0
        first), then by ``change``.
    """
    names = list(policies)
    base_name = names[0]
    base = policies[base_name]
    out: list[dict[str, Any]] = []
    for name in names[1:]:
        entry = policies[name]
        scopes: list[tuple[str, str, tuple[str, ...]]] = [("total", "total", ("total",))]
        scopes += [("team", t, ("teams", t)) for t in entry["teams"]]
        scopes += [("share", s, ("shares", s)) for s in entry["shares"]]
        for scope, group, where in scopes:
            for path, label in REGRESSION_FIGURES:
                worse = FIGURE_RULES[path][0]
                after = figure_at(entry, (*where, *path))
                before = figure_at(base, (*where, *path))
                if not isinstance(after, int | float) or not isinstance(before, int | float):
                    continue
                change = after - before
                if change * worse <= 0:
                    continue
                percent = change / abs(before) * 100 if before else None
                if percent is not None and abs(percent) < REGRESSION_MIN_PERCENT:
                    continue
                if seeds > 1 and _overlaps(entry, base, (*where[:1], *where[1:], *path)):
                    continue
                out.append(
                    {
                        "policy": name,
                        "against": base_name,
                        "scope": scope,
                        "name": group,
                        "figure": ".".join(path),
                        "label": label,
                        "before": before,
                        "after": after,
                        "change": change,
                        "percent": percent,
                        "noise": "beyond noise" if seeds > 1 else "not measured (1 seed)",
                    }
                )
    out.sort(
        key=lambda r: (
            -(float("inf") if r["percent"] is None else abs(r["percent"])),
            -abs(r["change"]),
        )
    )
    return out


def _figure_text(value: float, figure: str) -> str:
    if figure.endswith(("p95", "p50")):
        return human_duration(value)
    if figure == "lostInstanceSeconds":
        return f"{value / 3600:.1f} instance-h"
    if figure == "goodput":
        return f"{value * 100:.1f} %"
    return f"{value:g}"


def regression_line(r: Mapping[str, Any]) -> str:
    """``candidate vs today: team research p95 completion 12 m -> 1 h 58 m (+886 %)``."""
    where = "total" if r["scope"] == "total" else f"{r['scope']} {r['name']}"
    pct = "from 0" if r["percent"] is None else f"{r['percent']:+.0f} %"
    return (
        f"{r['policy']} vs {r['against']}: {where} {r['label']} "
        f"{_figure_text(r['before'], r['figure'])} -> {_figure_text(r['after'], r['figure'])} "
        f"({pct}; {r['noise']})"
    )


def limit_warnings(
    limits: Mapping[str, Mapping[str, int]], capacities: Mapping[str, Mapping[str, int]]
) -> list[str]:
    """Where a policy's capacity limits and the environment disagree.

    Args:
        limits: per policy, the sum of its quota shares' ``maxCapacity`` per instance
            type (instances).
        capacities: per policy, the environment it ran on (instances per type).

    Returns:
        One line per instance type where they disagree: limits that total more than
        the environment holds (the shares cannot all hold their limits at once: a
        limit is what a share may use without borrowing, see
        https://docs.aws.amazon.com/batch/latest/APIReference/API_QuotaShareCapacityLimit.html),
        or less (instances beyond every share's limit).
    """
    lines: list[str] = []
    for name, total in limits.items():
        env = capacities.get(name, {})
        for unit in sorted({*total, *env}):
            want, have = total.get(unit, 0), env.get(unit, 0)
            if want > have:
                lines.append(
                    f"policy {name!r}: its quota shares' capacity limits total {want} x {unit} "
                    f"on an environment of {have}: the shares cannot all hold their limits "
                    f"at once"
                )
            elif want < have:
                lines.append(
                    f"policy {name!r}: its quota shares' capacity limits total {want} x {unit} "
                    f"on an environment of {have}: {have - want} instance(s) beyond every "
                    f"share's limit"
                )
    return lines
