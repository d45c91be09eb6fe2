"""Victim order and the "no more than needed, or none" rule of the preemption search.

AWS Batch does not publish how it picks victims (its docs name the inputs only:
borrowed instances, priorities, run time). This project's documented choice, from
``docs/simulator/spec.md``: lowest ``schedulingPriority`` first, then the
most recently started job (least work lost); between jobs started at the same time,
the one started later in the scheduling pass goes first. Victims are taken in that
order until the job fits; then, going back from the last victim taken to the first,
each one whose release is not needed is kept running.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from quotagov.scheduler.state import Job


def victim_order_key(job: Job) -> tuple[int, int]:
    """Sort key putting the next victim first: (priority ascending, start sequence descending).

    ``start_seq`` grows with every start, so it orders by start time and, at equal
    times, by position in the scheduling pass.
    """
    return (job.priority, -job.start_seq)


def keep_back(victims: Sequence[Job], enough: Callable[[list[Job]], bool]) -> list[Job]:
    """Drop the victims whose release is not needed, last taken first.

    Args:
        victims: victims in the order they were taken; ``enough(victims)`` is True.
        enough: whether releasing the given victims lets the job be admitted.

    Returns:
        The victims still needed, in the order taken.
    """
    kept = list(victims)
    for i in range(len(kept) - 1, -1, -1):
        trial = kept[:i] + kept[i + 1 :]
        if enough(trial):
            kept = trial
    return kept
