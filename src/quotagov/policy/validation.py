"""Loading and validating a governance policy, reporting every fault with its path.

Paths use dots for mappings and ``[i]`` for lists, as ``quotaShares[2].capacityLimits``
or ``workloadClasses.exploratory.shares[1]``. Rules: the models in
:mod:`quotagov.policy.models` (types, ranges) and the cross-references below.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml
from pydantic import ValidationError

from quotagov.policy.models import (
    MAX_CAPACITY_LIMITS_PER_SHARE,
    MAX_SCHEDULING_PRIORITY,
    MAX_SHARES_PER_QUEUE,
    MIN_SCHEDULING_PRIORITY,
    Policy,
)
from quotagov.policy.roles import role_pattern_fault


class PolicyError(ValueError):
    """The policy document is invalid.

    Attributes:
        faults: one message per fault, each starting with the field path.
    """

    def __init__(self, faults: list[str]) -> None:
        super().__init__("invalid policy:\n" + "\n".join(f"  {f}" for f in faults))
        self.faults = faults


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(document)"


#: A job queue ARN (``arn:<partition>:batch:<region>:<account>:job-queue/<name>``) or a
#: bare name (up to 128 letters, digits, hyphens and underscores), as Batch accepts in
#: ``jobQueue`` (botocore ``batch`` model; AWS Batch User Guide, "Job queues").
_JOB_QUEUE = re.compile(
    r"^(arn:aws[a-z-]*:batch:[a-z0-9-]+:\d{12}:job-queue/[A-Za-z0-9_-]{1,128}"
    r"|[A-Za-z0-9_-]{1,128})$"
)


def _cross_reference_faults(policy: Policy) -> list[str]:
    """Every fault the models cannot see alone: names that must match, Batch's limits."""
    return [
        *_queue_faults(policy),
        *_share_faults(policy),
        *_level_faults(policy),
        *_class_faults(policy),
        *_team_faults(policy),
        *_role_faults(policy),
    ]


def _queue_faults(policy: Policy) -> list[str]:
    """``jobQueue`` names a queue; the queue holds at most 20 shares."""
    faults: list[str] = []
    if not _JOB_QUEUE.match(policy.jobQueue):
        faults.append(
            f"jobQueue: {policy.jobQueue!r} is neither a job queue ARN "
            "(arn:aws:batch:<region>:<account>:job-queue/<name>) nor a job queue name"
        )
    if len(policy.quotaShares) > MAX_SHARES_PER_QUEUE:
        faults.append(
            f"quotaShares: {len(policy.quotaShares)} shares, "
            f"a job queue holds at most {MAX_SHARES_PER_QUEUE}"
        )
    return faults


def _share_faults(policy: Policy) -> list[str]:
    """Share names unique; capacity limits few and one per unit; borrowLimit only to borrow."""
    faults: list[str] = []
    seen: set[str] = set()
    for i, share in enumerate(policy.quotaShares):
        if share.quotaShareName in seen:
            faults.append(
                f"quotaShares[{i}].quotaShareName: share {share.quotaShareName!r} is named twice"
            )
        seen.add(share.quotaShareName)
        if len(share.capacityLimits) > MAX_CAPACITY_LIMITS_PER_SHARE:
            faults.append(
                f"quotaShares[{i}].capacityLimits: {len(share.capacityLimits)} limits, "
                f"a share holds at most {MAX_CAPACITY_LIMITS_PER_SHARE}"
            )
        units = [c.capacityUnit for c in share.capacityLimits]
        for j, unit in enumerate(units):
            if unit in units[:j]:
                faults.append(
                    f"quotaShares[{i}].capacityLimits[{j}].capacityUnit: {unit!r} is listed twice"
                )
        sharing = share.resourceSharingConfiguration
        if sharing.borrowLimit is not None and sharing.strategy != "LEND_AND_BORROW":
            faults.append(
                f"quotaShares[{i}].resourceSharingConfiguration.borrowLimit: only valid with "
                f"strategy LEND_AND_BORROW, not {sharing.strategy}"
            )
    return faults


def _level_faults(policy: Policy) -> list[str]:
    """Level names unique; each ``schedulingPriority`` within Batch's range."""
    faults: list[str] = []
    level_names: list[str] = []
    for i, level in enumerate(policy.priorityLevels):
        if level.name in level_names:
            faults.append(f"priorityLevels[{i}].name: level {level.name!r} is named twice")
        level_names.append(level.name)
        if not MIN_SCHEDULING_PRIORITY <= level.schedulingPriority <= MAX_SCHEDULING_PRIORITY:
            faults.append(
                f"priorityLevels[{i}].schedulingPriority: {level.schedulingPriority} is outside "
                f"Batch's range {MIN_SCHEDULING_PRIORITY}-{MAX_SCHEDULING_PRIORITY}"
            )
    return faults


def _class_faults(policy: Policy) -> list[str]:
    """Each class's shares exist, fit its checkpointing and instance types; reclassify
    has a next share."""
    faults: list[str] = []
    share_names = [s.quotaShareName for s in policy.quotaShares]
    for cname, wclass in policy.workloadClasses.items():
        for j, sname in enumerate(wclass.shares):
            where = f"workloadClasses.{cname}.shares[{j}]"
            if sname not in share_names:
                faults.append(f"{where}: unknown share {sname!r}")
                continue
            share = policy.share(sname)
            if (
                not wclass.checkpointRequired
                and share.preemptionConfiguration.inSharePreemption == "ENABLED"
            ):
                faults.append(
                    f"{where}: class {cname!r} does not require checkpointing but share "
                    f"{sname!r} has in-share preemption ENABLED"
                )
            faults += [
                f"{where}: share {sname!r} has no capacity limit for instance type {t!r} "
                f"of class {cname!r}"
                for t in wclass.instanceTypes
                if share.limit_for(t) is None
            ]
        if wclass.onRetriesExhausted.action == "reclassify" and len(wclass.shares) < 2:
            faults.append(
                f"workloadClasses.{cname}.onRetriesExhausted.action: reclassify needs a next "
                f"share, but the class lists only {wclass.shares}"
            )
    return faults


def _team_faults(policy: Policy) -> list[str]:
    """Each team's classes and levels exist; no member listed twice."""
    faults: list[str] = []
    level_names = {level.name for level in policy.priorityLevels}
    for tname, team in policy.teams.items():
        for j, cname in enumerate(team.classes):
            if cname not in policy.workloadClasses:
                faults.append(f"teams.{tname}.classes[{j}]: unknown workload class {cname!r}")
        for field in ("directLevels", "approvalLevels"):
            for j, lname in enumerate(getattr(team, field)):
                if lname not in level_names:
                    faults.append(f"teams.{tname}.{field}[{j}]: unknown priority level {lname!r}")
        principals = [m.principal for m in team.members]
        for j, principal in enumerate(principals):
            if principal in principals[:j]:
                faults.append(
                    f"teams.{tname}.members[{j}].principal: {principal!r} is listed twice"
                )
    return faults


def _role_faults(policy: Policy) -> list[str]:
    """Every ``executionRoles`` entry is an IAM role ARN or a bounded pattern
    (:func:`quotagov.policy.roles.role_pattern_fault`)."""
    owners = [(f"teams.{name}", team.executionRoles) for name, team in policy.teams.items()]
    owners += [
        (f"workloadClasses.{name}", c.executionRoles) for name, c in policy.workloadClasses.items()
    ]
    faults: list[str] = []
    for where, patterns in owners:
        for j, pattern in enumerate(patterns):
            fault = role_pattern_fault(pattern)
            if fault is not None:
                faults.append(f"{where}.executionRoles[{j}]: {fault}")
    return faults


def parse_policy(data: Mapping[str, Any]) -> Policy:
    """Validate a policy given as a mapping.

    Raises:
        PolicyError: listing every fault with its path.
    """
    try:
        policy = Policy.model_validate(data)
    except ValidationError as exc:
        raise PolicyError([f"{_path(tuple(e['loc']))}: {e['msg']}" for e in exc.errors()]) from None
    faults = _cross_reference_faults(policy)
    if faults:
        raise PolicyError(faults)
    return policy


def load_policy(text: str) -> Policy:
    """Parse and validate a policy from YAML (JSON is YAML too).

    Raises:
        PolicyError: for a document that is not YAML, not a mapping, or invalid.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PolicyError([f"(document): not valid YAML: {exc}"]) from None
    if not isinstance(data, Mapping):
        raise PolicyError(["(document): a policy must be a mapping"])
    return parse_policy(data)
