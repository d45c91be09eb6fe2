"""Risk findings of an audited change: the rules, each in one function.

Sources of the rules: the AWS Batch User Guide pages "Quota shares"
(https://docs.aws.amazon.com/batch/latest/userguide/quota-shares.html) and "Preemption"
(https://docs.aws.amazon.com/batch/latest/userguide/preemption.html) and the governance policy
(``quotagov.policy``):

- a capacity limit lowered below the share's current use makes the excess
  ``SCHEDULED``/``STARTING``/``RUNNING`` jobs preemptible, even in a ``RESERVE`` share;
- a strategy change away from ``RESERVE`` lends (and maybe borrows) capacity that
  was reserved, so cross-share preemption can take it back from the share's jobs;
- a raised (or unlimited, ``-1``) ``borrowLimit`` lets the share take more idle
  capacity, all of it reclaimable by preemption;
- in-share preemption on a share used by a workload class that does not checkpoint
  loses that class's work when a higher-priority job arrives;
- disabling a share rejects new submissions; deleting it eventually terminates all
  of its jobs;
- a record delivered after its settling window is flagged late;
- a ``schedulingPriority`` raised by someone other than quotagov bypassed approval;
- a live configuration that differs from the policy document is drift.

A change of the governance policy itself (:func:`policy_change_findings`, shared by
``quotagov policy review`` before a change and by the audit of the policy parameter
after it) runs the share rules above on each share the policy declares, plus the
rights a team or share gains:

- a member added to a team (medium), an approver added to a team or share (high: a
  new person can approve escalations);
- a direct level raised: a team may now set, without approval, a ``schedulingPriority``
  higher than any it could set before (a level added to ``directLevels``, or a direct
  level's ``schedulingPriority`` raised) (high);
- an approval level added, an escalation budget raised (more requests, or a shorter
  period), an execution role added (medium);
- a new policy that is not valid: the functions keep refusing to load it (high).

Every finding is ``{code, severity, message}``; severity is ``high`` or ``medium``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from quotagov.governance.audit.diff import difference, quota_share_configuration
from quotagov.policy import Policy


@dataclass(frozen=True)
class ShareUsage:
    """What a quota share holds now, from ``ListServiceJobs`` filtered on ``QUOTA_SHARE_NAME``.

    Attributes:
        capacity: instances in use per capacity unit (instance type), summed over jobs
            in ``SCHEDULED``/``STARTING``/``RUNNING``.
        holding_jobs: ids of those jobs.
        active_jobs: ids of every job not yet finished (``SUBMITTED`` .. ``RUNNING``).
        stopped_jobs: ids of jobs the change already stopped before it was audited
            (preempted or terminated since its ``eventTime``); they are counted in
            ``capacity``, ``holding_jobs`` and ``active_jobs`` too.
    """

    capacity: Mapping[str, float] = field(default_factory=dict)
    holding_jobs: tuple[str, ...] = ()
    active_jobs: tuple[str, ...] = ()
    stopped_jobs: tuple[str, ...] = ()
    #: True when ``capacity`` is not measured but assumed (a policy change reviewed
    #: before it reaches Batch: the share taken as using its whole former limit)
    assumed: bool = False

    @classmethod
    def full(cls, config: Mapping[str, Any] | None) -> ShareUsage:
        """The worst case before a change is applied: every former limit in use."""
        return cls(capacity=dict(_limits(config)), assumed=True)

    def in_use(self) -> str:
        """How the instances in use are known, for a finding's message."""
        if self.assumed:
            return "(the share full at its former limit)"
        return f"by {len(self.holding_jobs)} job(s){self.stopped_note()}"

    def stopped_note(self) -> str:
        """``" (N already stopped since the change)"``, or empty."""
        return (
            f" ({len(self.stopped_jobs)} already stopped since the change)"
            if self.stopped_jobs
            else ""
        )


def finding(code: str, severity: str, message: str) -> dict[str, str]:
    """One finding as stored in an audit record."""
    return {"code": code, "severity": severity, "message": message}


def _whole(value: Any) -> int:
    """A whole number from a stored value: an int, or the text an unstorable number is
    kept as (``canonical``: e.g. ``"1E+300"``, or 201 digits)."""
    return value if isinstance(value, int) else int(Decimal(str(value)))


def _limits(config: Mapping[str, Any] | None) -> dict[str, int]:
    return {
        str(c["capacityUnit"]): _whole(c["maxCapacity"])
        for c in (config or {}).get("capacityLimits") or []
    }


def _strategy(config: Mapping[str, Any] | None) -> str | None:
    sharing = (config or {}).get("resourceSharingConfiguration") or {}
    value = sharing.get("strategy")
    return None if value is None else str(value)


def effective_borrow_limit(config: Mapping[str, Any] | None) -> float:
    """How much a share may borrow, in percent of its limits: 0 unless ``LEND_AND_BORROW``;
    ``math.inf`` for ``-1`` or an absent ``borrowLimit`` (Batch's default is unlimited)."""
    sharing = (config or {}).get("resourceSharingConfiguration") or {}
    if sharing.get("strategy") != "LEND_AND_BORROW":
        return 0.0
    limit = sharing.get("borrowLimit")
    if limit is None or _whole(limit) == -1:
        return math.inf
    return float(_whole(limit))


def lowered_below_use(
    share: str, before: Mapping[str, Any] | None, after: Mapping[str, Any], usage: ShareUsage
) -> list[dict[str, str]]:
    """Capacity limits set (or removed) to less than the instances the share used at the
    change's ``eventTime``: for a call that sets ``capacityLimits``.

    Whether it fires depends only on the new limit and the use, never on ``before``
    (which only words the message), so the delivery order of CloudTrail records
    cannot hide it.
    """
    out: list[dict[str, str]] = []
    old, new = _limits(before), _limits(after)
    if "capacityLimits" not in after:
        return out
    for unit, used in sorted(usage.capacity.items()):
        limit = new.get(unit, 0)
        was = old.get(unit)
        if used > limit:
            strategy = _strategy(after) or "unknown strategy"
            verb = "lowered to" if was is None or limit < was else "left at"
            out.append(
                finding(
                    "CAPACITY_LIMIT_BELOW_USE",
                    "high",
                    f"quota share {share}: {unit} capacity limit "
                    f"{'removed' if unit not in new else f'{verb} {limit}'}"
                    f"{'' if was is None else f' from {was}'} while {used:g} instances are in "
                    f"use {usage.in_use()}; the excess "
                    "becomes preemptible "
                    f"even though the share is {strategy}",
                )
            )
    return out


def recorded_late(delay_seconds: float, window_seconds: float) -> list[dict[str, str]]:
    """The CloudTrail record arrived after its settling window: its own before/after
    come from the ordered history, but the changes after it on the same resource were
    already recorded without it (their ``before`` may be wrong)."""
    return [
        finding(
            "RECORDED_LATE",
            "medium",
            f"delivered {delay_seconds:.0f} s after its eventTime, past the "
            f"{window_seconds:g} s settling window: later changes of this resource were "
            "recorded before it, and their before may not include it",
        )
    ]


def away_from_reserve(
    share: str, before: Mapping[str, Any] | None, after: Mapping[str, Any]
) -> list[dict[str, str]]:
    """The sharing strategy changed from ``RESERVE`` to ``LEND`` or ``LEND_AND_BORROW``."""
    old, new = _strategy(before), _strategy(after)
    if old == "RESERVE" and new is not None and new != "RESERVE":
        return [
            finding(
                "STRATEGY_AWAY_FROM_RESERVE",
                "high",
                f"quota share {share}: strategy changed from RESERVE to {new}; its idle "
                "capacity is now lent and taken back by cross-share preemption",
            )
        ]
    return []


def borrow_raised(
    share: str, before: Mapping[str, Any] | None, after: Mapping[str, Any]
) -> list[dict[str, str]]:
    """The effective borrow limit went up (including to unlimited)."""
    if "resourceSharingConfiguration" not in after:
        return []
    old = effective_borrow_limit(before) if before else 0.0
    new = effective_borrow_limit(after)
    if new <= old:
        return []
    shown = "unlimited (-1)" if math.isinf(new) else f"{new:g}%"
    was = "unlimited" if math.isinf(old) else f"{old:g}%"
    return [
        finding(
            "BORROW_LIMIT_RAISED",
            "medium",
            f"quota share {share}: borrow limit raised from {was} to {shown}",
        )
    ]


def in_share_preemption_without_checkpoints(
    share: str, before: Mapping[str, Any] | None, after: Mapping[str, Any], policy: Policy
) -> list[dict[str, str]]:
    """In-share preemption turned on where the policy sends non-checkpointing classes."""
    now = (after.get("preemptionConfiguration") or {}).get("inSharePreemption")
    was = ((before or {}).get("preemptionConfiguration") or {}).get("inSharePreemption")
    if now != "ENABLED" or was == "ENABLED":
        return []
    classes = sorted(
        name
        for name, wclass in policy.workloadClasses.items()
        if share in wclass.shares and not wclass.checkpointRequired
    )
    if not classes:
        return []
    return [
        finding(
            "IN_SHARE_PREEMPTION_WITHOUT_CHECKPOINTING",
            "high",
            f"quota share {share}: in-share preemption ENABLED but policy classes "
            f"{', '.join(classes)} run there without checkpointing and lose their work "
            "when preempted",
        )
    ]


def disabled_with_jobs(
    share: str, before: Mapping[str, Any] | None, after: Mapping[str, Any], usage: ShareUsage
) -> list[dict[str, str]]:
    """The share was set ``DISABLED`` while jobs are in it."""
    if after.get("state") != "DISABLED" or (before or {}).get("state") == "DISABLED":
        return []
    if not usage.active_jobs:
        return []
    return [
        finding(
            "SHARE_DISABLED_WITH_JOBS",
            "medium",
            f"quota share {share}: DISABLED with {len(usage.active_jobs)} unfinished job(s) "
            "in it; new submissions are rejected and deleting it next terminates them",
        )
    ]


def deleted_with_jobs(share: str, usage: ShareUsage) -> list[dict[str, str]]:
    """The share was deleted while jobs are in it (Batch eventually terminates them)."""
    if not usage.active_jobs:
        return []
    return [
        finding(
            "SHARE_DELETED_WITH_JOBS",
            "high",
            f"quota share {share}: deleted with {len(usage.active_jobs)} unfinished job(s) "
            f"in it{usage.stopped_note()}; Batch terminates all of them",
        )
    ]


def priority_outside_quotagov(
    job_id: str, before: int | None, after: int | None
) -> list[dict[str, str]]:
    """A ``schedulingPriority`` raised (or changed from an unknown value) by another principal."""
    if after is None or (before is not None and after <= before):
        return []
    if before is None:
        message = (
            f"service job {job_id}: schedulingPriority set to {after} outside quotagov "
            "(previous priority unknown); escalations need approval"
        )
    else:
        message = (
            f"service job {job_id}: schedulingPriority raised from {before} to {after} "
            "outside quotagov, bypassing escalation approval"
        )
    return [finding("PRIORITY_RAISED_OUTSIDE_QUOTAGOV", "high", message)]


def decision_id_conflict(
    decision_id: str, stored_digest: str, received_digest: str, stored_seq: int
) -> list[dict[str, str]]:
    """A decision arrived under an id the chain already holds with other content: one of
    the two was written by someone other than the deciding function (decision ids are
    built from known values, so a record can be planted under a future id). Both are
    kept: the stored record, and the received content in the conflict record."""
    return [
        finding(
            "DECISION_ID_CONFLICT",
            "high",
            f"decision {decision_id}: received with content sha256 {received_digest}, but "
            f"record {stored_seq} holds that id with content sha256 {stored_digest}; one "
            "of them was not written by the deciding function",
        )
    ]


def direct_invocation(function: str, principal: str) -> list[dict[str, str]]:
    """A quotagov function invoked by a principal rather than by its trigger: whatever
    event it was given (an identity, a Batch state change, an audit record) is a claim
    the stack cannot refuse without the guardrails (docs/guardrails.md)."""
    message = (
        f"function {function} was invoked directly by {principal}, not by its trigger "
        "(API Gateway, EventBridge, its queue): the event it acted on may be forged"
    )
    return [finding("DIRECT_INVOCATION", "high", message)]


def submitted_outside_quotagov(
    job_id: str, job_name: str | None, share: str | None, priority: int | None, queue: str
) -> list[dict[str, str]]:
    """A ``SubmitServiceJob`` on the governed queue by a principal that is not quotagov:
    the job skipped the policy (team, class, share, priority, checkpointing) entirely."""
    parts = [f"service job {job_id}"]
    if job_name:
        parts.append(f"({job_name})")
    where = f" into quota share {share}" if share else ""
    at = f" at schedulingPriority {priority}" if priority is not None else ""
    message = (
        f"{' '.join(parts)} submitted to the governed queue {queue}{where}{at} outside "
        "quotagov: no policy check (team, workload class, share, priority) was made"
    )
    return [finding("SUBMITTED_OUTSIDE_QUOTAGOV", "high", message)]


def _declared(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with Batch's default made explicit (``borrowLimit`` -1 when borrowing)."""
    out = quota_share_configuration(config)
    sharing = dict(out.get("resourceSharingConfiguration") or {})
    if sharing.get("strategy") == "LEND_AND_BORROW" and sharing.get("borrowLimit") is None:
        sharing["borrowLimit"] = -1
        out["resourceSharingConfiguration"] = sharing
    return out


def policy_drift(
    share: str, after: Mapping[str, Any] | None, policy: Policy
) -> list[dict[str, str]]:
    """The share's configuration after the change differs from the policy document.

    Only the fields ``after`` holds are compared (after an update on an unknown
    configuration, that is the request's fields). ``after`` None means deleted.
    """
    try:
        declared = _declared(policy.share(share).batch_configuration())
    except KeyError:
        if after is None:
            return []
        return [
            finding(
                "POLICY_DRIFT",
                "medium",
                f"quota share {share}: not declared in the policy for {policy.jobQueue}",
            )
        ]
    if after is None:
        return [
            finding(
                "POLICY_DRIFT",
                "medium",
                f"quota share {share}: deleted, but the policy declares it",
            )
        ]
    live = _declared(after)
    declared = {k: v for k, v in declared.items() if k in live}
    changes = difference(declared, live)
    if not changes:
        return []
    parts = "; ".join(
        f"{c['path']} is {c['after']!r}, policy says {c['before']!r}" for c in changes
    )
    return [finding("POLICY_DRIFT", "medium", f"quota share {share}: {parts}")]


# -- changes of the governance policy itself ---------------------------------------------


def _top_direct(policy: Policy, team: str) -> int | None:
    """The highest ``schedulingPriority`` ``team`` may set itself, or None (no such team)."""
    if team not in policy.teams:
        return None
    return max(
        (
            lv.schedulingPriority
            for lv in policy.priorityLevels
            if lv.name in policy.teams[team].directLevels
        ),
        default=None,
    )


def team_rights_gained(old: Policy, new: Policy) -> list[dict[str, str]]:
    """Members, approvers, direct and approval levels, budgets and roles a team gains."""
    out: list[dict[str, str]] = []
    for name, team in new.teams.items():
        before = old.teams.get(name)
        was_members = {m.principal for m in before.members} if before else set()
        for member in team.members:
            if member.principal not in was_members:
                out.append(
                    finding(
                        "MEMBER_ADDED",
                        "medium",
                        f"team {name}: member {member.principal} added; they may submit "
                        f"at {', '.join(team.directLevels)}"
                        + (
                            f" and request {', '.join(team.approvalLevels)}"
                            if team.approvalLevels
                            else ""
                        ),
                    )
                )
        for approver in team.approvers:
            if before is None or approver not in before.approvers:
                out.append(
                    finding(
                        "APPROVER_ADDED",
                        "high",
                        f"team {name}: approver {approver} added; they may approve the "
                        "team's escalations",
                    )
                )
        top_old, top_new = _top_direct(old, name), _top_direct(new, name)
        if top_new is not None and (top_old is None or top_new > top_old):
            levels = ", ".join(team.directLevels)
            out.append(
                finding(
                    "DIRECT_LEVEL_RAISED",
                    "high",
                    f"team {name}: may now set schedulingPriority {top_new} without approval "
                    f"(was {'nothing' if top_old is None else top_old}; direct levels {levels})",
                )
            )
        added = [
            lv for lv in team.approvalLevels if before is None or lv not in before.approvalLevels
        ]
        if added:
            out.append(
                finding(
                    "APPROVAL_LEVEL_ADDED",
                    "medium",
                    f"team {name}: may now request {', '.join(added)} (approved in Slack)",
                )
            )
        if before is not None:
            b, a = before.escalationBudget, team.escalationBudget
            if a.count / a.periodSeconds > b.count / b.periodSeconds:
                out.append(
                    finding(
                        "ESCALATION_BUDGET_RAISED",
                        "medium",
                        f"team {name}: escalation budget {b.count} per {b.periodSeconds} s "
                        f"-> {a.count} per {a.periodSeconds} s",
                    )
                )
        roles = [r for r in team.executionRoles if before is None or r not in before.executionRoles]
        if roles:
            out.append(
                finding(
                    "EXECUTION_ROLE_ADDED",
                    "medium",
                    f"team {name}: jobs may now run as {', '.join(roles)}",
                )
            )
    return out


def share_approvers_added(old: Policy, new: Policy) -> list[dict[str, str]]:
    """Approvers added to a quota share (they approve escalations of every team there)."""
    out: list[dict[str, str]] = []
    for share in new.quotaShares:
        try:
            was = set(old.share(share.quotaShareName).approvers)
        except KeyError:
            was = set()
        out += [
            finding(
                "APPROVER_ADDED",
                "high",
                f"quota share {share.quotaShareName}: approver {a} added; they may approve "
                "escalations of every team using the share",
            )
            for a in share.approvers
            if a not in was
        ]
    return out


def policy_change_findings(
    old: Policy, new: Policy, usage: Mapping[str, ShareUsage] | None = None
) -> list[dict[str, str]]:
    """The risk findings of changing the governance policy from ``old`` to ``new``.

    The share rules of this module run on each share the new policy declares, its
    configuration in ``old`` (None for a new share) against ``new``; ``usage`` gives a
    share's measured use, else the share is taken as using its whole former limit
    (:meth:`ShareUsage.full`), so a capacity cut of a full ``RESERVE`` share is
    ``high``. Then the rights teams and shares gain. Order: shares (policy order), then
    teams, then share approvers.
    """
    out: list[dict[str, str]] = []
    for share in new.quotaShares:
        name = share.quotaShareName
        after = quota_share_configuration(share.batch_configuration())
        try:
            before: dict[str, Any] | None = quota_share_configuration(
                old.share(name).batch_configuration()
            )
        except KeyError:
            before = None
        if before == after:
            continue
        used = (usage or {}).get(name) or ShareUsage.full(before)
        out += lowered_below_use(name, before, after, used)
        out += away_from_reserve(name, before, after)
        out += borrow_raised(name, before, after)
        out += in_share_preemption_without_checkpoints(name, before, after, new)
    out += team_rights_gained(old, new)
    out += share_approvers_added(old, new)
    return out


def invalid_policy(faults: list[str]) -> list[dict[str, str]]:
    """The new policy document is not valid: every function refuses to load it."""
    shown = "; ".join(faults[:5]) + (f" (and {len(faults) - 5} more)" if len(faults) > 5 else "")
    return [
        finding(
            "POLICY_INVALID",
            "high",
            f"the new policy is invalid ({len(faults)} fault(s)): {shown}; functions that load "
            "it fail until it is fixed",
        )
    ]
