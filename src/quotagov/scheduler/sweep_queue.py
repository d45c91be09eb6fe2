"""A BEST_EFFORT_FIFO share's RUNNABLE jobs, with the set-asides of the pass in progress.

Order (``docs/simulator/spec.md``, "Order of a scheduling pass", step 1):
``schedulingPriority`` high first, then submission time, then input order; a preempted
job goes back with the same key, so it keeps its original place.

Set-aside (the spec's sweeps): every sweep that starts nothing sets aside the current
head of every share at once. So during a pass, after ``K`` failing sweeps, a share has
set aside its first ``K`` jobs in order (fewer when it ran out), except that a job
pushed back in mid-pass (a preemption victim) ahead of the set-aside ones is not set
aside: it is a *hole*, the share's head until a later failing sweep sets it aside.

The queue keeps that without touching the set-aside jobs: a *bound* (a queue key;
the set-aside jobs are the queued jobs before it, holes excepted), the holes, and the
sweep count ``k_at`` up to which the bound is brought (:meth:`SweepQueue.catch_up`).
:meth:`SweepQueue.end_pass` forgets it all in O(1) (set-aside jobs come back at the
next event time).

Jobs of an instance type the share has no capacity limit for, and jobs marked
unschedulable, are kept apart (:attr:`SweepQueue.off`): they never become the head, as
in :mod:`.queueing` (this project's documented choice; AWS holds such jobs RUNNABLE).

Sorted containers: ``sortedcontainers.SortedList`` gives O(log n) insertion, removal,
rank (``bisect_left``) and access by rank.
"""

from __future__ import annotations

from sortedcontainers import SortedList

from quotagov.scheduler.state import Job

#: A queue entry: (-schedulingPriority, submittedAt, input order, job). The input order
#: is unique, so comparisons never reach the job.
Entry = tuple[int, float, int, Job]

_INF = float("inf")
#: A bound after every entry: the share ran out of heads in this pass.
EXHAUSTED: Entry = (2**62, _INF, 2**62, None)  # type: ignore[assignment]


#: The step of a cached "no job of the type can start" that only a change of the share's
#: own use, holdings or configuration can undo (:mod:`.sweeps`).
OWN_NONE = -2


def entry_of(job: Job) -> Entry:
    """The job's queue entry (its place in the share's queue)."""
    return (-job.priority, job.submitted_at, job.order, job)


class SweepCounter:
    """What the BEST_EFFORT_FIFO passes share across the ledger's queues (:mod:`.sweeps`
    keeps it): whether a pass is running, how many failing sweeps it has had, which
    queues' results must be recomputed (*stale*: a job entered or left), which may have
    to be (*pending*: the state of one of their jobs' types changed; recomputed only
    when their first job of such a type that can start changed), and the results of
    the others."""

    __slots__ = ("in_pass", "pending", "results", "stale", "sweeps", "touched")

    def __init__(self) -> None:
        self.in_pass = False
        self.sweeps = 0
        self.stale: dict[SweepQueue, None] = {}
        self.pending: dict[SweepQueue, None] = {}
        #: Queues with set-asides in the pass in progress (to put back at its end).
        self.touched: list[SweepQueue] = []
        #: Per queue with a job that can start: (sweep at which it becomes the head,
        #: step, submittedAt, input order, job) (:func:`~.sweeps.best_effort_pass`).
        self.results: dict[SweepQueue, tuple[int, int, float, int, Job]] = {}


class SweepQueue:
    """RUNNABLE jobs of one BEST_EFFORT_FIFO share in queue order, with set-asides.

    Args:
        counter: the pass in progress (shared by the ledger's queues).

    Attributes:
        size: every RUNNABLE job of the share (those kept apart included).
        configured_types: the instance types the share has capacity limits for.
        versions: per instance type, a counter that changes whenever a job of the type
            enters or leaves the queue (the pass's cache key, :mod:`.sweeps`).
        cache: per instance type, the pass's cached first startable job
            (:mod:`.sweeps` owns its contents).
    """

    __slots__ = (
        "_all",
        "_bound",
        "_entries",
        "_holes",
        "_sub",
        "_tops",
        "cache",
        "configured_types",
        "counter",
        "k_at",
        "off",
        "share_index",
        "size",
        "type_counts",
        "versions",
    )

    def __init__(self, counter: SweepCounter, share_index: int = 0) -> None:
        self.counter = counter
        #: The share's position in the input (a stable order among queues).
        self.share_index = share_index
        #: Jobs that may head, per instance type.
        self.type_counts: dict[str, int] = {}
        self._all: SortedList[Entry] = SortedList()
        #: Per instance type, per instance count: the entries of those jobs in order.
        self._sub: dict[str, dict[int, SortedList[Entry]]] = {}
        self._entries: dict[Job, Entry] = {}
        #: Per instance type: (its version, the first entry of each sub-queue), the
        #: tops read again only when a job of the type enters or leaves.
        self._tops: dict[str, tuple[int, list[Entry]]] = {}
        #: Jobs that never head (no capacity limit for their type, or unschedulable).
        self.off: dict[Job, None] = {}
        self._bound: Entry | None = None
        self._holes: list[Entry] = []
        self.k_at = 0
        self.size = 0
        self.configured_types: frozenset[str] = frozenset()
        self.versions: dict[str, int] = {}
        self.cache: dict[str, tuple[int, int, Job | None, int]] = {}

    # -- contents ----------------------------------------------------------------------

    def set_configured_types(self, types: frozenset[str]) -> None:
        """The instance types the share has capacity limits for (others never head).

        Called outside a pass only.
        """
        self.configured_types = types
        jobs = list(self._entries) + list(self.off)
        self._all = SortedList()
        self._sub = {}
        self._tops = {}
        self._entries = {}
        self.off = {}
        self.type_counts = {}
        self.size = 0
        self.cache.clear()
        self.counter.stale[self] = None
        for job in jobs:
            self.push(job)

    def push(self, job: Job) -> None:
        """Add a job that became RUNNABLE (submitted, or preempted in a pass).

        A preemption victim pushed back during a pass ahead of the set-aside jobs is a
        hole: not set aside.
        """
        self.size += 1
        u = job.instance_type
        if u not in self.configured_types or job.unschedulable is not None:
            self.off[job] = None
            return
        entry = entry_of(job)
        if self.counter.in_pass:
            self.catch_up(self.counter.sweeps)
            bound = self._bound
            if bound is not None and entry < bound:
                holes = self._holes
                holes.append(entry)
                holes.sort()
        self._entries[job] = entry
        self._all.add(entry)
        by_count = self._sub.get(u)
        if by_count is None:
            by_count = self._sub[u] = {}
        sub = by_count.get(job.count)
        if sub is None:
            sub = by_count[job.count] = SortedList()
        sub.add(entry)
        self.versions[u] = self.versions.get(u, 0) + 1
        self.type_counts[u] = self.type_counts.get(u, 0) + 1
        self.counter.stale[self] = None

    def remove(self, job: Job) -> None:
        """Remove a RUNNABLE job: it starts, is terminated or is re-keyed."""
        self.size -= 1
        if job in self.off:
            del self.off[job]
            return
        entry = self._entries.pop(job)
        self._all.remove(entry)
        by_count = self._sub[job.instance_type]
        sub = by_count[job.count]
        sub.remove(entry)
        if not sub:
            del by_count[job.count]
            if not by_count:
                del self._sub[job.instance_type]
        if self._holes and entry in self._holes:
            self._holes.remove(entry)
        u = job.instance_type
        self.versions[u] = self.versions.get(u, 0) + 1
        left = self.type_counts[u] - 1
        if left:
            self.type_counts[u] = left
        else:
            del self.type_counts[u]
        self.counter.stale[self] = None

    def pop(self, job: Job) -> None:
        """Remove the head ``job`` because it starts."""
        self.remove(job)

    def discard(self, job: Job) -> None:
        """Remove a RUNNABLE job that leaves the queue without starting (terminated)."""
        self.remove(job)

    # -- reading -----------------------------------------------------------------------

    def sub_tops(self, instance_type: str, from_bound: bool) -> list[Entry]:
        """The first entry of each (type, count) sub-queue of ``instance_type`` (the
        list is shared: callers must not change it).

        Args:
            from_bound: only entries not set aside (at or after the bound, plus holes).
        """
        by_count = self._sub.get(instance_type)
        if not by_count:
            return []
        bound = self._bound if from_bound else None
        if bound is None:
            version = self.versions.get(instance_type, 0)
            cached = self._tops.get(instance_type)
            if cached is not None and cached[0] == version:
                return cached[1]
            tops = [sub[0] for sub in by_count.values()]
            self._tops[instance_type] = (version, tops)
            return tops
        out: list[Entry] = []
        for sub in by_count.values():
            i = sub.bisect_left(bound)
            if i < len(sub):
                out.append(sub[i])
        out.extend(e for e in self._holes if e[3].instance_type == instance_type)
        return out

    def has_holes(self) -> bool:
        """Whether a job was pushed back, in the pass in progress, ahead of the jobs it
        has set aside."""
        return bool(self._holes)

    def is_set_aside(self, entry: Entry) -> bool:
        """Whether the queued ``entry`` is set aside (in the sweep count caught up to)."""
        bound = self._bound
        return bound is not None and entry < bound and entry not in self._holes

    def rank(self, entry: Entry) -> int:
        """How many jobs not set aside come before the queued, not set aside ``entry``:
        the number of failing sweeps after which it becomes the head."""
        holes = self._holes
        if entry in holes:
            return holes.index(entry)
        bound = self._bound
        start = 0 if bound is None else self._all.bisect_left(bound)
        return len(holes) + self._all.bisect_left(entry) - start

    def entry(self, job: Job) -> Entry:
        """The queue entry of a queued job that may head."""
        return self._entries[job]

    def ordered(self) -> list[Job]:
        """Every RUNNABLE job of the share in queue order (set-asides included)."""
        entries = list(self._all) + [entry_of(j) for j in self.off]
        return [e[3] for e in sorted(entries)]

    # -- the pass's set-asides -----------------------------------------------------------

    def catch_up(self, sweeps: int) -> None:
        """Apply the failing sweeps since :attr:`k_at`: each sets aside the head."""
        m = sweeps - self.k_at
        if m <= 0:
            return
        if not self.k_at:
            self.counter.touched.append(self)
        self.k_at = sweeps
        holes = self._holes
        if holes:
            taken = min(m, len(holes))
            del holes[:taken]
            m -= taken
            if not m:
                return
        bound = self._bound
        start = 0 if bound is None else self._all.bisect_left(bound)
        i = start + m
        self._bound = self._all[i] if i < len(self._all) else EXHAUSTED

    def end_pass(self) -> None:
        """The pass ends: every set-aside job is back in place."""
        self._bound = None
        self._holes = []
        self.k_at = 0
