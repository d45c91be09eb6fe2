"""The BEST_EFFORT_FIFO scheduling pass, sweep by sweep as the spec states it.

Rule (``docs/simulator/spec.md``, the sweeps after "Order of a scheduling
pass"): at the start of the pass nothing is set aside. A sweep takes the current heads
(per share, the first RUNNABLE job in queue order not set aside); it tries step 2 for
every head (first as in 2: earliest submitted, then earlier in the input), then step 3
for every head, then 4, then 5; the first head that starts ends the sweep and a new one
begins, with nothing set aside by it. A sweep that starts nothing sets aside every
current head at once; the pass ends when a sweep starts nothing and no share has a
head left.

How it is computed, with the same outcome: between two starts the state does not
change, so whether a job can start (and by which step) is fixed. A share's heads in
successive failing sweeps are its jobs not set aside, in order; so if its first job
that can start is at rank ``r`` among them, it is the head in the ``r``-th sweep from
now. The next start therefore happens in sweep ``j = min r`` over the shares; the
heads of that sweep that can start are the shares' candidates of rank ``j``; the one
that starts is the first by step, then by submission time, then input order. The pass
then counts ``j`` failing sweeps at once (every share sets aside its next ``j`` jobs,
:meth:`~.sweep_queue.SweepQueue.catch_up`, applied lazily) and starts that job. When no
share has a job that can start, every remaining sweep fails and the pass ends.

A share's first job of a type that can start is found from the first job of each
(type, instance count) sub-queue: within one, jobs differ only in priority, and a
higher priority never makes a start harder (steps 2 to 4 do not look at it; step 5
has more lower-priority victims). It depends only on the state of the type, so it is
cached per (share, type) under the queue's version of the type and the ledger's stamp
of the type (a None, "no job of the type can start", under the type's ``released``
stamp, and beyond it while :func:`~.admission.may_start_any` says none can: see
:mod:`.quota`; a job under an older stamp with no release since, while it can still
start: :func:`_refresh`).

A change of the state of a type leaves the queues holding jobs of it *pending*, not
stale: before the next sweep, their cached first job of the type that can start is
brought up to date, and only a queue where it changed (or was set aside, so that the
result came from the jobs not set aside) has its result recomputed
(:func:`_still_holds`). A queue is not even left pending when its cache says none of
its jobs of the type can start and the change cannot undo that: another share's start,
or, when the share's own state alone decided it, any other share's change.
"""

from __future__ import annotations

from quotagov.scheduler.admission import may_start_any
from quotagov.scheduler.quota import QuotaLedger, ShareRuntime
from quotagov.scheduler.state import Job
from quotagov.scheduler.steps import (
    STEPS,
    Actuator,
    could_start,
    own_state_excludes,
    planned_step,
    start_bounds,
)
from quotagov.scheduler.sweep_queue import OWN_NONE, Entry, SweepQueue


def _first_startable(
    ledger: QuotaLedger, share: ShareRuntime, queue: SweepQueue, u: str, from_bound: bool
) -> tuple[Entry | None, int]:
    """The first (in queue order) job of type ``u`` that can start now, with its step.

    Quick necessary conditions (:func:`~.admission.may_start_any` for the type, then
    :func:`~.steps.could_start` for each sub-queue top, from the steps' rules, in
    instances) leave out the jobs that cannot start, before
    :func:`~.steps.planned_step` plans the others. None comes with step
    :data:`OWN_NONE` when the share's own state alone left every top out
    (:func:`~.steps.own_state_excludes`), else -1.
    """
    if not may_start_any(ledger, share, u):
        return None, -1
    bounds = start_bounds(ledger, share, u)
    if bounds is None:
        return None, -1
    best: Entry | None = None
    best_step = -1
    own = True  # so far, the share's own state alone rules every one out
    for entry in queue.sub_tops(u, from_bound):
        if best is not None and entry > best:
            continue
        job = entry[3]
        if not could_start(bounds, job.count, job.priority):
            own = own and own_state_excludes(bounds, job.count, job.priority)
            continue  # no step can start it
        own = False
        step = planned_step(ledger, share, job)
        if step is not None:
            best, best_step = entry, step
    if best is None and own:
        return None, OWN_NONE
    return best, best_step


def _refresh(
    ledger: QuotaLedger, share: ShareRuntime, queue: SweepQueue, u: str
) -> tuple[Job | None, int]:
    """The share's first job of type ``u`` that can start now, set-asides ignored, with
    its step (None and -1: none), from the queue's cache, which it brings up to date.

    The cache holds (stamp, the queue's version of the type, job or None, step). While
    the version is unchanged:

    - a job under the type's current ``stamp`` holds;
    - a job under an older stamp with no release since (only other shares' starts, which
      let no job of the type start that could not before, :meth:`QuotaLedger.acquire`):
      the jobs ahead of it still cannot start, so it is still the first if it still can
      start (its step planned again);
    - a None under the type's current ``released`` stamp holds, and beyond it while
      :func:`~.admission.may_start_any` says none can;
    - a None that the share's own state alone decided (step :data:`OWN_NONE`,
      :func:`~.steps.own_state_excludes` for every sub-queue top) holds while the
      share's :attr:`~.quota.ShareRuntime.changed_at` of the type is not after it.
    """
    version = queue.versions.get(u, 0)
    cached = queue.cache.get(u)
    if cached is not None and cached[1] == version:
        job = cached[2]
        if job is not None:
            if cached[0] == ledger.stamp.get(u, 0):
                return job, cached[3]
            if ledger.released.get(u, 0) <= cached[0]:
                step = planned_step(ledger, share, job)
                if step is not None:
                    queue.cache[u] = (ledger.stamp.get(u, 0), version, job, step)
                    return job, step
        elif cached[3] == OWN_NONE:
            if share.changed_at.get(u, 0) <= cached[0]:
                return None, -1
        else:
            released = ledger.released.get(u, 0)
            if cached[0] == released:
                return None, -1
            if not may_start_any(ledger, share, u):
                queue.cache[u] = (released, version, None, -1)
                return None, -1
    entry, step = _first_startable(ledger, share, queue, u, from_bound=False)
    if entry is None:
        if step == OWN_NONE:
            queue.cache[u] = (ledger.stamp.get(u, 0), version, None, OWN_NONE)
        else:
            queue.cache[u] = (ledger.released.get(u, 0), version, None, -1)
        return None, -1
    queue.cache[u] = (ledger.stamp.get(u, 0), version, entry[3], step)
    return entry[3], step


def _candidate(
    ledger: QuotaLedger, share: ShareRuntime, queue: SweepQueue, u: str
) -> tuple[Entry | None, int]:
    """The share's first job of type ``u`` that can start now and is not set aside."""
    job, step = _refresh(ledger, share, queue, u)
    if job is None:
        return None, -1
    entry = queue.entry(job)
    if queue.is_set_aside(entry):
        # set aside before the state changed: look again among the jobs not set aside
        return _first_startable(ledger, share, queue, u, from_bound=True)
    return entry, step


def _still_holds(ledger: QuotaLedger, queue: SweepQueue, sweeps: int) -> bool:
    """Whether the queue's result (or its absence) still holds after changes of the
    state of its jobs' types, its contents unchanged: its first job of each type that
    can start (:func:`_refresh`) is the one it was, with the same step, and not set
    aside (else its result came from the jobs not set aside, which the change may
    have changed). Brings the cache up to date."""
    share = ledger.share_list[queue.share_index]
    cache = queue.cache
    versions = queue.versions
    stamps = ledger.stamp
    released = ledger.released
    held = True
    for u in queue.type_counts:
        before = cache.get(u)
        if (
            before is not None
            and before[1] == versions.get(u, 0)
            and before[0] == (stamps if before[2] is not None else released).get(u, 0)
        ):
            continue  # up to date: the state of the type did not change since cached
        job, step = _refresh(ledger, share, queue, u)
        if before is None or before[2] is not job or (job is not None and before[3] != step):
            held = False
        elif job is not None:
            if queue.k_at != sweeps:
                queue.catch_up(sweeps)
            if queue.is_set_aside(queue.entry(job)):
                held = False
    return held


def _share_result(
    ledger: QuotaLedger, queue: SweepQueue, sweeps: int
) -> tuple[tuple[int, int, float, int, Job] | None, bool]:
    """The share's first job that can start, not set aside after ``sweeps`` failing
    sweeps, as (the sweep in which it is the head, step, submittedAt, input order, job),
    or None; and whether that answer is the one the first sweep of a pass would give
    (no job was pushed back ahead of the set-aside ones, and no type's first job that
    can start is set aside: then the sweep count plus the rank is the job's plain rank
    in the queue).
    """
    if queue.k_at != sweeps:
        queue.catch_up(sweeps)
    share = ledger.share_list[queue.share_index]
    # within the queue, the candidate first in queue order is the first to head (the
    # rank grows with the queue order among jobs not set aside)
    first: Entry | None = None
    first_step = -1
    plain = not queue.has_holes()
    cache = queue.cache
    for u in queue.type_counts:
        entry, step = _candidate(ledger, share, queue, u)
        if plain:
            cached = cache.get(u)
            plain = cached is not None and cached[2] is (None if entry is None else entry[3])
        if entry is not None and (first is None or entry < first):
            first, first_step = entry, step
    if first is None:
        return None, plain
    return (sweeps + queue.rank(first), first_step, first[1], first[2], first[3]), plain


def best_effort_pass(ledger: QuotaLedger, act: Actuator) -> None:
    """Run the BEST_EFFORT_FIFO pass at the current time (see the module docstring).

    The shares' results (when their first job that can start becomes the head) are
    kept across passes in :class:`~.sweep_queue.SweepCounter` and recomputed only for
    the stale queues. Set-aside jobs are back in place when it returns (also on an
    error).
    """
    counter = ledger.sweeps
    results = counter.results
    stale = counter.stale
    pending = counter.pending
    if not stale and not results and not pending:
        return  # no queue changed since the last pass, which left none with a start
    sweeps = 0
    counter.sweeps = 0
    counter.in_pass = True
    recomputed: list[SweepQueue] = []
    try:
        while True:
            if pending:
                for queue in pending:
                    if queue not in stale and not _still_holds(ledger, queue, sweeps):
                        stale[queue] = None
                pending.clear()
            if stale:
                queues = list(stale)
                stale.clear()
                for queue in queues:
                    found, plain = _share_result(ledger, queue, sweeps)
                    if found is None:
                        results.pop(queue, None)
                    else:
                        results[queue] = found
                    if sweeps and not plain:
                        recomputed.append(queue)
            if not results:
                return
            queue = min(results, key=results.__getitem__)
            at, step, _, _, job = results[queue]
            sweeps = at
            counter.sweeps = sweeps
            queue.catch_up(sweeps)
            share = ledger.share_list[queue.share_index]
            stale[queue] = None  # its result is used up
            if not STEPS[step](ledger, act, share, job):
                raise RuntimeError(f"{job.name} was planned to start but did not")
    finally:
        counter.in_pass = False
        for queue in counter.touched:
            queue.end_pass()
        counter.touched.clear()
        for queue in recomputed:
            stale[queue] = None  # computed with jobs set aside: not a first sweep's result
