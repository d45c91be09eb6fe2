"""A BEST_EFFORT_FIFO queue's *frontier*: the heads it presents, in turn, when each is
set aside and nothing else changes.

Under the pass-over rule of :mod:`.queueing`, once a job of instance type ``u`` needing
``c`` instances is set aside (and the state of ``u`` is unchanged), the jobs of ``u``
needing ``c`` or more instances are passed over. So the heads of one type, in turn, are
its jobs in queue order whose instance count is strictly below that of every earlier
job of the type (its running minima), and the heads of the share, in turn, are those
of all its types merged in queue order. That sequence depends only on the queue's
contents, so the queue can compute it once and reuse it across scheduling passes
until a job enters or leaves the queue (see :class:`~.queueing.RunnableQueue`).
"""

from __future__ import annotations

from collections.abc import Iterable

from quotagov.scheduler.state import Job

#: Heap entry, as in :mod:`.queueing`: (-schedulingPriority, submittedAt, input order,
#: queue token, job).
Entry = tuple[int, float, int, int, Job]


def frontier(tops: Iterable[Entry]) -> list[Job]:
    """The heads set aside in turn, from the first entry of every (type, count) sub-queue.

    Args:
        tops: the first valid entry of each non-empty (instance type, instance count)
            sub-queue whose type the share has a capacity limit for (any order).

    Returns:
        The jobs, in the order they would become the head (length at most the number
        of entries; at most 3 per type with counts 1, 2 and 4).
    """
    ordered = sorted(tops)
    lowest: dict[str, int] = {}
    out: list[Job] = []
    for entry in ordered:
        job = entry[4]
        low = lowest.get(job.instance_type)
        if low is None or job.count < low:
            lowest[job.instance_type] = job.count
            out.append(job)
    return out
