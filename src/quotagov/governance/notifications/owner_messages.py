"""What each owner notification says: the event, its key and its facts.

Every builder returns an :class:`OwnerEvent` whose ``event_key`` is unique per job and
per event (the notification log stores it once, so a redelivered event tells nobody
twice) and whose ``text`` is the message as the owner reads it: what happened, why, and
what happens next. Durations are seconds; times are epoch seconds shown in UTC.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from quotagov.governance.model.job import JobRecord
from quotagov.governance.ports.notifications import NotificationKind
from quotagov.governance.slack.blocks import format_seconds
from quotagov.governance.slack.notifications import MAX_REASON_CHARS


@dataclass(frozen=True)
class OwnerEvent:
    """One thing that happened to a job, ready to tell its owner.

    Attributes:
        kind: the :class:`NotificationKind`.
        event_key: unique per job and event (see the builders).
        text: the message (plain text; the Slack layer escapes it).
        at: when it happened, epoch seconds.
        details: JSON-ready facts for the log (seconds, shares, ids).
        digest_line: for preemptions, the line this event adds to a digest.
    """

    kind: NotificationKind
    event_key: str
    text: str
    at: float
    details: dict[str, Any] = field(default_factory=dict)
    digest_line: str = ""


def seconds(value: float) -> str:
    """``600`` -> ``"600 s"``, ``599.5`` -> ``"599.5 s"`` (never rounded up to a
    checkpoint boundary it did not reach), ``5400`` -> ``"5400 s (1 h 30 min)"``."""
    if abs(value - round(value)) < 0.05:
        return format_seconds(round(value))
    return f"{value:.1f} s"


def utc(epoch_seconds: float) -> str:
    """``1777885200`` -> ``"2026-05-04 09:00:00 UTC"``."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _kind_words(kind: str, beneficiary: str | None, beneficiary_share: str | None) -> str:
    """``cross-share`` + ``med-1`` -> "cross-share: its borrowed capacity was reclaimed
    for med-1 (share medium)"."""
    whom = f"{beneficiary}" + (f" (share {beneficiary_share})" if beneficiary_share else "")
    if kind == "cross-share":
        cause = "its borrowed capacity was reclaimed"
        return f"cross-share preemption: {cause}" + (f" for {whom}" if beneficiary else "")
    if kind == "in-share":
        if beneficiary:
            return (
                f"in-share preemption: {beneficiary}, a higher-priority job of the same "
                "share, needed the instance"
            )
        return "in-share preemption: a higher-priority job of the same share needed the instance"
    return "preemption" + (f" for {whom}" if beneficiary else " (Batch did not say for which job)")


def preempted(
    job: JobRecord,
    *,
    attempt_key: str,
    stopped_at: float,
    run_seconds: float | None,
    lost_seconds: float | None,
    kind: str,
    beneficiary: str | None = None,
    beneficiary_share: str | None = None,
    retries_left: int | None = None,
    status_now: str | None = None,
) -> OwnerEvent:
    """The job was preempted (one attempt stopped by Batch).

    What the message says comes next follows the job's real state: the Batch status
    the job is in now (``status_now``, from the same folded events) decides it, so a
    job that has already failed, finished or restarted is never told it "waits
    RUNNABLE".

    Args:
        attempt_key: the attempt's stable key (``startedAt`` ms, else its ARN), which
            makes ``event_key`` ``preempted:<attempt_key>``.
        stopped_at: when the attempt was stopped, epoch seconds.
        run_seconds: how long the attempt ran (None when unknown).
        lost_seconds: work since the last checkpoint (``run % interval``; the whole
            attempt without checkpointing), None when unknown.
        kind: ``in-share``, ``cross-share`` or ``unattributed``.
        beneficiary: the job the capacity went to, when known (job name or ARN).
        retries_left: ``preemptionRetriesBeforeTermination`` minus the preemptions so
            far, this one included: 0 = the next preemption fails the job, negative =
            this one did; None = unlimited.
        status_now: the job's Batch status after the events that told of this
            preemption (``RUNNABLE``, ``RUNNING``, ``FAILED``, ...); None = not known,
            read as RUNNABLE (where Batch puts a preempted job).
    """
    why = _kind_words(kind, beneficiary, beneficiary_share)
    if lost_seconds is None:
        lost = "Lost work is not known yet."
    elif job.checkpointIntervalSeconds:
        lost = (
            f"It lost {seconds(lost_seconds)} of work since its last checkpoint "
            f"(ran {seconds(run_seconds or 0)}, checkpoints every "
            f"{job.checkpointIntervalSeconds} s)."
        )
    else:
        whole = seconds(lost_seconds)
        lost = f"It does not checkpoint, so the whole attempt ({whole}) is lost."
    nxt = _after_preemption(retries_left, status_now)
    text = f"Your job {job.jobName} was preempted at {utc(stopped_at)} ({why}). {lost} {nxt}"
    line = f"{utc(stopped_at)}: {why}; lost {seconds(lost_seconds or 0)}"
    return OwnerEvent(
        kind=NotificationKind.PREEMPTED,
        event_key=f"preempted:{attempt_key}",
        text=text,
        at=stopped_at,
        details={
            "preemptionKind": kind,
            "forJob": beneficiary,
            "runSeconds": run_seconds,
            "lostWorkSeconds": lost_seconds,
        },
        digest_line=line,
    )


#: Batch statuses of a job that is running again (handed to SageMaker or beyond).
_RESTARTED = frozenset({"SCHEDULED", "STARTING", "RUNNING"})


def _after_preemption(retries_left: int | None, status_now: str | None) -> str:
    """What comes after a preemption, as the job's state now makes true."""
    if status_now == "FAILED":
        if retries_left is not None and retries_left < 0:
            return (
                "That exceeded its preemptionRetriesBeforeTermination, so Batch failed the "
                "job; it will not restart."
            )
        return "The job has since failed (Batch status FAILED); it will not restart."
    if status_now == "SUCCEEDED":
        return "The job has since finished (Batch status SUCCEEDED)."
    if retries_left is not None and retries_left < 0:
        return "That exceeded its preemptionRetriesBeforeTermination, so Batch fails the job."
    if status_now in _RESTARTED:
        now = f"The job has since restarted (Batch status {status_now})"
    else:
        now = "It waits RUNNABLE and restarts when capacity frees up"
    if retries_left is None:
        return f"{now}."
    if retries_left > 0:
        return f"{now} (Batch tolerates {retries_left} more preemption(s))."
    return f"{now}; one more preemption and Batch fails it."


def digest_text(job_name: str, lines: Sequence[str], lost_total: float, span: float) -> str:
    """The digest of repeated preemptions: count, time span, one line each, total lost."""
    listed = "\n".join(f"• {line}" for line in lines)
    return (
        f"Your job {job_name} was preempted {len(lines)} times in {seconds(span)}:\n"
        f"{listed}\nLost work in all: {seconds(lost_total)}."
    )


def failed(job: JobRecord, *, at: float, status_reason: str | None, preemptions: int) -> OwnerEvent:
    """The service job FAILED (``event_key`` ``failed``: a job fails once)."""
    reason = (status_reason or "Batch gave no reason")[:MAX_REASON_CHARS]
    text = (
        f"Your job {job.jobName} failed at {utc(at)}: {reason}. "
        "If its workload class has a disposition, quotagov applies it next and tells you."
    )
    return OwnerEvent(
        kind=NotificationKind.FAILED,
        event_key="failed",
        text=text,
        at=at,
        details={"statusReason": status_reason, "preemptionCount": preemptions},
    )


def disposition_applied(
    job: JobRecord,
    *,
    at: float,
    choice: str,
    target_share: str | None,
    successor_id: str,
    reason: str,
    decided_by: str,
) -> OwnerEvent:
    """A successor was submitted: ``resubmit`` (same share) or ``reclassify`` (another)."""
    kind = NotificationKind.RECLASSIFIED if choice == "reclassify" else NotificationKind.RESUBMITTED
    verb = "reclassified into share" if choice == "reclassify" else "resubmitted to share"
    who = "by policy" if decided_by == "quotagov" else f"as decided by {decided_by}"
    text = (
        f"Your job {job.jobName} was {verb} '{target_share}' {who}, as successor "
        f"{successor_id}. Why: {reason[:MAX_REASON_CHARS]}"
    )
    return OwnerEvent(
        kind=kind,
        event_key=f"disposition:{successor_id}",
        text=text,
        at=at,
        details={"targetShare": target_share, "successorId": successor_id, "reason": reason},
    )


def refused(job: JobRecord, *, at: float, reasons: Sequence[str], by: str = "policy") -> OwnerEvent:
    """The submission was refused by the policy (or failed at ``SubmitServiceJob``)."""
    listed = "; ".join(reasons)[:MAX_REASON_CHARS] or "no reason given"
    text = f"Your submission {job.jobName} was refused by {by}: {listed}"
    return OwnerEvent(
        kind=NotificationKind.REFUSED,
        event_key="refused",
        text=text,
        at=at,
        details={"reasons": list(reasons), "by": by},
    )


def priority_changed(
    job: JobRecord,
    *,
    at: float,
    before: int | None,
    after: int,
    level: str,
    decided_by: str,
    escalation_id: str,
) -> OwnerEvent:
    """Batch now runs the job at ``after`` (``schedulingPriority`` 0-9999)."""
    who = (
        "at once (a level your team may set)"
        if decided_by == "quotagov"
        else f"approved by {decided_by}"
    )
    text = (
        f"The priority of your job {job.jobName} changed from {before} to {after} "
        f"('{level}'), {who}, at {utc(at)} (escalation {escalation_id})."
    )
    return OwnerEvent(
        kind=NotificationKind.PRIORITY_CHANGED,
        event_key=f"priority:{escalation_id}",
        text=text,
        at=at,
        details={"before": before, "after": after, "level": level, "decidedBy": decided_by},
    )
