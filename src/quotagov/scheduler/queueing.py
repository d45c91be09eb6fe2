"""A STRICT_FIFO quota share's RUNNABLE jobs in queue order (scheduling pass, step 1).

Order (``docs/simulator/spec.md``, "Order of a scheduling pass"):
``schedulingPriority`` high first, then submission time, then input order. A preempted
job goes back with the same key, so it keeps its original place. (BEST_EFFORT_FIFO
shares keep theirs in :class:`~.sweep_queue.SweepQueue`, with the pass's set-asides.)

Jobs are kept in one binary heap per instance type, so that finding the head and
starting it cost O(log n) plus the number of types. Entries are invalidated lazily
(a job's ``queue_token`` changes when it leaves the queue or its priority changes).

Jobs whose share has no capacity limit for their instance type can never start; this
project's documented choice is that they never become the head (they do not block a
STRICT_FIFO share) and stay RUNNABLE, as AWS holds such jobs RUNNABLE. So are jobs
marked unschedulable (:meth:`~.engine.Engine.mark_unschedulable`).
"""

from __future__ import annotations

import heapq

from quotagov.scheduler.state import Job

#: Heap entry: (-schedulingPriority, submittedAt, input order, queue token, job).
Entry = tuple[int, float, int, int, Job]


def queue_key(job: Job) -> tuple[int, float, int]:
    """The job's place in its share's queue: priority high first, then submission, input."""
    return (-job.priority, job.submitted_at, job.order)


class RunnableQueue:
    """RUNNABLE jobs of one STRICT_FIFO share, by queue order."""

    __slots__ = ("_head", "_sub", "configured_types", "size")

    def __init__(self) -> None:
        self._sub: dict[str, list[Entry]] = {}
        self._head: Job | None = None
        self.size = 0
        self.configured_types: frozenset[str] = frozenset()

    def set_configured_types(self, types: frozenset[str]) -> None:
        """The instance types the share has capacity limits for (others never head)."""
        self.configured_types = types
        self._head = None

    def push(self, job: Job) -> None:
        """Add a job that became RUNNABLE (submitted or preempted)."""
        self.size += 1
        self._enqueue(job)

    def discard(self, job: Job) -> None:
        """Remove a RUNNABLE job that leaves the queue without starting (terminated)."""
        job.queue_token += 1
        self.size -= 1
        self._head = None

    def _enqueue(self, job: Job) -> None:
        job.queue_token += 1
        heap = self._sub.get(job.instance_type)
        if heap is None:
            heap = self._sub[job.instance_type] = []
        heapq.heappush(heap, (-job.priority, job.submitted_at, job.order, job.queue_token, job))
        self._head = None

    def _top(self, heap: list[Entry]) -> Entry | None:
        while heap:
            entry = heap[0]
            job = entry[4]
            if (
                entry[3] == job.queue_token
                and job.status == "RUNNABLE"
                and job.unschedulable is None
            ):
                return entry
            heapq.heappop(heap)
        return None

    def head(self) -> Job | None:
        """The first RUNNABLE job in order whose type has a capacity limit, or None."""
        head = self._head
        if head is not None:
            return head
        best: Entry | None = None
        configured = self.configured_types
        empty: list[str] = []
        for u, heap in self._sub.items():
            if u not in configured:
                continue
            top = self._top(heap)
            if top is None:
                empty.append(u)
            elif best is None or top < best:
                best = top
        for u in empty:
            del self._sub[u]
        self._head = best[4] if best is not None else None
        return self._head

    def pop(self, job: Job) -> None:
        """Remove the head ``job`` because it starts."""
        heap = self._sub[job.instance_type]
        top = self._top(heap)
        if top is None or top[4] is not job:
            raise RuntimeError(f"{job.name} is not at the top of its queue")
        heapq.heappop(heap)
        job.queue_token += 1
        self.size -= 1
        self._head = None

    def ordered(self) -> list[Job]:
        """Every RUNNABLE job of the share in queue order (O(n log n); for reading)."""
        jobs: dict[Job, None] = {}
        for heap in self._sub.values():
            for entry in heap:
                job = entry[4]
                if entry[3] == job.queue_token and job.status == "RUNNABLE":
                    jobs[job] = None
        return sorted(jobs, key=queue_key)
