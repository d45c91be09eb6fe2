"""Metrics of a simulated run, per share, per team and in total (spec "Output", ``metrics``).

Written once, used by ``quotagov simulate`` (:mod:`.simulation`) and ``quotagov whatif``
(:mod:`quotagov_tools.whatif`). Every block holds:

- ``usedInstanceSeconds``, ``borrowedInstanceSeconds``, ``lentInstanceSeconds``
  (lent attribution: see :mod:`.usage`), also per instance type in ``byInstanceType``;
- ``utilization``: used instance-seconds over the **environment's** capacity
  instance-seconds (every instance of the service environment, for the run's
  duration); a share's or a team's value is its part of the environment, so the
  shares' values add up to the total's;
- ``utilizationOfLimit``: instance-seconds used within the share's own limit over the
  instance-seconds of that limit (null when the limit integral is 0, and for teams,
  which have no limit);
- ``waitSeconds`` ``{p50, p95, max}``: every stretch a job spent RUNNABLE is one wait:
  the one after its submission and each one after a preemption (a job preempted at
  600 s and started again at 900 s waited 300 s). A wait still open when the run ends
  counts up to the end. Time in SCHEDULED/STARTING (startup) is not waiting: the job
  holds its instances then;
- ``completionSeconds`` ``{p50, p95}``: ``stoppedAt - submittedAt`` over SUCCEEDED jobs
  (``submittedAt`` of the job's original submission when a governance loop resubmitted
  it, see ``origins``);
- ``preemptions`` ``{CROSS_SHARE, IN_SHARE}``: preemptions suffered by the block's jobs;
- ``lostInstanceSeconds``: sum of ``lostSeconds x instanceCount``;
- ``goodput``: useful instance-seconds over used instance-seconds, where useful =
  ``(RUNNING seconds - lostSeconds - restart overhead seconds run) x instanceCount``
  (null when nothing was used);
- ``failedJobs``: jobs that ended FAILED (retries exhausted, terminated, DISABLED
  share) and were not carried on by a successor; ``refusedJobs``: jobs never submitted
  (refused by policy or too large for the environment; 0 for a plain scenario);
- ``jobs``: job counts by final status.

Percentiles use the nearest-rank method (this project's choice): the value at rank
``ceil(p/100 x n)`` of the sorted values; null when there are no values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from quotagov.scheduler.state import HOLDING_STATES, Transition
from quotagov.scheduler.usage import BORROWED, LENT, LIMIT, USED, WITHIN
from quotagov.scheduler.views import JobView


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile ``p`` (0-100] of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def _sorted_percentile(ordered: Sequence[float], p: float) -> float | None:
    if not ordered:
        return None
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


class JobClock:
    """A transition listener that times how long each job held instances, in seconds
    (SCHEDULED, STARTING or RUNNING; for a team's usage, :func:`usage_of_jobs`).

    Attach it with :meth:`Engine.add_listener` before the run. (Waits need no listener:
    the engine keeps every job's RUNNABLE stretches, ``JobView.waitSeconds``.)
    """

    __slots__ = ("_held_since", "held")

    def __init__(self) -> None:
        self._held_since: dict[str, float] = {}
        #: Seconds each job held instances (closed attempts).
        self.held: dict[str, float] = {}

    def __call__(self, t: Transition) -> None:
        """Record one transition (the engine calls this as it happens)."""
        name = t.jobName
        if t.from_ in HOLDING_STATES and t.to not in HOLDING_STATES:
            since = self._held_since.pop(name, None)
            if since is not None:
                self.held[name] = self.held.get(name, 0.0) + t.at - since
        if t.to == "SCHEDULED":
            self._held_since[name] = t.at

    def held_until(self, end: float) -> dict[str, float]:
        """Seconds each job held instances, open attempts counted up to ``end``."""
        out = dict(self.held)
        for name, since in self._held_since.items():
            out[name] = out.get(name, 0.0) + max(0.0, end - since)
        return out


@dataclass(frozen=True, slots=True)
class Usage:
    """Instance-seconds of a block: used, borrowed, lent, used within limit, limit.

    ``within`` and ``limit`` are None for blocks without a limit (teams).
    """

    used: float
    borrowed: float
    lent: float
    within: float | None
    limit: float | None
    byInstanceType: dict[str, dict[str, float]] = field(default_factory=dict)


def usage_of_shares(
    integrals: Mapping[tuple[str, str], list[float]], share_names: Iterable[str]
) -> Usage:
    """The usage of some shares from :meth:`Engine.usage_integrals` (instance-seconds)."""
    names = set(share_names)
    by_type: dict[str, dict[str, float]] = {}
    within = limit = 0.0
    for (share, u), acc in sorted(integrals.items()):
        if share not in names:
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
    return Usage(
        used=sum(t["usedInstanceSeconds"] for t in by_type.values()),
        borrowed=sum(t["borrowedInstanceSeconds"] for t in by_type.values()),
        lent=sum(t["lentInstanceSeconds"] for t in by_type.values()),
        within=within,
        limit=limit,
        byInstanceType=by_type,
    )


def usage_of_jobs(jobs: Sequence[JobView], held: Mapping[str, float]) -> Usage:
    """The usage of a set of jobs (a team) from their holding seconds x instances.

    Borrowed and lent are 0 and there is no limit: quota is a share's, not a team's.
    """
    by_type: dict[str, dict[str, float]] = {}
    for j in jobs:
        t = by_type.setdefault(
            j.instanceType,
            {
                "usedInstanceSeconds": 0.0,
                "borrowedInstanceSeconds": 0.0,
                "lentInstanceSeconds": 0.0,
            },
        )
        t["usedInstanceSeconds"] += held.get(j.jobName, 0.0) * j.instanceCount
    used = sum(t["usedInstanceSeconds"] for t in by_type.values())
    return Usage(used, 0.0, 0.0, None, None, by_type)


def capacity_instance_seconds(capacity: Mapping[str, int], duration: float) -> float:
    """Instance-seconds the environment offers: every instance for ``duration`` seconds."""
    return float(sum(capacity.values())) * max(0.0, duration)


class BlockTally:
    """The job-level part of one metrics block, added up one job at a time.

    :func:`metrics_block` and :func:`compute_metrics` feed it; a run's jobs can be fed
    as they are read, without a list of them. Sums are taken in the order jobs are
    added (the block's job order), so the figures are those of a single pass over the
    block's jobs in that order.

    Args:
        origins: per job name, the submission time its completion counts from (a
            successor's original submission); default the job's own.
        carried_on: FAILED jobs a successor took over (not counted in ``failedJobs``).
    """

    __slots__ = (
        "carried_on",
        "completions",
        "failed",
        "lost",
        "origins",
        "preemptions",
        "statuses",
        "useful",
        "waits",
    )

    def __init__(
        self,
        origins: Mapping[str, float] | None = None,
        carried_on: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        self.origins = origins or {}
        self.carried_on = carried_on
        self.waits: list[float] = []
        self.completions: list[float] = []
        self.preemptions = {"CROSS_SHARE": 0, "IN_SHARE": 0}
        self.lost = 0.0
        self.useful = 0.0
        self.failed = 0
        self.statuses: dict[str, int] = {}

    def add(self, j: JobView, waits: Iterable[float]) -> None:
        """Count one job (final view) with its RUNNABLE waits (seconds)."""
        self.waits.extend(waits)
        status = j.status
        if status == "SUCCEEDED" and j.stoppedAt is not None:
            self.completions.append(j.stoppedAt - self.origins.get(j.jobName, j.submittedAt))
        statuses = self.statuses
        statuses[status] = statuses.get(status, 0) + 1
        if status == "FAILED" and j.jobName not in self.carried_on:
            self.failed += 1
        if j.preemptions:
            for p in j.preemptions:
                self.preemptions[p.kind] += 1
        self.lost += j.lostSeconds * j.instanceCount
        self.useful += (j.runningSeconds - j.lostSeconds - j.overheadSeconds) * j.instanceCount

    def block(self, usage: Usage, capacity_seconds: float, refused: int = 0) -> dict[str, Any]:
        """The metrics block of the jobs added (see the module docstring for every key)."""
        wait_values = sorted(self.waits)
        completions = sorted(self.completions)
        used = usage.used
        return {
            "usedInstanceSeconds": used,
            "borrowedInstanceSeconds": usage.borrowed,
            "lentInstanceSeconds": usage.lent,
            "byInstanceType": usage.byInstanceType,
            "utilization": used / capacity_seconds if capacity_seconds > 0 else None,
            "utilizationOfLimit": (
                usage.within / usage.limit
                if usage.within is not None and usage.limit is not None and usage.limit > 0
                else None
            ),
            "waitSeconds": {
                "p50": _sorted_percentile(wait_values, 50),
                "p95": _sorted_percentile(wait_values, 95),
                "max": wait_values[-1] if wait_values else None,
            },
            "completionSeconds": {
                "p50": _sorted_percentile(completions, 50),
                "p95": _sorted_percentile(completions, 95),
            },
            "preemptions": dict(self.preemptions),
            "lostInstanceSeconds": self.lost,
            "goodput": self.useful / used if used > 0 else None,
            "failedJobs": self.failed,
            "refusedJobs": refused,
            "jobs": dict(self.statuses),
        }


def metrics_block(
    jobs: Sequence[JobView],
    usage: Usage,
    waits: Mapping[str, Sequence[float]] | None,
    capacity_seconds: float,
    *,
    origins: Mapping[str, float] | None = None,
    carried_on: frozenset[str] | set[str] = frozenset(),
    refused: int = 0,
) -> dict[str, Any]:
    """One metrics block (see the module docstring for every key).

    Args:
        jobs: the block's jobs, final views.
        usage: its instance-seconds (:func:`usage_of_shares` or :func:`usage_of_jobs`).
        waits: RUNNABLE waits per job name, seconds; None: each view's
            ``waitSeconds``.
        capacity_seconds: the environment's instance-seconds over the run
            (:func:`capacity_instance_seconds`).
        origins: per job name, the submission time its completion counts from
            (a successor's original submission); default the job's own.
        carried_on: FAILED jobs a successor took over (not counted in ``failedJobs``).
        refused: jobs of the block never submitted.
    """
    tally = BlockTally(origins, carried_on)
    for j in jobs:
        tally.add(j, j.waitSeconds if waits is None else waits.get(j.jobName, ()))
    return tally.block(usage, capacity_seconds, refused)


def compute_metrics(
    jobs: Iterable[JobView],
    integrals: Mapping[tuple[str, str], list[float]],
    share_names: Sequence[str],
    duration: float,
    *,
    capacity: Mapping[str, int],
    waits: Mapping[str, Sequence[float]] | None = None,
) -> dict[str, Any]:
    """The ``metrics`` block: ``{durationSeconds, shares: {name: block}, total: block}``.

    Args:
        jobs: every job's final view, in registration order (read once, so a
            generator will do: no list of views is needed).
        integrals: :meth:`Engine.usage_integrals` at the end of the run.
        share_names: the shares, in input order.
        duration: seconds simulated.
        capacity: the service environment (instances per type), for ``utilization``.
        waits: every job's RUNNABLE waits by name; None: each view's ``waitSeconds``.
    """
    per_share = {name: BlockTally() for name in share_names}
    total = BlockTally()
    for j in jobs:
        job_waits = j.waitSeconds if waits is None else waits.get(j.jobName, ())
        tally = per_share.get(j.quotaShareName)
        if tally is None:
            tally = per_share[j.quotaShareName] = BlockTally()
        tally.add(j, job_waits)
        total.add(j, job_waits)
    cap_seconds = capacity_instance_seconds(capacity, duration)
    return {
        "durationSeconds": duration,
        "shares": {
            name: per_share[name].block(usage_of_shares(integrals, [name]), cap_seconds)
            for name in share_names
        },
        "total": total.block(usage_of_shares(integrals, share_names), cap_seconds),
    }
