"""The review of a governance policy change: what changes, what risks, what it does.

``quotagov policy review OLD NEW [--workload FILE ...]`` builds one document
(:func:`review`) and writes it as ``review.json`` and ``review.md`` (:func:`markdown`,
fit for a pull-request comment):

- ``changes``: the change in governance terms
  (:func:`quotagov.governance.audit.policy_diff.policy_difference`, the same list the
  audit records when the policy parameter changes);
- ``findings``: the risk findings the audit would raise for the same change
  (:func:`quotagov.governance.audit.findings.policy_change_findings`, one rule set);
- ``whatif``: per workload, the what-if of OLD (the baseline) against NEW
  (:func:`quotagov_tools.whatif.run_whatif`), its comparison table and ``regressions``: every
  per-team and per-share figure NEW makes worse, biggest first, each marked
  ``withinNoise`` when the seeds' ranges of OLD and NEW overlap.

``review.json``::

    {"old": PATH, "new": PATH, "changes": [...], "findings": [{code, severity, message}],
     "highFindings": N,
     "whatif": [{"workload": NAME, "jobs": N, "seeds": K, "table": [[...]],
                 "regressions": [{scope: "team"|"share", name, figure, old, new, change,
                                  percent, withinNoise}],
                 "verdict": "..."}]}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from quotagov.governance.audit.findings import policy_change_findings
from quotagov.governance.audit.policy_diff import policy_difference
from quotagov.policy import Policy
from quotagov_tools.whatif.report import (
    FIGURE_RULES,
    _overlaps,
    comparison_rows,
    figure_at,
    format_figure,
)

#: Per-team and per-share figures a regression is read from: label, path in a metrics
#: block (which way is worse, and the format: ``FIGURE_RULES`` of the what-if report).
REGRESSION_FIGURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("wait p95", ("waitSeconds", "p95")),
    ("completion p95", ("completionSeconds", "p95")),
    ("cross-share preemptions", ("preemptions", "CROSS_SHARE")),
    ("in-share preemptions", ("preemptions", "IN_SHARE")),
    ("lost instance-hours", ("lostInstanceSeconds",)),
    ("goodput", ("goodput",)),
    ("failed jobs", ("failedJobs",)),
    ("refused jobs", ("refusedJobs",)),
)


def regressions(report: Mapping[str, Any], old: str, new: str) -> list[dict[str, Any]]:
    """Every per-team and per-share figure of :data:`REGRESSION_FIGURES` that ``new``
    makes worse than ``old`` in a what-if ``report``, biggest first.

    Size: the relative change (``percent``) when the old value is not 0, else the
    change itself counts as +inf % (a figure that appears from nothing ranks first).
    ``withinNoise``: the min-max ranges over the seeds overlap (always False with one
    seed: nothing to measure the noise with).
    """
    base, entry = report["policies"][old], report["policies"][new]
    out: list[dict[str, Any]] = []
    for scope, part in (("team", "teams"), ("share", "shares")):
        for name in sorted(entry[part]):
            for label, path in REGRESSION_FIGURES:
                worse, fmt = FIGURE_RULES[path]
                before = figure_at(base[part].get(name), path)
                after = figure_at(entry[part][name], path)
                if before is None or after is None or before == after:
                    continue
                change = after - before
                if change * worse < 0:
                    continue
                percent = change / abs(before) * 100 if before else None
                out.append(
                    {
                        "scope": scope,
                        "name": name,
                        "figure": label,
                        "old": before,
                        "new": after,
                        "oldText": format_figure(before, fmt),
                        "newText": format_figure(after, fmt),
                        "change": change,
                        "percent": percent,
                        "withinNoise": _overlaps(entry, base, (part, name, *path)),
                    }
                )
    out.sort(
        key=lambda r: (
            r["withinNoise"],
            -(abs(r["percent"]) if r["percent"] is not None else float("inf")),
            r["scope"],
            r["name"],
            r["figure"],
        )
    )
    return out


def whatif_section(
    workload: str, report: Mapping[str, Any], old: str = "old", new: str = "new"
) -> dict[str, Any]:
    """One workload's part of the review from its what-if ``report`` (OLD first)."""
    return {
        "workload": workload,
        "jobs": report["workload"]["jobs"],
        "seeds": report["workload"]["seeds"],
        "table": comparison_rows(report["policies"]),
        "regressions": regressions(report, old, new),
        "verdict": report["verdicts"][new],
    }


def review(
    old_path: str,
    new_path: str,
    old: Policy,
    new: Policy,
    whatifs: Iterable[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The review document (shape in the module docstring)."""
    findings = policy_change_findings(old, new)
    return {
        "old": old_path,
        "new": new_path,
        "changes": policy_difference(old, new),
        "findings": findings,
        "highFindings": sum(1 for f in findings if f["severity"] == "high"),
        "whatif": list(whatifs),
    }


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(cell(c) for c in rows[0]) + " |"]
    lines.append("|" + "|".join(" --- " for _ in rows[0]) + "|")
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows[1:]]
    return lines


def _direction(change: Mapping[str, Any]) -> str:
    path = str(change["path"])
    if path.startswith("teams.") and change["change"] in ("added", "removed"):
        return "gains" if change["change"] == "added" else "loses"
    if path.endswith(".approvers") and change["change"] in ("added", "removed"):
        return "gains" if change["change"] == "added" else "loses"
    return "settings"


def markdown(document: Mapping[str, Any]) -> str:
    """``review.md``: findings first, then who gains and loses a right, the other
    settings, and each workload's regressions and comparison table."""
    high = document["highFindings"]
    findings = document["findings"]
    lines = [
        f"## Policy review: `{document['old']}` -> `{document['new']}`",
        "",
        f"**{len(document['changes'])} change(s), {len(findings)} finding(s) ({high} high).**",
        "",
        "### Risk findings",
        "",
    ]
    if findings:
        lines += _table(
            [["severity", "code", "finding"]]
            + [[f["severity"].upper(), f["code"], f["message"]] for f in findings]
        )
    else:
        lines.append("None.")
    groups = (
        ("gains", "Who gains a right"),
        ("loses", "Who loses a right"),
        ("settings", "Shares, classes, levels and other settings"),
    )
    for key, title in groups:
        chosen = [c for c in document["changes"] if _direction(c) == key]
        lines += ["", f"### {title}", ""]
        lines += [f"- {c['text']}" for c in chosen] or ["None."]
    for section in document["whatif"]:
        lines += [
            "",
            f"### What-if on `{section['workload']}` ({section['jobs']} jobs, "
            f"{section['seeds']} seed(s))",
            "",
            section["verdict"],
            "",
            "Regressions, biggest first (per team and per share):",
            "",
        ]
        if section["regressions"]:
            rows = [["scope", "name", "figure", "old", "new", "change", "noise"]]
            for r in section["regressions"]:
                pct = "new" if r["percent"] is None else f"{r['percent']:+.0f} %"
                noise = (
                    "within noise"
                    if r["withinNoise"]
                    else ("beyond noise" if section["seeds"] > 1 else "one seed: unmeasured")
                )
                rows.append(
                    [r["scope"], r["name"], r["figure"], r["oldText"], r["newText"], pct, noise]
                )
            lines += _table(rows)
        else:
            lines.append("None.")
        lines += ["", "Comparison (median [min..max] over the seeds):", ""]
        lines += _table(section["table"])
    return "\n".join(lines) + "\n"
