"""The difference between two governance policies, in governance terms.

One change is one right or setting that moved: who gains or loses a right (a member,
an approver, a direct or approval level, an escalation budget, an execution role, a
workload class) and what a share or class now does (capacity limits, strategy, borrow
limit, in-share preemption, state; a class's shares, checkpointing, retries and
disposition). ``quotagov policy review`` and the audit of a change to the policy
parameter show the same list (:func:`policy_difference`); the risk findings of the
same change are :func:`quotagov.governance.audit.findings.policy_change_findings`.

A change is ``{path, change, item, before, after, text}``:

- ``path``: where in the policy document, as ``teams.research.directLevels`` or
  ``quotaShares.reserved.capacityLimits[ml.g5.xlarge]`` (shares and levels by name);
- ``change``: ``added``, ``removed`` or ``changed``;
- ``item``: what was added or removed in a list (a principal, a Slack user id, a level
  name, a role pattern), else None;
- ``before``/``after``: the values (None on the side where the item is absent);
- ``text``: one line for a person.

Changes are in document order: top-level settings, quota shares, priority levels,
workload classes, teams; within each, by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from quotagov.policy import Policy
from quotagov.policy.models import QuotaShare, Team, WorkloadClass


def _change(
    path: str, change: str, text: str, before: Any = None, after: Any = None, item: Any = None
) -> dict[str, Any]:
    return {
        "path": path,
        "change": change,
        "item": item,
        "before": before,
        "after": after,
        "text": text,
    }


def _listed(
    path: str, who: str, what: str, old: Sequence[str], new: Sequence[str], show: Any = None
) -> list[dict[str, Any]]:
    """Items added to or removed from a list (order ignored)."""
    out = []
    label = show or (lambda item: item)
    for item in new:
        if item not in old:
            out.append(_change(path, "added", f"{who}: {what} {label(item)} added", item=item))
    for item in old:
        if item not in new:
            out.append(_change(path, "removed", f"{who}: {what} {label(item)} removed", item=item))
    return out


def _value(path: str, who: str, what: str, old: Any, new: Any) -> list[dict[str, Any]]:
    if old == new:
        return []
    return [_change(path, "changed", f"{who}: {what} {old} -> {new}", before=old, after=new)]


def _share(name: str, old: QuotaShare | None, new: QuotaShare | None) -> list[dict[str, Any]]:
    path = f"quotaShares.{name}"
    who = f"quota share {name}"
    if old is None and new is not None:
        config = new.batch_configuration()
        return [_change(path, "added", f"{who} added", after=config, item=name)]
    if new is None and old is not None:
        config = old.batch_configuration()
        return [_change(path, "removed", f"{who} removed", before=config, item=name)]
    assert old is not None and new is not None
    out: list[dict[str, Any]] = []
    old_limits = {c.capacityUnit: c.maxCapacity for c in old.capacityLimits}
    new_limits = {c.capacityUnit: c.maxCapacity for c in new.capacityLimits}
    for unit in sorted(set(old_limits) | set(new_limits)):
        was, now = old_limits.get(unit), new_limits.get(unit)
        if was != now:
            out.append(
                _change(
                    f"{path}.capacityLimits[{unit}]",
                    "added" if was is None else "removed" if now is None else "changed",
                    f"{who}: {unit} capacity limit {was if was is not None else 'none'} -> "
                    f"{now if now is not None else 'none'} instances",
                    before=was,
                    after=now,
                    item=unit,
                )
            )
    old_sharing, new_sharing = old.resourceSharingConfiguration, new.resourceSharingConfiguration
    out += _value(
        f"{path}.resourceSharingConfiguration.strategy",
        who,
        "strategy",
        old_sharing.strategy,
        new_sharing.strategy,
    )
    out += _value(
        f"{path}.resourceSharingConfiguration.borrowLimit",
        who,
        "borrow limit (%, -1 unlimited)",
        old_sharing.borrowLimit,
        new_sharing.borrowLimit,
    )
    out += _value(
        f"{path}.preemptionConfiguration.inSharePreemption",
        who,
        "in-share preemption",
        old.preemptionConfiguration.inSharePreemption,
        new.preemptionConfiguration.inSharePreemption,
    )
    out += _value(f"{path}.state", who, "state", old.state, new.state)
    out += _listed(f"{path}.approvers", who, "approver", old.approvers, new.approvers)
    out += _value(
        f"{path}.approvalChannel", who, "approval channel", old.approvalChannel, new.approvalChannel
    )
    return out


def _class(name: str, old: WorkloadClass | None, new: WorkloadClass | None) -> list[dict[str, Any]]:
    path = f"workloadClasses.{name}"
    who = f"workload class {name}"
    if old is None and new is not None:
        return [_change(path, "added", f"{who} added", after=new.model_dump(), item=name)]
    if new is None and old is not None:
        return [_change(path, "removed", f"{who} removed", before=old.model_dump(), item=name)]
    assert old is not None and new is not None
    out: list[dict[str, Any]] = []
    out += _value(f"{path}.shares", who, "shares", old.shares, new.shares)
    out += _value(
        f"{path}.checkpointRequired",
        who,
        "checkpointing required",
        old.checkpointRequired,
        new.checkpointRequired,
    )
    out += _value(
        f"{path}.preemptionRetriesBeforeTermination",
        who,
        "preemption retries before termination",
        old.preemptionRetriesBeforeTermination,
        new.preemptionRetriesBeforeTermination,
    )
    out += _value(
        f"{path}.onRetriesExhausted",
        who,
        "disposition on retries exhausted",
        old.onRetriesExhausted.model_dump(),
        new.onRetriesExhausted.model_dump(),
    )
    out += _value(
        f"{path}.thrashGuard",
        who,
        "thrash guard",
        None if old.thrashGuard is None else old.thrashGuard.model_dump(),
        None if new.thrashGuard is None else new.thrashGuard.model_dump(),
    )
    out += _listed(
        f"{path}.instanceTypes", who, "instance type", old.instanceTypes, new.instanceTypes
    )
    out += _value(
        f"{path}.maxInstanceCount",
        who,
        "largest instance count",
        old.maxInstanceCount,
        new.maxInstanceCount,
    )
    out += _listed(
        f"{path}.executionRoles", who, "execution role", old.executionRoles, new.executionRoles
    )
    return out


def _level_label(policy: Policy) -> Any:
    def show(name: str) -> str:
        try:
            return f"{name} ({policy.level(name).schedulingPriority})"
        except KeyError:
            return name

    return show


def _team(
    name: str, old: Team | None, new: Team | None, old_policy: Policy, new_policy: Policy
) -> list[dict[str, Any]]:
    path = f"teams.{name}"
    who = f"team {name}"
    empty = Team.model_construct(classes=[], directLevels=[])  # compared with, not used
    if old is None and new is not None:
        out = [_change(path, "added", f"{who} added", item=name)]
        old = empty
    elif new is None and old is not None:
        out = [_change(path, "removed", f"{who} removed", item=name)]
        new = empty
    else:
        out = []
    assert old is not None and new is not None
    old_members = {m.principal: m.slackUserId for m in old.members}
    new_members = {m.principal: m.slackUserId for m in new.members}

    def member(principal: str) -> str:
        slack = new_members.get(principal) or old_members.get(principal)
        return principal + (f" (Slack {slack})" if slack else "")

    out += _listed(
        f"{path}.members", who, "member", list(old_members), list(new_members), show=member
    )
    for principal in new_members:
        if principal in old_members and old_members[principal] != new_members[principal]:
            out.append(
                _change(
                    f"{path}.members",
                    "changed",
                    f"{who}: member {principal} Slack user id {old_members[principal]} -> "
                    f"{new_members[principal]}",
                    before=old_members[principal],
                    after=new_members[principal],
                    item=principal,
                )
            )
    out += _listed(f"{path}.classes", who, "workload class", old.classes, new.classes)
    levels = _level_label(new_policy)
    gone = _level_label(old_policy)
    for kind, what in (("directLevels", "direct level"), ("approvalLevels", "approval level")):
        was, now = getattr(old, kind), getattr(new, kind)
        added = _listed(f"{path}.{kind}", who, what, [], [x for x in now if x not in was], levels)
        removed = _listed(f"{path}.{kind}", who, what, [x for x in was if x not in now], [], gone)
        out += added + removed
    out += _listed(f"{path}.approvers", who, "approver", old.approvers, new.approvers)
    budget_old, budget_new = old.escalationBudget, new.escalationBudget
    if budget_old != budget_new:
        out.append(
            _change(
                f"{path}.escalationBudget",
                "changed",
                f"{who}: escalation budget {budget_old.count} per {budget_old.periodSeconds} s"
                f" -> {budget_new.count} per {budget_new.periodSeconds} s",
                before=budget_old.model_dump(),
                after=budget_new.model_dump(),
            )
        )
    out += _listed(
        f"{path}.executionRoles", who, "execution role", old.executionRoles, new.executionRoles
    )
    out += _value(
        f"{path}.notifications",
        who,
        "owner notifications",
        old.notifications.model_dump(),
        new.notifications.model_dump(),
    )
    return out


def _names(old: Iterable[str], new: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*old, *new]))


def policy_difference(old: Policy, new: Policy) -> list[dict[str, Any]]:
    """Every governance change from ``old`` to ``new`` (shape in the module docstring).

    Both policies are valid (:func:`quotagov.policy.load_policy`); an empty list means
    they govern alike (formatting, comments and order of lists may still differ).
    """
    out: list[dict[str, Any]] = []
    out += _value("jobQueue", "policy", "job queue", old.jobQueue, new.jobQueue)
    out += _value(
        "escalationExpirySeconds",
        "policy",
        "escalation expiry (s)",
        old.escalationExpirySeconds,
        new.escalationExpirySeconds,
    )
    old_shares = {s.quotaShareName: s for s in old.quotaShares}
    new_shares = {s.quotaShareName: s for s in new.quotaShares}
    for name in _names(old_shares, new_shares):
        out += _share(name, old_shares.get(name), new_shares.get(name))
    old_levels = {lv.name: lv.schedulingPriority for lv in old.priorityLevels}
    new_levels = {lv.name: lv.schedulingPriority for lv in new.priorityLevels}
    for name in _names(old_levels, new_levels):
        was, now = old_levels.get(name), new_levels.get(name)
        if was != now:
            change = "added" if was is None else "removed" if now is None else "changed"
            out.append(
                _change(
                    f"priorityLevels.{name}.schedulingPriority",
                    change,
                    f"priority level {name}: schedulingPriority {was} -> {now}",
                    before=was,
                    after=now,
                    item=name,
                )
            )
    for name in _names(old.workloadClasses, new.workloadClasses):
        out += _class(name, old.workloadClasses.get(name), new.workloadClasses.get(name))
    for name in _names(old.teams, new.teams):
        out += _team(name, old.teams.get(name), new.teams.get(name), old, new)
    return out
