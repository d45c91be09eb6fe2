"""The what-if plots, drawn with matplotlib (Agg backend: no display) as PNG bytes.

- ``wait-cdf.png``: the cumulative distribution of every RUNNABLE wait, per policy;
- ``used-capacity.png``: instances held in the environment over time, per policy, with
  the environment's size;
- ``lost-work.png``: instance-hours of work lost to preemptions, per share and policy;
- ``completion-by-team.png``: completion time (submission to success) per team and
  policy, as box plots (whiskers 5th-95th percentile);
- ``overview.png``: the four on one page with the verdicts (:func:`overview`).

Input: per policy the ``series`` of one run (:func:`quotagov_tools.whatif.governed.run_policy`)
and the environment's capacity. Needs the ``plot`` extra (``pip install quotagov[plot]``).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

#: File names of the plots, in the order the report shows them.
PLOT_FILES = ("wait-cdf.png", "used-capacity.png", "lost-work.png", "completion-by-team.png")


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def _hours(seconds: float) -> float:
    return seconds / 3600


def wait_cdf(series: Mapping[str, Mapping[str, Any]]) -> bytes:
    """The wait-time CDF per policy (x in hours, symmetric-log scale)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    drawn = False
    for name, s in series.items():
        values = s["waitQuantiles"]
        if not values:
            continue
        n = len(values)
        ax.step(
            [_hours(v) for v in values], [(i + 1) / n for i in range(n)], where="post", label=name
        )
        drawn = True
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set_xlabel("wait in RUNNABLE (hours)")
    ax.set_ylabel("fraction of waits")
    ax.set_title("Wait time, every RUNNABLE stretch (after preemptions too)")
    ax.grid(True, alpha=0.3)
    if drawn:
        ax.legend()
    else:
        _nothing(ax, "no job waited in RUNNABLE (every job refused?)")
    return _png(fig)


def _nothing(ax: Any, text: str) -> None:
    """Say in the plot why it is empty."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)


def used_capacity(series: Mapping[str, Mapping[str, Any]], capacity: int) -> bytes:
    """Mean instances held per time bin, per policy, and the environment's size."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, s in series.items():
        points = s["usedCapacity"]  # [bin start seconds, mean instances]
        ax.step(
            [_hours(p[0]) for p in points],
            [p[1] for p in points],
            where="post",
            label=name,
            lw=1.2,
        )
    ax.axhline(capacity, color="grey", ls="--", lw=1, label=f"environment ({capacity})")
    ax.set_xlabel("time (hours)")
    ax.set_ylabel("instances held")
    ax.set_title("Used capacity over time")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return _png(fig)


def lost_work(series: Mapping[str, Mapping[str, Any]]) -> bytes:
    """Grouped bars: lost instance-hours per share, one bar per policy."""
    fig, ax = plt.subplots(figsize=(7, 4))
    shares: list[str] = []
    for s in series.values():
        shares += [k for k in s["lostByShare"] if k not in shares]
    width = 0.8 / max(1, len(series))
    for i, (name, s) in enumerate(series.items()):
        xs = [j + i * width for j in range(len(shares))]
        ax.bar(xs, [_hours(s["lostByShare"].get(k, 0)) for k in shares], width, label=name)
    ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(shares))], shares)
    ax.set_ylabel("lost instance-hours")
    ax.set_title("Work lost to preemptions, per share")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    return _png(fig)


def completion_by_team(series: Mapping[str, Mapping[str, Any]]) -> bytes:
    """Box plots of completion time (hours) per team, one box per policy."""
    fig, ax = plt.subplots(figsize=(7, 4))
    teams: list[str] = []
    for s in series.values():
        teams += [t for t in s["completionByTeam"] if t not in teams]
    n = max(1, len(series))
    width = 0.8 / n
    ax.set_title("Completion time per team (box: p25-p75, whiskers p5-p95)")
    if not teams:
        _nothing(ax, "no job completed under any policy")
        return _png(fig)
    for i, (name, s) in enumerate(series.items()):
        data = [[_hours(v) for v in s["completionByTeam"].get(t, [])] or [0.0] for t in teams]
        positions = [j + i * width for j in range(len(teams))]
        parts = ax.boxplot(
            data,
            positions=positions,
            widths=width * 0.9,
            whis=(5, 95),
            showfliers=False,
            patch_artist=True,
        )
        color = f"C{i}"
        for box in parts["boxes"]:
            box.set_facecolor(color)
            box.set_alpha(0.6)
        ax.plot([], [], color=color, lw=6, alpha=0.6, label=name)
    ax.set_xticks([j + width * (n - 1) / 2 for j in range(len(teams))], teams)
    ax.set_ylabel("completion time (hours)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    return _png(fig)


def all_plots(series: Mapping[str, Mapping[str, Any]], capacity: int) -> dict[str, bytes]:
    """Every plot as ``{file name: PNG bytes}`` (:data:`PLOT_FILES`)."""
    return {
        "wait-cdf.png": wait_cdf(series),
        "used-capacity.png": used_capacity(series, capacity),
        "lost-work.png": lost_work(series),
        "completion-by-team.png": completion_by_team(series),
    }


def overview(plots: Mapping[str, bytes], verdict_lines: Sequence[str]) -> bytes:
    """The four plots in a 2 x 2 grid under the verdict lines (one picture of the report)."""
    import matplotlib.image

    fig, axes = plt.subplots(2, 2, figsize=(14, 8.8))
    for ax, name in zip(axes.flat, PLOT_FILES, strict=True):
        ax.imshow(matplotlib.image.imread(io.BytesIO(plots[name]), format="png"))
        ax.axis("off")
    fig.suptitle("\n".join(verdict_lines), fontsize=9, family="monospace", x=0.01, ha="left")
    return _png(fig)


def calibration_plot(document: Mapping[str, Any]) -> bytes:
    """Calibration (:mod:`.calibration`): each job's start and end, replay against history
    (hours; on the diagonal when the replay matches), and the signed errors (seconds)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    rows = document["rows"]
    top = 0.0
    for key, label, marker in (("start", "first start", "o"), ("end", "end", "x")):
        xs, ys = [], []
        for row in rows:
            happened, replayed = row.get(f"{key}History"), row.get(f"{key}Replay")
            if happened is not None and replayed is not None:
                xs.append(_hours(happened))
                ys.append(_hours(replayed))
        if xs:
            left.scatter(xs, ys, marker=marker, label=label, alpha=0.7)
            top = max(top, *xs, *ys)
    for row in document["worst"]:  # name the jobs that differ, where they first do
        if row.get("startHistory") is not None and row.get("startReplay") is not None:
            at = (_hours(row["startHistory"]), _hours(row["startReplay"]))
            left.annotate(
                row["jobName"], at, textcoords="offset points", xytext=(5, -10), fontsize=8
            )
    left.plot([0, top or 1], [0, top or 1], color="grey", ls="--", lw=1, label="exact")
    left.set_xlabel("in the history (hours from the first submission)")
    left.set_ylabel("in the replay (hours)")
    left.set_title("Each job, replay against history")
    left.grid(True, alpha=0.3)
    left.legend()
    errors = {
        "start": [r["startErrorSeconds"] for r in rows if r["startErrorSeconds"] is not None],
        "end": [r["endErrorSeconds"] for r in rows if r["endErrorSeconds"] is not None],
    }
    if any(errors.values()):
        right.hist([errors["start"], errors["end"]], bins=30, label=["start", "end"])
        right.legend()
    else:
        _nothing(right, "no job to compare")
    exact = " (every job exact)" if document["exact"] else ""
    right.set_title(f"Error, replay minus history{exact}")
    right.set_xlabel("seconds")
    right.set_ylabel("jobs")
    right.grid(True, alpha=0.3)
    return _png(fig)


def sweep_plot(document: Mapping[str, Any]) -> bytes:
    """The sweep's trade-off: lenders' p95 wait (x, hours) against borrowers' p95
    completion (y, hours), one point per setting with its [min..max] over the seeds as
    error bars, the Pareto front drawn and its settings marked."""
    fig, ax = plt.subplots(figsize=(8, 5))
    rows = [
        r
        for r in document["settings"]
        if r["lenderWaitP95"] is not None and r["borrowerCompletionP95"] is not None
    ]
    if not rows:
        _nothing(ax, "no setting has both figures (no LEND or no LEND_AND_BORROW share?)")
    for r in rows:
        x, y = _hours(r["lenderWaitP95"]), _hours(r["borrowerCompletionP95"])
        rx, ry = r["range"]["lenderWaitP95"], r["range"]["borrowerCompletionP95"]
        ax.errorbar(
            [x],
            [y],
            xerr=[[x - _hours(rx[0])], [_hours(rx[1]) - x]] if rx else None,
            yerr=[[y - _hours(ry[0])], [_hours(ry[1]) - y]] if ry else None,
            fmt="o" if r["pareto"] else "s",
            color="C3" if r["pareto"] else "C0",
            ms=8 if r["pareto"] else 6,
            capsize=3,
            alpha=0.9,
        )
        label = ", ".join(f"{k.rsplit('.', 1)[-1]}={v:g}" for k, v in r["setting"].items())
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(6, 6), fontsize=8)
    front = sorted(
        (_hours(r["lenderWaitP95"]), _hours(r["borrowerCompletionP95"]))
        for r in rows
        if r["pareto"]
    )
    if front:
        ax.plot(*zip(*front, strict=True), color="C3", lw=1.5, label="Pareto front")
        ax.plot([], [], "s", color="C0", label="beaten on both by another setting")
        ax.legend()
    ax.set_xlabel(f"lenders' p95 wait (hours; {', '.join(document['lenders']) or 'none'})")
    ax.set_ylabel(
        f"borrowers' p95 completion (hours; {', '.join(document['borrowers']) or 'none'})"
    )
    axes = ", ".join(a["path"] for a in document["axes"])
    ax.set_title(f"Sweep of {axes} ({document['seeds']} seed(s); bars: min..max)")
    ax.grid(True, alpha=0.3)
    return _png(fig)
