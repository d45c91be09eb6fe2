"""The disposition rules, pure: what to open, what the owner may choose, who owns a job.

Rules (``docs/design.md``, "Job-state handling and retry exhaustion"; Batch facts from
AWS Batch User Guide, "Preemption",
https://docs.aws.amazon.com/batch/latest/userguide/preemption.html):

* **Retry exhaustion** is recognised from the status and ``preemptionSummary`` only
  (:func:`quotagov.batch_semantics.failed_on_retries`); the ``statusReason`` text is not
  documented by AWS and is never read.
* The disposition is the one the job's workload class names in the policy
  (``workloadClasses.<class>.onRetriesExhausted``): ``resubmit`` (a successor in the
  same quota share), ``reclassify`` (a successor in the next share of the class's
  ``shares`` list) or ``ask-owner``. One original job gets at most
  ``onRetriesExhausted.maxResubmits`` successors, counted along the predecessor chain.
  When the policy's action is impossible (cap reached, no next share) the owner is
  asked with the choices that remain; when only ``abandon`` remains the disposition
  ends ``abandoned``.
* **Thrash guard**: a job preempted ``thrashGuard.preemptions`` times within
  ``thrashGuard.windowSeconds`` seconds, still running or waiting, is reclassified
  early when its class has a thrash guard and a next share (and the cap allows a
  successor).
* The **owner** of a job is its submitter, else its team; who may decide for it is
  :func:`quotagov.governance.access.may_decide_disposition`.

Every function here is pure: times (epoch seconds) are passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from quotagov.governance.access import may_decide_disposition
from quotagov.governance.dispositions.errors import (
    DispositionForbiddenError,
    InvalidChoiceError,
)
from quotagov.governance.dispositions.record import (
    APPLY_LEASE_SECONDS,
    Choice,
    DispositionRecord,
    DispositionStatus,
    Trigger,
)
from quotagov.governance.job_state import JobTracking
from quotagov.governance.lease import Lease
from quotagov.governance.model.job import JobRecord
from quotagov.governance.owners import owner_of
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.routing import NotATeamMemberError, RoutingDecision, RoutingInput, route
from quotagov.policy.models import Policy, ThrashGuard, WorkloadClass


def thrash_detected(stop_times_ms: Sequence[int], guard: ThrashGuard) -> bool:
    """True when ``guard.preemptions`` preemptions stopped within ``guard.windowSeconds``.

    ``stop_times_ms`` are the preempted attempts' ``stoppedAt`` (epoch ms), any order.
    """
    times = sorted(stop_times_ms)
    k = guard.preemptions
    window_ms = guard.windowSeconds * 1000
    return any(times[i + k - 1] - times[i] <= window_ms for i in range(len(times) - k + 1))


def next_share(workload_class: WorkloadClass, current: str) -> str | None:
    """The share after ``current`` in the class's ``shares`` list, or None.

    A job in a share the class does not list (policy changed since) moves to the first
    share of the list that is not ``current``.
    """
    shares = workload_class.shares
    if current in shares:
        i = shares.index(current)
        return shares[i + 1] if i + 1 < len(shares) else None
    return next((s for s in shares if s != current), None)


def original_id(job: JobRecord) -> str:
    """The submission id of the first job of the chain."""
    return job.originalId or job.pk


def generation(job: JobRecord) -> int:
    """``resubmitCount``: 0 for an original submission, n for its n-th successor."""
    return job.resubmitCount


def successor_id_for(job: JobRecord) -> str:
    """Deterministic id of a record's successor: ``<original id>-r<resubmitCount + 1>``.

    The chain is linear (a record gets at most one successor), so the pair (original,
    generation) names one record; a retried disposition finds the same successor.
    """
    return f"{original_id(job)}-r{generation(job) + 1}"


def available_choices(
    job: JobRecord, workload_class: WorkloadClass, current_share: str
) -> tuple[Choice, ...]:
    """Choices still possible for a job: resubmit/reclassify within the cap, abandon always."""
    return choices_for_generation(generation(job), workload_class, current_share)


def choices_for_generation(
    resubmit_count: int, workload_class: WorkloadClass, current_share: str
) -> tuple[Choice, ...]:
    """:func:`available_choices` for a job that is the ``resubmit_count``-th successor
    of its original (0: the original) in ``current_share`` (the what-if loop uses it)."""
    choices: list[Choice] = []
    if resubmit_count < workload_class.onRetriesExhausted.maxResubmits:
        choices.append(Choice.RESUBMIT)
        if next_share(workload_class, current_share) is not None:
            choices.append(Choice.RECLASSIFY)
    choices.append(Choice.ABANDON)
    return tuple(choices)


@dataclass(frozen=True, slots=True)
class RetriesExhausted:
    """What a class's ``onRetriesExhausted`` decides for a job out of preemption retries.

    Attributes:
        choice: ``resubmit`` or ``reclassify``: the policy's action, possible, so taken
            at once; ``abandon``: nothing else remains (``maxResubmits`` reached);
            None: the owner is asked (the policy says ``ask-owner``, or its action is
            impossible from the job's share).
        choices: every choice still possible (:func:`choices_for_generation`): the
            owner's options when asked.
    """

    choice: Choice | None
    choices: tuple[Choice, ...]


def on_retries_exhausted(
    resubmit_count: int, workload_class: WorkloadClass, current_share: str
) -> RetriesExhausted:
    """The retries-exhausted rule: what happens to a job that FAILED after using its
    ``preemptionRetriesBeforeTermination`` (``docs/design.md``, "Job-state handling and
    retry exhaustion"; AWS Batch User Guide, "Preemption",
    https://docs.aws.amazon.com/batch/latest/userguide/preemption.html).

    The class's ``onRetriesExhausted.action`` when it is possible (``resubmit`` within
    the ``maxResubmits`` cap, ``reclassify`` also needing a next share); ``abandon``
    when only that remains; else the owner is asked with the choices that remain. The
    one rule of the dispositions (:func:`exhausted_disposition`) and the what-if
    (``quotagov_tools.whatif.governed``).

    Args:
        resubmit_count: the job's place in its chain (0: the original submission, n:
            its n-th successor).
        workload_class: the job's class in the policy.
        current_share: the quota share the job ran in.
    """
    action = workload_class.onRetriesExhausted.action
    choices = choices_for_generation(resubmit_count, workload_class, current_share)
    if action in (Choice.RESUBMIT, Choice.RECLASSIFY) and Choice(action) in choices:
        return RetriesExhausted(Choice(action), choices)
    if choices == (Choice.ABANDON,):
        return RetriesExhausted(Choice.ABANDON, choices)
    return RetriesExhausted(None, choices)


def authorize(job: JobRecord, actor: str, policy: Policy) -> None:
    """Raise unless ``actor`` may decide for ``job``.

    Raises:
        DispositionForbiddenError: see :func:`~quotagov.governance.access.may_decide_disposition`.
    """
    if not may_decide_disposition(
        policy,
        team=job.team,
        quota_share=job.quotaShareName or "",
        submitter=owner_of(job),
        owner_slack_user_id=job.ownerSlackUserId,
        actor=actor,
    ):
        raise DispositionForbiddenError(
            f"actor: {actor!r} may not decide for job {job.pk!r} (team {job.team!r})"
        )


def target_share(job: JobRecord, choice: Choice, policy: Policy) -> str:
    """The quota share of ``job``'s successor for ``choice``: the same one, or the next.

    Raises:
        InvalidChoiceError: ``reclassify`` from the class's last share.
    """
    share = job.quotaShareName or ""
    if choice is not Choice.RECLASSIFY:
        return share
    found = next_share(policy.workloadClasses[job.workloadClass], share)
    if found is None:
        raise InvalidChoiceError(
            f"choice: reclassify impossible, {share!r} is the last share of class "
            f"{job.workloadClass!r}"
        )
    return found


def exhausted_disposition(
    job: JobRecord,
    tracking: JobTracking,
    workload_class: WorkloadClass,
    policy: Policy,
    now: float,
) -> DispositionRecord:
    """The disposition opened when ``job`` FAILED on its preemption retries.

    Decided by :func:`on_retries_exhausted`: ``applying`` with the policy's choice when
    that is possible; ``abandoned`` when only ``abandon`` remains; else
    ``pending-owner`` with the choices that remain.
    """
    share = job.quotaShareName or tracking.quota_share_name or ""
    action = workload_class.onRetriesExhausted.action
    verdict = on_retries_exhausted(generation(job), workload_class, share)
    retries = job.preemptionRetriesBeforeTermination
    opened = DispositionRecord(
        status=DispositionStatus.PENDING_OWNER,
        trigger=Trigger.RETRIES_EXHAUSTED,
        policy_action=action,
        owner=owner_of(job),
        opened_at=now,
        preemption_count=tracking.preemption_count,
        preemption_retries_before_termination=retries,
    )
    why = (
        f"FAILED after {tracking.preemption_count} preemption(s), more than "
        f"preemptionRetriesBeforeTermination={retries}"
    )
    policy_says = f"{why}; class {job.workloadClass!r} policy: {action}"
    if verdict.choice in (Choice.RESUBMIT, Choice.RECLASSIFY):
        by_policy = opened.with_changes(reason=policy_says)
        return decided(job, by_policy, verdict.choice, by=QUOTAGOV_ACTOR, policy=policy, now=now)
    if verdict.choice is Choice.ABANDON:
        return opened.with_changes(
            status=DispositionStatus.ABANDONED,
            choice=Choice.ABANDON,
            decided_by=QUOTAGOV_ACTOR,
            decided_at=now,
            closed_at=now,
            reason=f"{why}; policy action {action} impossible: "
            f"maxResubmits={workload_class.onRetriesExhausted.maxResubmits} reached "
            f"for original job {original_id(job)!r}",
        )
    if action != "ask-owner":
        policy_says += f" (impossible from share {share!r}, so the owner decides)"
    return opened.with_changes(choices=verdict.choices, reason=policy_says)


def thrash_disposition(
    job: JobRecord,
    tracking: JobTracking,
    workload_class: WorkloadClass,
    guard: ThrashGuard,
    policy: Policy,
    now: float,
) -> DispositionRecord | None:
    """The ``awaiting-termination`` disposition of a thrashing job, or None when it
    cannot be reclassified (no next share, or the cap is reached)."""
    share = job.quotaShareName or tracking.quota_share_name or ""
    if Choice.RECLASSIFY not in available_choices(job, workload_class, share):
        return None
    return DispositionRecord(
        status=DispositionStatus.AWAITING_TERMINATION,
        trigger=Trigger.THRASH_GUARD,
        policy_action="reclassify",
        owner=owner_of(job),
        opened_at=now,
        preemption_count=tracking.preemption_count,
        choice=Choice.RECLASSIFY,
        decided_by=QUOTAGOV_ACTOR,
        decided_at=now,
        reason=f"thrash guard: {guard.preemptions} preemptions within "
        f"{guard.windowSeconds} s while in share {share!r}",
        successor_id=successor_id_for(job),
        target_share=target_share(job, Choice.RECLASSIFY, policy),
    )


def decided(
    job: JobRecord,
    disposition: DispositionRecord,
    choice: Choice,
    *,
    by: str,
    policy: Policy,
    now: float,
    source: str | None = None,
) -> DispositionRecord:
    """``disposition`` once ``by`` took ``choice`` at ``now``.

    ``abandon`` closes it; ``resubmit``/``reclassify`` move it to ``applying`` with the
    successor's id and share and a fresh lease of :data:`APPLY_LEASE_SECONDS`.

    Args:
        job: the job the disposition is for.
        disposition: its disposition (``pending-owner``, or one being opened).
        choice: the decision.
        by: :data:`QUOTAGOV_ACTOR` (the policy) or the owner's principal / Slack user id.
        policy: the governance policy (for the next share).
        now: epoch seconds.
        source: ``api`` or ``slack`` for an owner's decision (``decisionSource``).

    Raises:
        InvalidChoiceError: ``reclassify`` from the class's last share.
    """
    taken = disposition.with_changes(
        choice=choice, decided_by=by, decided_at=now, decision_source=source
    )
    if choice is Choice.ABANDON:
        return taken.with_changes(status=DispositionStatus.ABANDONED, closed_at=now)
    return taken.with_changes(
        status=DispositionStatus.APPLYING,
        lease=Lease.taken(now, APPLY_LEASE_SECONDS),
        successor_id=successor_id_for(job),
        target_share=target_share(job, choice, policy),
    )


def successor_faults(successor: JobRecord, policy: Policy) -> list[str]:
    """Why the policy as it is now would not let ``successor`` go to Batch (empty if
    it would); each fault starts with the record or request field it is about.

    The apply function submits the successor from the job records, which other roles
    write (``docs/design.md``, "Trust model": the Slack function records a choice with
    ``UpdateItem`` on the jobs table). So before ``SubmitServiceJob`` (and its
    ``iam:PassRole``) the record is routed like a submission of the same principal:
    :func:`quotagov.governance.routing.route` on
    ``RoutingInput.from_record(successor, successor=True)`` (its target share; a level
    the team may set or be given by escalation), whose reasons are the faults. A record
    route() accepts must also carry what route() gives it (``quotaShareName``,
    ``schedulingPriority``), and at most the class's
    ``onRetriesExhausted.maxResubmits`` successors are allowed in the chain.
    """
    decision = _successor_decision(successor, policy)
    if isinstance(decision, list):
        return decision
    faults = list(decision.reasons)
    if decision.routing is not None:
        given = decision.routing
        if successor.quotaShareName != given.quotaShareName:
            faults.append(
                f"quotaShareName: {successor.quotaShareName!r} is not the share routing "
                f"gives ({given.quotaShareName!r})"
            )
        if successor.schedulingPriority != given.schedulingPriority:
            faults.append(
                f"schedulingPriority: {successor.schedulingPriority} is not level "
                f"{successor.priorityLevel!r}'s ({given.schedulingPriority})"
            )
    workload_class = policy.workloadClasses.get(successor.workloadClass)
    cap = workload_class.onRetriesExhausted.maxResubmits if workload_class else 0
    if workload_class is not None and successor.resubmitCount > cap:
        faults.append(
            f"resubmitCount: {successor.resubmitCount} is more than class "
            f"{successor.workloadClass!r} allows ({cap})"
        )
    return faults


def successor_routing(successor: JobRecord, policy: Policy) -> JobRecord:
    """``successor`` with the ``schedulingPriority`` route() gives it under the policy
    as it is now (unchanged when route() refuses it: :func:`successor_faults` says why)."""
    decision = _successor_decision(successor, policy)
    if isinstance(decision, list) or decision.routing is None:
        return successor
    return successor.model_copy(update={"schedulingPriority": decision.routing.schedulingPriority})


def _successor_decision(successor: JobRecord, policy: Policy) -> RoutingDecision | list[str]:
    """route()'s decision on ``successor``, or the one fault when it cannot be routed
    (its principal is not a member of its team; its stored payload is unreadable)."""
    try:
        return route(policy, RoutingInput.from_record(successor, successor=True))
    except NotATeamMemberError as refused:
        return [str(refused)]
    except ValueError as unreadable:
        return [str(unreadable)]
