"""Loading and validating a governance policy, reporting every fault with its path.

Paths use dots for mappings and ``[i]`` for lists, as ``quotaShares[2].capacityLimits``
or ``workloadClasses.exploratory.shares[1]``. Rules: the models in
:mod:`quotagov.policy.models` (types, ranges) and the cross-references below.

Every fault is reported in one run: when the models refuse parts of the document, the
cross-field rules still run on every part they can read (:func:`_partial_policy`): an
item the models refuse keeps its readable fields (each validated alone), a rule that
needs one of its refused fields is skipped for it, and a reference to a part that exists
but is itself faulty is not reported again as unknown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, TypeVar, get_origin

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from quotagov.policy.models import (
    MAX_CAPACITY_LIMITS_PER_SHARE,
    MAX_SCHEDULING_PRIORITY,
    MAX_SHARES_PER_QUEUE,
    MIN_SCHEDULING_PRIORITY,
    Policy,
    PriorityLevel,
    QuotaShare,
    Team,
    WorkloadClass,
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


@dataclass
class _Faulty:
    """Names of parts the models refused: they exist, so references to them are not
    "unknown" (their own faults are reported already)."""

    shares: set[str] = field(default_factory=set)
    levels: set[str] = field(default_factory=set)
    classes: set[str] = field(default_factory=set)
    job_queue: bool = False
    #: (kind, name) -> fields of that item the models refused (kind: share, level,
    #: class, team); a rule that reads one of them is skipped for the item
    fields: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    #: list -> document index of each item kept in the partial policy's list
    positions: dict[str, list[int]] = field(default_factory=dict)

    def bad(self, kind: str, name: str, field_name: str) -> bool:
        """Whether the models refused ``field_name`` of the ``kind`` item ``name``."""
        return field_name in self.fields.get((kind, name), frozenset())

    def in_document(self, fault: str) -> str:
        """``fault`` with a kept item's list index turned back into its document index."""
        match = _LIST_ITEM.match(fault)
        if match is None or match["list"] not in self.positions:
            return fault
        index = self.positions[match["list"]][int(match["index"])]
        return f"{match['list']}[{index}]{fault[match.end() :]}"


_LIST_ITEM = re.compile(r"^(?P<list>quotaShares|priorityLevels)\[(?P<index>\d+)\]")


def _cross_reference_faults(policy: Policy, faulty: _Faulty | None = None) -> list[str]:
    """Every fault the models cannot see alone: names that must match, Batch's limits."""
    faulty = faulty or _Faulty()
    return [
        *_queue_faults(policy, faulty),
        *_share_faults(policy),
        *_level_faults(policy),
        *_class_faults(policy, faulty),
        *_team_faults(policy, faulty),
        *_role_faults(policy),
    ]


def _queue_faults(policy: Policy, faulty: _Faulty) -> list[str]:
    """``jobQueue`` names a queue; the queue holds at most 20 shares."""
    faults: list[str] = []
    if not faulty.job_queue and not _JOB_QUEUE.match(policy.jobQueue):
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
        if (
            sharing is not None  # None: refused by the models, reported already
            and sharing.borrowLimit is not None
            and sharing.strategy != "LEND_AND_BORROW"
        ):
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
        if level.schedulingPriority is None:  # refused by the models, reported already
            continue
        if not MIN_SCHEDULING_PRIORITY <= level.schedulingPriority <= MAX_SCHEDULING_PRIORITY:
            faults.append(
                f"priorityLevels[{i}].schedulingPriority: {level.schedulingPriority} is outside "
                f"Batch's range {MIN_SCHEDULING_PRIORITY}-{MAX_SCHEDULING_PRIORITY}"
            )
    return faults


def _class_faults(policy: Policy, faulty: _Faulty) -> list[str]:
    """Each class's shares exist, fit its checkpointing and instance types; reclassify
    has a next share."""
    faults: list[str] = []
    share_names = [s.quotaShareName for s in policy.quotaShares]
    for cname, wclass in policy.workloadClasses.items():
        for j, sname in enumerate(wclass.shares):
            where = f"workloadClasses.{cname}.shares[{j}]"
            if sname not in share_names:
                if sname not in faulty.shares:
                    faults.append(f"{where}: unknown share {sname!r}")
                continue
            share = policy.share(sname)
            preemption = share.preemptionConfiguration  # None: refused, reported already
            if (
                wclass.checkpointRequired is False
                and preemption is not None
                and preemption.inSharePreemption == "ENABLED"
            ):
                faults.append(
                    f"{where}: class {cname!r} does not require checkpointing but share "
                    f"{sname!r} has in-share preemption ENABLED"
                )
            faults += [
                f"{where}: share {sname!r} has no capacity limit for instance type {t!r} "
                f"of class {cname!r}"
                for t in wclass.instanceTypes
                if share.limit_for(t) is None and not faulty.bad("share", sname, "capacityLimits")
            ]
        disposition = wclass.onRetriesExhausted  # None: refused, reported already
        if (
            disposition is not None
            and disposition.action == "reclassify"
            and len(wclass.shares) < 2
            and not faulty.bad("class", cname, "shares")
        ):
            faults.append(
                f"workloadClasses.{cname}.onRetriesExhausted.action: reclassify needs a next "
                f"share, but the class lists only {wclass.shares}"
            )
    return faults


def _team_faults(policy: Policy, faulty: _Faulty) -> list[str]:
    """Each team's classes and levels exist; no member listed twice; with approval levels,
    every member has a ``slackUserId``.

    The four-eyes rule of an approval (the approver is not the requester) compares Slack
    user ids, so a member without one could never have an escalation approved: the
    request would be refused only when it is made (``governance.escalations.checks``).
    """
    faults: list[str] = []
    level_names = {level.name for level in policy.priorityLevels} | faulty.levels
    for tname, team in policy.teams.items():
        for j, cname in enumerate(team.classes):
            if cname not in policy.workloadClasses and cname not in faulty.classes:
                faults.append(f"teams.{tname}.classes[{j}]: unknown workload class {cname!r}")
        for kind in ("directLevels", "approvalLevels"):
            for j, lname in enumerate(getattr(team, kind)):
                if lname not in level_names:
                    faults.append(f"teams.{tname}.{kind}[{j}]: unknown priority level {lname!r}")
        if team.approvalLevels:
            faults += [
                f"teams.{tname}.members[{j}].slackUserId: required, team {tname!r} has "
                f"approvalLevels ({', '.join(team.approvalLevels)}) and approvals check the "
                "requester's Slack user id"
                for j, member in enumerate(team.members)
                if not member.slackUserId
            ]
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
        faults = [f"{_path(tuple(e['loc']))}: {e['msg']}" for e in exc.errors()]
        partial, faulty = _partial_policy(data)
        crossed = [faulty.in_document(f) for f in _cross_reference_faults(partial, faulty)]
        raise PolicyError(faults + crossed) from None
    faults = _cross_reference_faults(policy)
    if faults:
        raise PolicyError(faults)
    return policy


_M = TypeVar("_M", bound=BaseModel)


@cache
def _field_adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """A validator for one field of ``model`` alone, with the field's constraints."""
    info = model.model_fields[name]
    annotation: Any = info.annotation
    if info.metadata:
        annotation = Annotated[annotation, *info.metadata]
    return TypeAdapter(annotation)


def _salvaged(model: type[_M], item: Any) -> tuple[_M | None, frozenset[str]]:
    """``item`` as ``model`` keeping every field the models accept, and the refused ones.

    A valid item comes back validated. For a faulty one, each top-level field is
    validated alone; a refused (or missing required) field becomes an empty list or
    mapping for a collection, None otherwise, so rules reading it see nothing to check.
    The result is built with ``model_construct`` (no validation) and is only read by the
    cross-field rules. Not a mapping: ``(None, frozenset())``.
    """
    if not isinstance(item, Mapping):
        return None, frozenset()
    try:
        return model.model_validate(item), frozenset()
    except ValidationError as exc:
        refused = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
    values: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if name in item and name not in refused:
            try:
                values[name] = _field_adapter(model, name).validate_python(item[name])
                continue
            except ValidationError:
                refused.add(name)
        if name in refused or info.is_required():
            refused.add(name)
            origin = get_origin(info.annotation)
            values[name] = [] if origin is list else {} if origin is dict else None
    return model.model_construct(**values), frozenset(refused & set(model.model_fields))


def _partial_policy(data: Mapping[str, Any]) -> tuple[Policy, _Faulty]:
    """Every part of ``data`` the cross-field rules can read, as a policy, and what the
    models refused.

    Items keep their readable fields (:func:`_salvaged`); an item whose name cannot be
    read is left out (nothing can refer to it). Used only to run the cross-field rules on
    a document the models refused; the result is never used as a policy.
    """
    faulty = _Faulty()

    def items(key: str) -> list[Any]:
        value = data.get(key)
        return value if isinstance(value, list) else []

    def entries(key: str) -> dict[str, Any]:
        value = data.get(key)
        return {str(k): v for k, v in value.items()} if isinstance(value, Mapping) else {}

    def name_of(item: Any, key: str) -> str | None:
        value = item.get(key) if isinstance(item, Mapping) else None
        return value if isinstance(value, str) else None

    def listed(key: str, model: type[_M], name_key: str, kind: str, names: set[str]) -> list[_M]:
        kept: list[_M] = []
        faulty.positions[key] = []
        for i, item in enumerate(items(key)):
            value, refused = _salvaged(model, item)
            name = name_of(item, name_key)
            if value is None or name is None or name_key in refused:
                if name is not None:
                    names.add(name)
                continue
            if refused:
                names.add(name)
                faulty.fields[(kind, name)] = refused
            kept.append(value)
            faulty.positions[key].append(i)
        return kept

    def named(key: str, model: type[_M], kind: str, names: set[str]) -> dict[str, _M]:
        kept: dict[str, _M] = {}
        for name, item in entries(key).items():
            value, refused = _salvaged(model, item)
            if value is None:
                names.add(name)
                continue
            if refused:
                names.add(name)
                faulty.fields[(kind, name)] = refused
            kept[name] = value
        return kept

    shares = listed("quotaShares", QuotaShare, "quotaShareName", "share", faulty.shares)
    levels = listed("priorityLevels", PriorityLevel, "name", "level", faulty.levels)
    classes = named("workloadClasses", WorkloadClass, "class", faulty.classes)
    teams = named("teams", Team, "team", set())
    job_queue = data.get("jobQueue")
    faulty.job_queue = not isinstance(job_queue, str) or not job_queue
    partial = Policy.model_construct(
        jobQueue=job_queue if isinstance(job_queue, str) else "",
        quotaShares=shares,
        priorityLevels=levels,
        workloadClasses=classes,
        teams=teams,
    )
    return partial, faulty


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
