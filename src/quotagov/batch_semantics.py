"""AWS Batch service-job semantics, written once: statuses, saved and lost work, retries.

Pure Python with no imports from the rest of quotagov, so the local scheduler, the
governance use cases and the simulated Batch all read these rules from one place.

Sources:

- Statuses and their order inside one attempt: ``DescribeServiceJob.status`` in
  botocore's ``batch`` model; ``../shared/reference/aws-and-slack-facts.md`` §3.1
  (SUBMITTED -> PENDING -> RUNNABLE -> SCHEDULED -> STARTING -> RUNNING -> SUCCEEDED or
  FAILED). Preemption returns a job from a capacity-holding status to RUNNABLE.
- Saved and lost work at a preemption: ``../shared/spec/scenario-format.md``, "A
  preemption at time t": a job RUNNING for ``r`` seconds in its attempt keeps ``r``
  rounded down to a multiple of ``checkpointIntervalSeconds`` (nothing without
  checkpointing) and loses the rest.
- ``preemptionRetriesBeforeTermination`` (``SubmitServiceJob``): unset = unlimited; N =
  the job FAILS when its preemption count exceeds N (0 fails on the first preemption).
- Job queue references: Batch accepts a queue's name or its ARN
  (``arn:<partition>:batch:<region>:<account>:job-queue/<name>``); a quota share's ARN
  extends its queue's (``.../job-queue/<name>/quota-share/<share>``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

JobStatus = Literal[
    "SUBMITTED",
    "PENDING",
    "RUNNABLE",
    "SCHEDULED",
    "STARTING",
    "RUNNING",
    "SUCCEEDED",
    "FAILED",
]
PreemptionKind = Literal["CROSS_SHARE", "IN_SHARE"]

#: Every service-job status, in life-cycle order.
SERVICE_JOB_STATUSES: tuple[str, ...] = get_args(JobStatus)
#: Statuses after which a service job never runs again.
TERMINAL_STATUSES: frozenset[str] = frozenset({"SUCCEEDED", "FAILED"})
#: Statuses in which a job holds its instances (the preemptible ones), in life-cycle order.
HOLDING_STATUSES: tuple[str, ...] = ("SCHEDULED", "STARTING", "RUNNING")
#: Statuses of a job still in its quota share (not finished), in life-cycle order.
ACTIVE_STATUSES: tuple[str, ...] = tuple(
    s for s in SERVICE_JOB_STATUSES if s not in TERMINAL_STATUSES
)
#: Order of statuses inside one attempt; the two terminal ones rank equal and highest.
STATUS_RANK: dict[str, int] = {
    **{status: rank for rank, status in enumerate(ACTIVE_STATUSES)},
    **dict.fromkeys(TERMINAL_STATUSES, len(ACTIVE_STATUSES)),
}


def is_terminal(status: str) -> bool:
    """True for ``SUCCEEDED`` and ``FAILED``."""
    return status in TERMINAL_STATUSES


@dataclass(frozen=True, slots=True)
class Outcome:
    """Saved and lost RUNNING seconds of one preempted attempt, and the new remaining work.

    Attributes:
        saved: seconds kept by the last checkpoint.
        lost: seconds of the attempt not saved.
        remaining: work left for the next attempt, seconds (None: never completes).
    """

    saved: float
    lost: float
    remaining: float | None


def saved_seconds(running: float, checkpoint_interval: float | None) -> float:
    """``running`` rounded down to a multiple of ``checkpoint_interval`` (0 without one).

    Seconds in, seconds out; a non-positive ``running`` saves nothing.
    """
    if not checkpoint_interval or running <= 0:
        return 0
    return math.floor(running / checkpoint_interval) * checkpoint_interval


def lost_seconds(running: float, checkpoint_interval: float | None) -> float:
    """Seconds lost when an attempt that ran ``running`` seconds is preempted.

    ``running - saved_seconds(running, checkpoint_interval)``: the work since the last
    checkpoint, or the whole attempt without checkpointing (None or 0).

    Raises:
        ValueError: for a negative ``running`` or ``checkpoint_interval``.
    """
    if running < 0:
        raise ValueError(f"run_seconds: must be >= 0, got {running}")
    if checkpoint_interval is not None and checkpoint_interval < 0:
        raise ValueError(f"checkpointIntervalSeconds: must be >= 0, got {checkpoint_interval}")
    return running - saved_seconds(running, checkpoint_interval)


def preemption_outcome(
    running: float,
    remaining: float | None,
    checkpoint_interval: float | None,
    restart_overhead: float,
) -> Outcome:
    """The spec's preemption rule for an attempt that ran ``running`` seconds.

    ``remaining`` is the work left at the start of the attempt (None: never completes);
    the new remaining work shrinks by the saved seconds and grows by
    ``restart_overhead`` (``restartOverheadSeconds``).
    """
    saved = saved_seconds(running, checkpoint_interval)
    new_remaining = None if remaining is None else remaining - saved + restart_overhead
    return Outcome(saved=saved, lost=running - saved, remaining=new_remaining)


def retries_exhausted(preemption_count: int, retries: int | None) -> bool:
    """Whether a job preempted ``preemption_count`` times has run out of retries.

    ``retries`` is ``preemptionRetriesBeforeTermination`` (None: unlimited, never).
    """
    return retries is not None and preemption_count > retries


def failed_on_retries(status: str, preemption_count: int, retries: int | None) -> bool:
    """True when a job ``FAILED`` because its preemption retries ran out."""
    return status == "FAILED" and retries_exhausted(preemption_count, retries)


def queue_name(reference: str) -> str:
    """The job queue name of a queue name or of any ARN under ``job-queue/<name>``.

    ``"arn:aws:batch:eu-west-1:111122223333:job-queue/q/quota-share/s"`` -> ``"q"``;
    ``"q"`` -> ``"q"``; an ARN of anything else -> ``""``.
    """
    if reference.startswith("arn:"):
        _, _, rest = reference.partition(":job-queue/")
        return rest.split("/", 1)[0]
    return reference


def same_queue(a: str, b: str) -> bool:
    """Whether two job-queue references (names or ARNs) name the same queue."""
    return queue_name(a) == queue_name(b)
