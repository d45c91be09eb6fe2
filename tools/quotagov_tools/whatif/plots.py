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
        points = s["usedOverTime"]
        ax.plot([_hours(p[0]) for p in points], [p[1] for p in points], label=name, lw=1.2)
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
