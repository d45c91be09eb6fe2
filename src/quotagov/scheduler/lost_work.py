"""Work saved and lost when a job is preempted, and preemption retries.

Rule (``../shared/spec/scenario-format.md``, "A preemption at time t"): for a job that
has been RUNNING for ``r`` seconds in its attempt, ``saved`` is ``r`` rounded down to a
multiple of ``checkpointIntervalSeconds`` (0 without checkpointing) and
``lost = r - saved``; the remaining work shrinks by ``saved`` and grows by
``restartOverheadSeconds``. ``preemptionRetriesBeforeTermination`` (AWS Batch
``SubmitServiceJob``): unset = unlimited; N = the job FAILS when its preemption count
exceeds N (so 0 fails on the first preemption).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Outcome:
    """Saved and lost RUNNING seconds of one preempted attempt, and the new remaining work."""

    saved: float
    lost: float
    remaining: float | None


def saved_seconds(running: float, checkpoint_interval: float | None) -> float:
    """``running`` rounded down to a multiple of ``checkpoint_interval`` (0 without one)."""
    if not checkpoint_interval or running <= 0:
        return 0
    return math.floor(running / checkpoint_interval) * checkpoint_interval


def preemption_outcome(
    running: float,
    remaining: float | None,
    checkpoint_interval: float | None,
    restart_overhead: float,
) -> Outcome:
    """Apply the rule to an attempt that ran ``running`` seconds with ``remaining`` work left.

    ``remaining`` is the work left at the start of the attempt (None: never completes).
    """
    saved = saved_seconds(running, checkpoint_interval)
    lost = running - saved
    new_remaining = None if remaining is None else remaining - saved + restart_overhead
    return Outcome(saved=saved, lost=lost, remaining=new_remaining)


def retries_exhausted(preemption_count: int, retries: int | None) -> bool:
    """Whether a job preempted ``preemption_count`` times now FAILS (``RETRIES_EXHAUSTED``)."""
    return retries is not None and preemption_count > retries
