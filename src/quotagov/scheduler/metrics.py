"""Metrics of a simulated run, per share and in total (spec "Output", ``metrics``).

Every share block and the ``total`` block hold:

- ``usedInstanceSeconds``, ``borrowedInstanceSeconds``, ``lentInstanceSeconds``
  (lent attribution: see :mod:`.usage`), also per instance type in ``byInstanceType``;
- ``utilizationOfLimit``: instance-seconds used within the share's own limit over the
  instance-seconds of that limit (null when the limit integral is 0);
- ``waitSeconds`` ``{p50, p95, max}``: ``firstStartedAt - submittedAt`` over the jobs
  that started;
- ``completionSeconds`` ``{p50, p95}``: ``stoppedAt - submittedAt`` over SUCCEEDED jobs;
- ``preemptions`` ``{CROSS_SHARE, IN_SHARE}``: preemptions suffered by the share's jobs;
- ``lostInstanceSeconds``: sum of ``lostSeconds x instanceCount``;
- ``goodput``: useful instance-seconds over used instance-seconds, where useful =
  ``(RUNNING seconds - lostSeconds - restart overhead seconds run) x instanceCount``
  (null when nothing was used);
- ``jobs``: job counts by final status.

Percentiles use the nearest-rank method (this project's choice): the value at rank
``ceil(p/100 x n)`` of the sorted values; null when there are no values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from quotagov.scheduler.engine import JobView
from quotagov.scheduler.usage import BORROWED, LENT, LIMIT, USED, WITHIN


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile ``p`` (0-100] of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def _block(
    jobs: Sequence[JobView],
    integrals: Mapping[tuple[str, str], list[float]],
    share_names: set[str],
) -> dict[str, Any]:
    by_type: dict[str, dict[str, float]] = {}
    within = limit = 0.0
    for (share, u), acc in sorted(integrals.items()):
        if share not in share_names:
            continue
        t = by_type.setdefault(
            u,
            {
                "usedInstanceSeconds": 0.0,
                "borrowedInstanceSeconds": 0.0,
                "lentInstanceSeconds": 0.0,
            },
        )
        t["usedInstanceSeconds"] += acc[USED]
        t["borrowedInstanceSeconds"] += acc[BORROWED]
        t["lentInstanceSeconds"] += acc[LENT]
        within += acc[WITHIN]
        limit += acc[LIMIT]
    used = sum(t["usedInstanceSeconds"] for t in by_type.values())
    waits = [j.firstStartedAt - j.submittedAt for j in jobs if j.firstStartedAt is not None]
    completions = [
        j.stoppedAt - j.submittedAt
        for j in jobs
        if j.status == "SUCCEEDED" and j.stoppedAt is not None
    ]
    preemptions = {"CROSS_SHARE": 0, "IN_SHARE": 0}
    lost = 0.0
    useful = 0.0
    statuses: dict[str, int] = {}
    for j in jobs:
        statuses[j.status] = statuses.get(j.status, 0) + 1
        for p in j.preemptions:
            preemptions[p.kind] += 1
        lost += j.lostSeconds * j.instanceCount
        useful += (j.runningSeconds - j.lostSeconds - j.overheadSeconds) * j.instanceCount
    return {
        "usedInstanceSeconds": used,
        "borrowedInstanceSeconds": sum(t["borrowedInstanceSeconds"] for t in by_type.values()),
        "lentInstanceSeconds": sum(t["lentInstanceSeconds"] for t in by_type.values()),
        "byInstanceType": by_type,
        "utilizationOfLimit": within / limit if limit > 0 else None,
        "waitSeconds": {
            "p50": percentile(waits, 50),
            "p95": percentile(waits, 95),
            "max": max(waits) if waits else None,
        },
        "completionSeconds": {
            "p50": percentile(completions, 50),
            "p95": percentile(completions, 95),
        },
        "preemptions": preemptions,
        "lostInstanceSeconds": lost,
        "goodput": useful / used if used > 0 else None,
        "jobs": statuses,
    }


def compute_metrics(
    jobs: Sequence[JobView],
    integrals: Mapping[tuple[str, str], list[float]],
    share_names: Sequence[str],
    duration: float,
) -> dict[str, Any]:
    """The ``metrics`` block: ``{durationSeconds, shares: {name: block}, total: block}``.

    Args:
        jobs: every job's final view.
        integrals: :meth:`Engine.usage_integrals` at the end of the run.
        share_names: the shares, in input order.
        duration: seconds simulated.
    """
    per_share: dict[str, list[JobView]] = {name: [] for name in share_names}
    for j in jobs:
        per_share.setdefault(j.quotaShareName, []).append(j)
    return {
        "durationSeconds": duration,
        "shares": {name: _block(per_share[name], integrals, {name}) for name in share_names},
        "total": _block(list(jobs), integrals, set(share_names)),
    }
