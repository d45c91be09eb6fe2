"""``report.html``: one self-contained page (no external file, script or font).

The comparison table (durations in d/h/m/s), the verdicts, per-team and per-share
figures, what the import left out, and the plots inline as ``data:`` PNG images.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from typing import Any

from quotagov.durations import human_duration
from quotagov_tools.whatif.plots import PLOT_FILES
from quotagov_tools.whatif.report import comparison_rows, regression_line

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:75em;color:#222}
table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
td:first-child,th:first-child{text-align:left}
th{background:#f3f3f3}
img{max-width:100%;border:1px solid #ddd;margin:.5em 0}
.v{font-family:monospace}
.lead{border:3px solid #c0392b;background:#fdecea;padding:.5em 1em;margin:1em 0}
.lead h2{color:#c0392b;margin:.2em 0}
.warn{border:3px solid #d68910;background:#fef5e7;padding:.5em 1em;margin:1em 0}
"""

_CAPTIONS = {
    "wait-cdf.png": "Wait time CDF per policy (every RUNNABLE stretch)",
    "used-capacity.png": "Used capacity over time per policy",
    "lost-work.png": "Lost work per share per policy",
    "completion-by-team.png": "Completion time per team per policy",
}


def _table(rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows[1:]
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _group_rows(policies: Mapping[str, Mapping[str, Any]], part: str) -> list[list[str]]:
    names = list(policies)
    groups: list[str] = []
    for entry in policies.values():
        groups += [g for g in entry[part] if g not in groups]
    rows = [[part[:-1], "figure", *names]]
    for g in groups:
        for label, key, sub in (
            ("wait p95", "waitSeconds", "p95"),
            ("completion p50", "completionSeconds", "p50"),
            ("completion p95", "completionSeconds", "p95"),
        ):
            cells = []
            for n in names:
                m = policies[n][part].get(g)
                cells.append(human_duration(m[key][sub]) if m else "-")
            rows.append([g, label, *cells])
        lost = []
        for n in names:
            m = policies[n][part].get(g)
            lost.append(f"{m['lostInstanceSeconds'] / 3600:.1f} h" if m else "-")
        rows.append([g, "lost instance-hours", *lost])
        util = []
        for n in names:
            m = policies[n][part].get(g)
            util.append(
                f"{m['utilization'] * 100:.1f} %" if m and m["utilization"] is not None else "-"
            )
        rows.append([g, "utilization (of the environment)", *util])
    return rows


def _environment(capacity: Mapping[str, Any]) -> str:
    """``24 x ml.g5.xlarge``, or per policy when each policy brings its own."""
    values = list(capacity.values())
    if values and isinstance(values[0], Mapping):
        return "; ".join(f"{name}: {_environment(c)}" for name, c in capacity.items())
    return ", ".join(f"{n} x {t}" for t, n in capacity.items())


def _lead(report: Mapping[str, Any]) -> list[str]:
    """The warnings and every regression beyond noise, in boxes before anything else."""
    out: list[str] = []
    warnings = report.get("warnings") or []
    if warnings:
        out.append("<div class='warn'><h2>Policy limits and environment disagree</h2><ul>")
        out += [f"<li>{html.escape(w)}</li>" for w in warnings]
        out.append("</ul></div>")
    found = report.get("regressions") or []
    if found:
        out.append(f"<div class='lead'><h2>Regressions ({len(found)}, worst first)</h2><ul>")
        out += [f"<li class='v'>{html.escape(regression_line(r))}</li>" for r in found]
        out.append("</ul></div>")
    return out


def _fidelity(fidelity: Mapping[str, Any] | None) -> list[str]:
    """The calibration figures of the history the report was made from."""
    if not fidelity:
        return []
    from quotagov_tools.whatif.calibration import fidelity_lines

    return [
        "<h2>Fidelity (the replay against what happened)</h2><ul>",
        *(f"<li>{html.escape(line)}</li>" for line in fidelity_lines(fidelity)),
        "</ul>",
    ]


def render(report: Mapping[str, Any], plots: Mapping[str, bytes]) -> str:
    """The HTML page of a what-if ``report`` (see :mod:`.report`) with its ``plots``."""
    workload = report["workload"]
    policies = report["policies"]
    notes = ", ".join(f"{k}: {v}" for k, v in workload.get("notes", {}).items()) or "none"
    seeds = workload.get("seeds", 1)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>quotagov what-if: {html.escape(str(workload['name']))}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>What-if: {html.escape(str(workload['name']))}</h1>",
        f"<p>{workload['jobs']} jobs, submissions over "
        f"{html.escape(human_duration(workload['submissionSpanSeconds']))}; environment "
        f"{html.escape(_environment(workload['capacity']))}; "
        f"{seeds} seed(s)"
        + (" (figures are medians, [min..max] over the seeds)" if seeds > 1 else "")
        + f". Left out by the import: {html.escape(notes)}.</p>",
        *_lead(report),
        *_fidelity(report.get("fidelity")),
        "<h2>Verdict</h2><ul>",
        *(f"<li class='v'>{html.escape(v)}</li>" for v in report["verdicts"].values()),
        "</ul><h2>Comparison</h2>",
        _table(comparison_rows(policies)),
        "<h2>Per team</h2>",
        _table(_group_rows(policies, "teams")),
        "<h2>Per share</h2>",
        _table(_group_rows(policies, "shares")),
        "<h2>Plots</h2>",
    ]
    for name in PLOT_FILES:
        if name in plots:
            data = base64.b64encode(plots[name]).decode()
            parts.append(f"<h3>{html.escape(_CAPTIONS[name])}</h3>")
            parts.append(
                f"<img alt='{html.escape(_CAPTIONS[name])}' src='data:image/png;base64,{data}'>"
            )
    if seeds > 1:
        parts.append("<p>Plots show the first seed's run of each policy.</p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
