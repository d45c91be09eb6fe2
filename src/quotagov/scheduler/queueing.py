"""A quota share's RUNNABLE jobs in queue order (scheduling pass, step 1).

Order (``../shared/spec/scenario-format.md``, "Order of a scheduling pass"):
``schedulingPriority`` high first, then submission time, then input order. A preempted
job goes back with the same key, so it keeps its original place.

Jobs are kept in one binary heap per (instance type, instance count), so that
finding the head, starting it and setting it aside cost O(log n) plus the number of
such sub-queues, whatever the queue length. Entries are invalidated lazily (a job's
``queue_token`` changes when it leaves the queue or its priority changes).

BEST_EFFORT_FIFO set-aside: a head that cannot start is set aside until the next event
time (:meth:`RunnableQueue.set_aside`). This project's documented choice for the jobs
behind it: while the state of its instance type is unchanged (same ledger ``stamp``),
the jobs of the same type needing at least as many instances are passed over without
being tried, since they cannot start in that state either (no higher priority, the
same or a larger need); as soon as a job of that type starts or stops they are
considered again, in order.

Speed, with no change to the outcome: the sequence of heads set aside in turn while
nothing changes (:func:`~.frontier.frontier`) is computed once and kept until a job
enters or leaves the queue. Set-asides then only move a cursor along it (*cursor
mode*, no heap operation, and :meth:`RunnableQueue.restore` just resets the cursor).
The queue falls back to popping set-aside jobs off the heaps (*materialized mode*) as
soon as that sequence no longer applies within a pass: a job enters or leaves, or the
stamp of a type with set-aside jobs changes. Setting :attr:`RunnableQueue.use_cursor`
to False (tests) always uses materialized mode.

Jobs whose share has no capacity limit for their instance type can never start; this
project's documented choice is that they never become the head (they do not block a
STRICT_FIFO share) and stay RUNNABLE, as AWS holds such jobs RUNNABLE.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from quotagov.scheduler.frontier import Entry, frontier
from quotagov.scheduler.state import Job


def queue_key(job: Job) -> tuple[int, float, int]:
    """The job's place in its share's queue: priority high first, then submission, input."""
    return (-job.priority, job.submitted_at, job.order)


class RunnableQueue:
    """RUNNABLE jobs of one share, by queue order, with BEST_EFFORT_FIFO set-aside."""

    __slots__ = (
        "_blocked",
        "_cursor",
        "_cursor_stamps",
        "_frontier",
        "_head",
        "_set_aside",
        "_sub",
        "configured_types",
        "size",
    )

    #: Whether set-asides may use cursor mode (False: always materialized; for tests).
    use_cursor = True

    def __init__(self) -> None:
        self._sub: dict[tuple[str, int], list[Entry]] = {}
        self._set_aside: list[Job] = []
        self._blocked: dict[str, tuple[int, int]] = {}
        self._head: Job | None = None
        #: Cursor mode: the cached frontier (None: to compute), how many of its jobs are
        #: set aside, and the stamp of each of their types when they were.
        self._frontier: list[Job] | None = None
        self._cursor = 0
        self._cursor_stamps: dict[str, int] = {}
        self.size = 0
        self.configured_types: frozenset[str] = frozenset()

    def set_configured_types(self, types: frozenset[str]) -> None:
        """The instance types the share has capacity limits for (others never head)."""
        self._changing()
        self.configured_types = types

    def push(self, job: Job) -> None:
        """Add a job that became RUNNABLE (submitted or preempted)."""
        self.size += 1
        self._enqueue(job)

    def passes_over(self, job: Job) -> bool:
        """Whether a job about to be pushed would never be a head while the queue's jobs
        are set aside in turn (outside a pass): its type has no capacity limit, or an
        earlier job of its type in the frontier needs no more instances.

        Pushing such a job leaves the frontier as it is (:meth:`push_passed_over`).
        """
        if self._cursor or self._blocked or not self.use_cursor:
            return False
        u = job.instance_type
        if u not in self.configured_types:
            return True
        jobs = self._frontier
        if jobs is None:
            jobs = self._frontier = self._compute_frontier()
        key = queue_key(job)
        for other in jobs:
            if queue_key(other) > key:
                return False
            if other.instance_type == u and other.count <= job.count:
                return True
        return False

    def push_passed_over(self, job: Job) -> None:
        """:meth:`push` a job for which :meth:`passes_over` holds, keeping the frontier."""
        frontier = self._frontier
        self.push(job)
        self._frontier = frontier

    def type_extremes(self, instance_type: str) -> tuple[int, int] | None:
        """``(smallest instanceCount, highest schedulingPriority)`` over the queued jobs of
        the type (not counting set-aside ones), or None when there are none."""
        count: int | None = None
        priority = -1
        for key, heap in self._sub.items():
            if key[0] != instance_type:
                continue
            top = self._top(heap)
            if top is None:
                continue
            if count is None or key[1] < count:
                count = key[1]
            if -top[0] > priority:
                priority = -top[0]
        return None if count is None else (count, priority)

    def reprioritize(self, job: Job) -> None:
        """Re-key a RUNNABLE job after a ``schedulingPriority`` change."""
        self._enqueue(job)

    def discard(self, job: Job) -> None:
        """Remove a RUNNABLE job that leaves the queue without starting (terminated)."""
        self._changing()
        job.queue_token += 1
        self.size -= 1

    def _changing(self) -> None:
        """The queue's contents are about to change: the cached frontier no longer holds."""
        if self._cursor:
            self._materialize()
        self._frontier = None
        self._head = None

    def _materialize(self) -> None:
        """Leave cursor mode: pop the set-aside jobs off their heaps, as set_aside would."""
        jobs = self._frontier[: self._cursor] if self._frontier is not None else []
        stamps = self._cursor_stamps
        self._cursor = 0
        self._cursor_stamps = {}
        self._frontier = None
        for job in jobs:
            self._set_aside_popping(job, stamps)

    def _enqueue(self, job: Job) -> None:
        self._changing()
        job.queue_token += 1
        key = (job.instance_type, job.count)
        heap = self._sub.get(key)
        if heap is None:
            heap = self._sub[key] = []
        heapq.heappush(heap, (-job.priority, job.submitted_at, job.order, job.queue_token, job))
        self._head = None

    def _top(self, heap: list[Entry]) -> Entry | None:
        while heap:
            entry = heap[0]
            job = entry[4]
            if entry[3] == job.queue_token and job.status == "RUNNABLE":
                return entry
            heapq.heappop(heap)
        return None

    def head(self, stamps: Mapping[str, int]) -> Job | None:
        """The first RUNNABLE job in order that is not set aside nor passed over, or None.

        Args:
            stamps: the ledger's per-type stamps (see the module docstring).
        """
        if self.use_cursor and not self._blocked:
            cursor = self._cursor
            if cursor:
                for u, stamp in self._cursor_stamps.items():
                    if stamps.get(u, 0) != stamp:
                        self._materialize()
                        return self._scan(stamps)
            jobs = self._frontier
            if jobs is None:
                jobs = self._frontier = self._compute_frontier()
            return jobs[cursor] if cursor < len(jobs) else None
        return self._scan(stamps)

    def _compute_frontier(self) -> list[Job]:
        """:func:`~.frontier.frontier` of the current contents (drops empty sub-queues)."""
        tops: list[Entry] = []
        configured = self.configured_types
        empty: list[tuple[str, int]] = []
        for key, heap in self._sub.items():
            if key[0] not in configured:
                if not heap:
                    empty.append(key)
                continue
            top = self._top(heap)
            if top is None:
                empty.append(key)
            else:
                tops.append(top)
        for key in empty:
            del self._sub[key]
        return frontier(tops)

    def _scan(self, stamps: Mapping[str, int]) -> Job | None:
        """:meth:`head` in materialized mode: the best sub-queue top not passed over."""
        head = self._head
        if head is not None and not self._blocked:
            return head
        best: Entry | None = None
        configured = self.configured_types
        blocked = self._blocked
        empty: list[tuple[str, int]] = []
        for key, heap in self._sub.items():
            if not heap:
                empty.append(key)
                continue
            u = key[0]
            if u not in configured:
                continue
            if blocked:
                b = blocked.get(u)
                if b is not None and key[1] >= b[0] and b[1] == stamps.get(u, 0):
                    continue
            top = heap[0]
            job = top[4]
            if top[3] != job.queue_token or job.status != "RUNNABLE":
                found = self._top(heap)
                if found is None:
                    empty.append(key)
                    continue
                top = found
            if best is None or top < best:
                best = top
        for key in empty:
            del self._sub[key]
        self._head = best[4] if best is not None else None
        return self._head

    def pop(self, job: Job) -> None:
        """Remove the head ``job`` because it starts."""
        self._changing()
        heap = self._sub[(job.instance_type, job.count)]
        top = self._top(heap)
        if top is None or top[4] is not job:
            raise RuntimeError(f"{job.name} is not at the top of its queue")
        heapq.heappop(heap)
        job.queue_token += 1
        self.size -= 1
        self._head = None

    def set_aside(self, job: Job, stamps: Mapping[str, int]) -> None:
        """BEST_EFFORT_FIFO: set the head ``job`` aside until :meth:`restore`.

        Args:
            job: the current :meth:`head`, computed with the same ``stamps``.
            stamps: per-type stamps (the pass-over rule compares them later).
        """
        u = job.instance_type
        stamp = stamps.get(u, 0)
        if self.use_cursor and not self._blocked:
            jobs = self._frontier
            cursor = self._cursor
            if jobs is None or cursor >= len(jobs) or jobs[cursor] is not job:
                raise RuntimeError(f"{job.name} is not the head of its queue")
            known = self._cursor_stamps.get(u)
            if known is None or known == stamp:
                self._cursor_stamps[u] = stamp
                self._cursor = cursor + 1
                return
            self._materialize()
        self._set_aside_popping(job, stamps)

    def _set_aside_popping(self, job: Job, stamps: Mapping[str, int]) -> None:
        """:meth:`set_aside` in materialized mode: pop ``job`` off its heap."""
        heap = self._sub[(job.instance_type, job.count)]
        top = self._top(heap)
        if top is None or top[4] is not job:
            raise RuntimeError(f"{job.name} is not at the top of its queue")
        heapq.heappop(heap)
        self._set_aside.append(job)
        u = job.instance_type
        stamp = stamps.get(u, 0)
        prev = self._blocked.get(u)
        if prev is None or prev[1] != stamp or job.count < prev[0]:
            self._blocked[u] = (job.count, stamp)
        self._head = None

    def set_aside_jobs(self) -> list[Job]:
        """The jobs set aside in the current pass, in the order they were."""
        if self._cursor and self._frontier is not None:
            return self._frontier[: self._cursor]
        return list(self._set_aside)

    def restore(self) -> None:
        """Put set-aside jobs back in place (at the next event time)."""
        if self._cursor:
            self._cursor = 0
            self._cursor_stamps = {}
        if not self._set_aside and not self._blocked:
            return
        self._frontier = None
        for job in self._set_aside:
            if job.status == "RUNNABLE":
                heapq.heappush(
                    self._sub.setdefault((job.instance_type, job.count), []),
                    (-job.priority, job.submitted_at, job.order, job.queue_token, job),
                )
        self._set_aside.clear()
        self._blocked.clear()
        self._head = None

    def ordered(self) -> list[Job]:
        """Every RUNNABLE job of the share in queue order (O(n log n); for reading)."""
        jobs: dict[Job, None] = {}
        for heap in self._sub.values():
            for entry in heap:
                job = entry[4]
                if entry[3] == job.queue_token and job.status == "RUNNABLE":
                    jobs[job] = None
        for job in self._set_aside:
            if job.status == "RUNNABLE":
                jobs[job] = None
        return sorted(jobs, key=queue_key)
