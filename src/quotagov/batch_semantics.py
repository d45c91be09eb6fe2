"""AWS Batch service-job semantics, written once: statuses, saved and lost work, retries.

Pure Python with no imports from the rest of quotagov, so the local scheduler, the
governance use cases and the simulated Batch all read these rules from one place.

Sources:

- Statuses and their order inside one attempt: ``DescribeServiceJob.status`` in
  botocore's ``batch`` model; AWS Batch User Guide, "Mapping AWS Batch service job
  status to SageMaker AI status",
  https://docs.aws.amazon.com/batch/latest/userguide/service-job-status.html
  (SUBMITTED -> PENDING -> RUNNABLE -> SCHEDULED -> STARTING -> RUNNING -> SUCCEEDED or
  FAILED). Preemption returns a job from a capacity-holding status to RUNNABLE.
- Saved and lost work at a preemption: ``docs/simulator/spec.md``, "A
  preemption at time t": a job RUNNING for ``r`` seconds in its attempt keeps ``r``
  rounded down to a multiple of ``checkpointIntervalSeconds`` (nothing without
  checkpointing) and loses the rest.
- ``preemptionRetriesBeforeTermination`` (``SubmitServiceJob``): unset = unlimited; N =
  the job FAILS when its preemption count exceeds N (0 fails on the first preemption).
- Quota share vocabulary (``CreateQuotaShare`` in botocore's ``batch`` model): the
  strategies RESERVE, LEND and LEND_AND_BORROW, the ENABLED/DISABLED switches, and
  ``borrowLimit`` -1 for no cap.
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
#: A quota share's ``resourceSharingConfiguration.strategy`` (``CreateQuotaShare``).
ShareStrategy = Literal["RESERVE", "LEND", "LEND_AND_BORROW"]
#: The quota share switches: ``state`` and ``preemptionConfiguration.inSharePreemption``.
Switch = Literal["ENABLED", "DISABLED"]
#: ``borrowLimit`` meaning "borrow without cap" (the AWS Batch default); lower is invalid.
UNLIMITED_BORROW = -1

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


def queue_region(reference: str) -> str:
    """The Region of a job queue ARN (or of any ARN under ``job-queue/<name>``).

    ``"arn:aws:batch:eu-west-1:111122223333:job-queue/q"`` -> ``"eu-west-1"``; a queue
    name (which says nothing of its Region) or another kind of ARN -> ``""``.
    """
    if not reference.startswith("arn:") or ":job-queue/" not in reference:
        return ""
    parts = reference.split(":", 5)
    return parts[3] if len(parts) == 6 and parts[2] == "batch" else ""


def same_queue(a: str, b: str) -> bool:
    """Whether two job-queue references (names or ARNs) name the same queue."""
    return queue_name(a) == queue_name(b)


def max_admissible_instances(
    environment: int | None, limit: int | None, strategy: str, borrow_limit: int
) -> int:
    """The most instances of one type a job of a quota share can ever be admitted with.

    Rules (``docs/simulator/spec.md``, "Admission"; AWS Batch quota shares):
    a job starts within quota (``used + c <= limit``) or, in a LEND_AND_BORROW share, by
    borrowing up to ``limit x borrowLimit / 100`` more (no cap for -1); and it never
    gets more instances than the service environment has of the type. In-share and
    cross-share preemption only free instances within those bounds.

    Args:
        environment: instances of the type in the service environment (None: unknown,
            no bound from it).
        limit: the share's ``maxCapacity`` for the type (None: no capacity limit).
        strategy: the share's ``resourceSharingConfiguration.strategy``.
        borrow_limit: its ``borrowLimit`` in percent (-1: no cap).

    Returns:
        The bound, in instances (0 when the share has no limit for the type).
    """
    if limit is None:
        return 0
    most = limit
    if strategy == "LEND_AND_BORROW":
        if borrow_limit == -1:
            most = environment if environment is not None else 2**62
        else:
            most = limit + limit * borrow_limit // 100
    if environment is not None:
        most = min(most, environment)
    return most


def unschedulable_reason(
    count: int,
    instance_type: str,
    environment: int | None,
    share: str,
    limit: int | None,
    strategy: str,
    borrow_limit: int,
) -> str | None:
    """Why a job needing ``count`` instances can never be admitted, with the numbers,
    or None when it can (:func:`max_admissible_instances` is the rule)."""
    if environment is not None and count > environment:
        return f"needs {count} {instance_type} instances, the service environment has {environment}"
    most = max_admissible_instances(environment, limit, strategy, borrow_limit)
    if count <= most:
        return None
    if limit is None:
        return f"quota share {share!r} has no capacity limit for {instance_type}"
    if strategy == "LEND_AND_BORROW":
        detail = f"capacity limit {limit} + borrow limit {borrow_limit} % = {most}"
    else:
        detail = f"capacity limit {limit}, {strategy} does not borrow"
    return (
        f"needs {count} {instance_type} instances, quota share {share!r} can hold at most "
        f"{most} ({detail})"
    )
