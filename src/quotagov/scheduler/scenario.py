"""Scenario files: loading (JSON or YAML) and validation with one message per fault.

Format: ``../shared/spec/scenario-format.md`` ("Input"). Every fault is reported, each
message starting with the field path, as ``jobs[3].quotaShareName: unknown share 'gpu'``;
:class:`ScenarioError` carries them all. Nothing runs unless the whole scenario is valid.

Checks: types and required fields; unknown fields; unknown share or job; instance type
not in the share's capacity limits (as in effect at the job's ``submittedAt``, after the
``UpdateQuotaShare`` actions up to that time); more than 20 shares; fewer than 1 or
more than 5 capacity limits; ``borrowLimit`` on a share that is not LEND_AND_BORROW or
below -1; negative times or counts; ``schedulingPriority`` outside 0-9999; duplicate
names; an action on a job before the job is submitted (actions run before
submissions at the same time).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from quotagov.batch_semantics import unschedulable_reason
from quotagov.scheduler.models import (
    IN_SHARE_PREEMPTION_VALUES,
    MAX_SHARES,
    QUEUEING_VALUES,
    SHARE_STATES,
    STRATEGIES,
    JobSpec,
    Options,
    ShareConfig,
)
from quotagov.scheduler.rules import MAX_SCHEDULING_PRIORITY, share_faults

ACTION_TYPES: tuple[str, ...] = ("UpdateServiceJob", "UpdateQuotaShare", "TerminateServiceJob")
_SHARE_UPDATE_FIELDS = (
    "capacityLimits",
    "resourceSharingConfiguration",
    "preemptionConfiguration",
    "state",
)


class ScenarioError(ValueError):
    """The scenario is invalid.

    Attributes:
        faults: one message per fault, each starting with the field path.
    """

    def __init__(self, faults: list[str]) -> None:
        super().__init__("invalid scenario:\n" + "\n".join(f"  {f}" for f in faults))
        self.faults = faults


@dataclass(frozen=True, slots=True)
class ScenarioAction:
    """One entry of ``actions``: ``type`` at time ``at`` with its Batch-shaped ``fields``."""

    at: float
    type: str
    fields: Mapping[str, Any]
    index: int = 0


@dataclass(frozen=True, slots=True)
class Scenario:
    """A validated scenario."""

    name: str
    capacity: dict[str, int]
    options: Options
    shares: list[ShareConfig]
    jobs: list[JobSpec]
    actions: list[ScenarioAction] = field(default_factory=list)
    #: With ``allow_unschedulable``: the jobs that can never be admitted, by name, with
    #: the reason (they stay RUNNABLE, never head their share, and are reported
    #: UNSCHEDULABLE).
    unschedulable: dict[str, str] = field(default_factory=dict)


# -- loading -----------------------------------------------------------------------------


def _parse_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScenarioError([f"(document): not valid JSON or YAML ({exc})"]) from exc


def _looks_like_path(text: str) -> bool:
    """A one-line string naming an existing file or ending in .json/.yaml/.yml."""
    if "\n" in text or text.lstrip().startswith(("{", "[")):
        return False
    if text.endswith((".json", ".yaml", ".yml")):
        return True
    try:
        return Path(text).is_file()
    except OSError:
        return False


def load_scenario(
    source: str | os.PathLike[str] | Mapping[str, Any], allow_unschedulable: bool = False
) -> Scenario:
    """Load and validate a scenario.

    Args:
        source: a path to a ``.json``/``.yaml``/``.yml`` file, the document's text, or
            the already-parsed mapping. A ``str`` is read as a path when it names an
            existing file, else parsed as text.
        allow_unschedulable: see :func:`validate_scenario`.

    Raises:
        ScenarioError: the document is unreadable or invalid (all faults listed).
    """
    if isinstance(source, Mapping):
        return validate_scenario(source, allow_unschedulable)
    path = Path(source)
    is_path = isinstance(source, os.PathLike) or _looks_like_path(str(source))
    if is_path:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScenarioError([f"(document): cannot read {str(path)!r}: {exc.strerror}"]) from exc
    else:
        text = str(source)
    return validate_scenario(_parse_text(text), allow_unschedulable)


# -- field checks --------------------------------------------------------------------------


class _Checker:
    """Collects faults while reading typed values out of a parsed document."""

    def __init__(self) -> None:
        self.faults: list[str] = []

    def fault(self, path: str, message: str) -> None:
        self.faults.append(f"{path}: {message}")

    def mapping(self, value: Any, path: str) -> Mapping[str, Any] | None:
        if not isinstance(value, Mapping):
            self.fault(path, f"expected a mapping, got {_kind(value)}")
            return None
        return value

    def unknown(self, data: Mapping[str, Any], allowed: tuple[str, ...], path: str) -> None:
        for key in data:
            if key not in allowed:
                self.fault(f"{path}.{key}" if path else str(key), "unknown field")

    def string(self, data: Mapping[str, Any], key: str, path: str) -> str | None:
        if key not in data:
            self.fault(f"{path}.{key}", "required")
            return None
        value = data[key]
        if not isinstance(value, str) or not value:
            self.fault(f"{path}.{key}", f"expected a non-empty string, got {_kind(value)}")
            return None
        return value

    def number(
        self,
        data: Mapping[str, Any],
        key: str,
        path: str,
        default: float | None,
        *,
        nullable: bool = False,
        positive: bool = False,
        required: bool = False,
    ) -> float | None:
        if key not in data:
            if required:
                self.fault(f"{path}.{key}", "required")
            return default
        value = data[key]
        where = f"{path}.{key}" if path else key
        if value is None:
            if nullable:
                return None
            self.fault(where, "must not be null")
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fault(where, f"expected a number, got {_kind(value)}")
            return default
        if not math.isfinite(value):
            self.fault(where, f"{value} is not a finite number")
            return default
        if value < 0:
            self.fault(where, f"{value} is negative")
            return default
        if positive and value == 0:
            self.fault(where, "must be positive (use null for none)")
            return default
        return value

    def integer(
        self,
        data: Mapping[str, Any],
        key: str,
        path: str,
        default: int | None,
        *,
        minimum: int = 0,
        maximum: int | None = None,
        nullable: bool = False,
        required: bool = False,
    ) -> int | None:
        if key not in data:
            if required:
                self.fault(f"{path}.{key}", "required")
            return default
        value = data[key]
        where = f"{path}.{key}"
        if value is None:
            if nullable:
                return None
            self.fault(where, "must not be null")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.fault(where, f"expected an integer, got {_kind(value)}")
            return default
        if value < minimum:
            self.fault(
                where, f"{value} is negative" if minimum == 0 else f"{value} is below {minimum}"
            )
            return default
        if maximum is not None and value > maximum:
            self.fault(where, f"{value} is above {maximum}")
            return default
        return value

    def choice(
        self,
        data: Mapping[str, Any],
        key: str,
        path: str,
        allowed: tuple[str, ...],
        default: str | None,
    ) -> str | None:
        if key not in data:
            if default is None:
                self.fault(f"{path}.{key}", "required")
            return default
        value = data[key]
        if value not in allowed:
            self.fault(f"{path}.{key}", f"{value!r} is not one of {', '.join(allowed)}")
            return default
        return str(value)

    def items(self, data: Mapping[str, Any], key: str, path: str, *, required: bool) -> list[Any]:
        where = f"{path}.{key}" if path else key
        if key not in data or data[key] is None:
            if required:
                self.fault(where, "required")
            return []
        value = data[key]
        if not isinstance(value, list):
            self.fault(where, f"expected a list, got {_kind(value)}")
            return []
        return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"string {value!r}"
    return f"{type(value).__name__} {value!r}"


# -- sections --------------------------------------------------------------------------------


def _capacity_limits(chk: _Checker, raw: Any, path: str) -> list[dict[str, Any]] | None:
    if not isinstance(raw, list):
        chk.fault(path, f"expected a list, got {_kind(raw)}")
        return None
    out: list[dict[str, Any]] = []
    ok = True
    for i, item in enumerate(raw):
        where = f"{path}[{i}]"
        cap = chk.mapping(item, where)
        if cap is None:
            ok = False
            continue
        chk.unknown(cap, ("capacityUnit", "maxCapacity"), where)
        unit = chk.string(cap, "capacityUnit", where)
        before = len(chk.faults)
        maximum = chk.integer(cap, "maxCapacity", where, None, minimum=1, required=True)
        if unit is None or maximum is None or len(chk.faults) != before:
            ok = False
            continue
        out.append({"capacityUnit": unit, "maxCapacity": maximum})
    return out if ok else None


def _sharing(chk: _Checker, raw: Any, path: str) -> dict[str, Any] | None:
    rsc = chk.mapping(raw, path)
    if rsc is None:
        return None
    chk.unknown(rsc, ("strategy", "borrowLimit"), path)
    before = len(chk.faults)
    strategy = chk.choice(rsc, "strategy", path, STRATEGIES, None)
    borrow = -1
    if "borrowLimit" in rsc:
        value = rsc["borrowLimit"]
        if isinstance(value, bool) or not isinstance(value, int):
            chk.fault(f"{path}.borrowLimit", f"expected an integer, got {_kind(value)}")
        else:
            borrow = value
    if strategy is None or len(chk.faults) != before:
        return None
    return {"strategy": strategy, "borrowLimit": borrow}


def _preemption(chk: _Checker, raw: Any, path: str) -> dict[str, Any] | None:
    pc = chk.mapping(raw, path)
    if pc is None:
        return None
    chk.unknown(pc, ("inSharePreemption",), path)
    value = chk.choice(pc, "inSharePreemption", path, IN_SHARE_PREEMPTION_VALUES, None)
    return None if value is None else {"inSharePreemption": value}


def _share(chk: _Checker, raw: Any, path: str) -> ShareConfig | None:
    data = chk.mapping(raw, path)
    if data is None:
        return None
    chk.unknown(data, ("quotaShareName", *_SHARE_UPDATE_FIELDS), path)
    before = len(chk.faults)
    name = chk.string(data, "quotaShareName", path)
    limits = None
    if "capacityLimits" not in data:
        chk.fault(f"{path}.capacityLimits", "required")
    else:
        limits = _capacity_limits(chk, data["capacityLimits"], f"{path}.capacityLimits")
    rsc = None
    if "resourceSharingConfiguration" not in data:
        chk.fault(f"{path}.resourceSharingConfiguration", "required")
    else:
        rsc = _sharing(
            chk, data["resourceSharingConfiguration"], f"{path}.resourceSharingConfiguration"
        )
    pc: dict[str, Any] | None = {"inSharePreemption": "DISABLED"}
    if "preemptionConfiguration" in data:
        pc = _preemption(chk, data["preemptionConfiguration"], f"{path}.preemptionConfiguration")
    state = chk.choice(data, "state", path, SHARE_STATES, "ENABLED")
    if name is None or limits is None or rsc is None or pc is None or len(chk.faults) != before:
        return None
    config = ShareConfig.from_batch(
        {
            "quotaShareName": name,
            "capacityLimits": limits,
            "resourceSharingConfiguration": rsc,
            "preemptionConfiguration": pc,
            "state": state,
        }
    )
    chk.faults += share_faults(config, path)
    return config


def _job(chk: _Checker, raw: Any, path: str) -> JobSpec | None:
    data = chk.mapping(raw, path)
    if data is None:
        return None
    allowed = tuple(JobSpec.__dataclass_fields__)
    chk.unknown(data, allowed, path)
    before = len(chk.faults)
    name = chk.string(data, "jobName", path)
    share = chk.string(data, "quotaShareName", path)
    itype = chk.string(data, "instanceType", path)
    count = chk.integer(data, "instanceCount", path, 1, minimum=1)
    run = chk.number(data, "runSeconds", path, None, nullable=True, required=True)
    prio = chk.integer(data, "schedulingPriority", path, 0, maximum=MAX_SCHEDULING_PRIORITY)
    retries = chk.integer(data, "preemptionRetriesBeforeTermination", path, None, nullable=True)
    interval = chk.number(
        data, "checkpointIntervalSeconds", path, None, nullable=True, positive=True
    )
    overhead = chk.number(data, "restartOverheadSeconds", path, 0)
    submitted = chk.number(data, "submittedAt", path, 0, required=True)
    if name is None or share is None or itype is None or len(chk.faults) != before:
        return None
    return JobSpec(
        jobName=name,
        quotaShareName=share,
        instanceType=itype,
        instanceCount=count if count is not None else 1,
        runSeconds=run,
        schedulingPriority=prio if prio is not None else 0,
        preemptionRetriesBeforeTermination=retries,
        checkpointIntervalSeconds=interval,
        restartOverheadSeconds=overhead if overhead is not None else 0,
        submittedAt=submitted if submitted is not None else 0,
    )


def _action(
    chk: _Checker,
    raw: Any,
    index: int,
    share_names: set[str],
    jobs: Mapping[str, JobSpec],
    job_names: set[str],
) -> ScenarioAction | None:
    path = f"actions[{index}]"
    data = chk.mapping(raw, path)
    if data is None:
        return None
    before = len(chk.faults)
    at = chk.number(data, "at", path, None, required=True)
    kind = chk.choice(data, "type", path, ACTION_TYPES, None)
    fields: dict[str, Any] = {}
    if kind in ("UpdateServiceJob", "TerminateServiceJob"):
        allowed = ("at", "type", "jobName") + (
            ("schedulingPriority",) if kind == "UpdateServiceJob" else ()
        )
        chk.unknown(data, allowed, path)
        name = chk.string(data, "jobName", path)
        if name is not None:
            fields["jobName"] = name
            job = jobs.get(name)
            if name not in job_names:
                chk.fault(f"{path}.jobName", f"unknown job {name!r}")
            elif job is not None and at is not None and at <= job.submittedAt:
                chk.fault(
                    f"{path}.at",
                    f"{at} is not after job {name!r} is submitted ({job.submittedAt}); "
                    "actions run before submissions at the same time",
                )
        if kind == "UpdateServiceJob":
            prio = chk.integer(
                data,
                "schedulingPriority",
                path,
                None,
                maximum=MAX_SCHEDULING_PRIORITY,
                required=True,
            )
            fields["schedulingPriority"] = prio
    elif kind == "UpdateQuotaShare":
        chk.unknown(data, ("at", "type", "quotaShareName", *_SHARE_UPDATE_FIELDS), path)
        name = chk.string(data, "quotaShareName", path)
        if name is not None:
            fields["quotaShareName"] = name
            if name not in share_names:
                chk.fault(f"{path}.quotaShareName", f"unknown share {name!r}")
        if not any(f in data for f in _SHARE_UPDATE_FIELDS):
            chk.fault(
                path,
                "UpdateQuotaShare changes nothing: give at least one of "
                + ", ".join(_SHARE_UPDATE_FIELDS),
            )
        if "capacityLimits" in data:
            fields["capacityLimits"] = _capacity_limits(
                chk, data["capacityLimits"], f"{path}.capacityLimits"
            )
        if "resourceSharingConfiguration" in data:
            fields["resourceSharingConfiguration"] = _sharing(
                chk, data["resourceSharingConfiguration"], f"{path}.resourceSharingConfiguration"
            )
        if "preemptionConfiguration" in data:
            fields["preemptionConfiguration"] = _preemption(
                chk, data["preemptionConfiguration"], f"{path}.preemptionConfiguration"
            )
        if "state" in data:
            fields["state"] = chk.choice(data, "state", path, SHARE_STATES, None)
    if at is None or kind is None or len(chk.faults) != before:
        return None
    return ScenarioAction(at=at, type=kind, fields=fields, index=index)


def _apply_share_update(config: ShareConfig, fields: Mapping[str, Any]) -> ShareConfig:
    data = config.to_batch()
    for key in _SHARE_UPDATE_FIELDS:
        if key in fields:
            data[key] = fields[key]
    return ShareConfig.from_batch(data)


_SECTIONS = ("(document)", "name", "capacity", "options", "shares", "jobs", "actions")


def _fault_order(fault: str) -> tuple[int, int]:
    """Sort key putting faults in document order: section, then list index."""
    head = fault.split(":", 1)[0]
    section = head.split(".", 1)[0].split("[", 1)[0]
    rank = _SECTIONS.index(section) if section in _SECTIONS else len(_SECTIONS)
    index = -1
    if head.startswith(f"{section}["):
        digits = head[len(section) + 1 :].split("]", 1)[0]
        index = int(digits) if digits.isdigit() else -1
    return (rank, index)


def validate_scenario(doc: Any, allow_unschedulable: bool = False) -> Scenario:
    """Validate a parsed scenario document and build the typed :class:`Scenario`.

    A job that can never be admitted (more instances than the environment has of its
    type, or more than its share can hold within quota plus its borrow limit, under
    the share's configuration at its submission and every later one the actions give,
    :func:`~quotagov.batch_semantics.unschedulable_reason`) is a fault naming the job;
    with ``allow_unschedulable`` it is listed in :attr:`Scenario.unschedulable`.

    Raises:
        ScenarioError: one message per fault, each naming the field path.
    """
    chk = _Checker()
    data = chk.mapping(doc, "(document)")
    if data is None:
        raise ScenarioError(chk.faults)
    chk.unknown(data, ("name", "capacity", "options", "shares", "jobs", "actions"), "")
    name = data.get("name", "scenario")
    if not isinstance(name, str):
        chk.fault("name", f"expected a string, got {_kind(name)}")
        name = "scenario"

    capacity: dict[str, int] = {}
    raw_capacity = data.get("capacity")
    if raw_capacity is None:
        chk.fault("capacity", "required")
    elif (cap := chk.mapping(raw_capacity, "capacity")) is not None:
        for unit in cap:
            value = chk.integer(cap, unit, "capacity", None)
            if value is not None:
                capacity[str(unit)] = value

    options = Options()
    if data.get("options") is not None and (opt := chk.mapping(data["options"], "options")):
        chk.unknown(opt, ("startupSeconds", "queueing", "horizonSeconds"), "options")
        startup = chk.number(opt, "startupSeconds", "options", 0)
        queueing = chk.choice(opt, "queueing", "options", QUEUEING_VALUES, "STRICT_FIFO")
        horizon = chk.number(opt, "horizonSeconds", "options", None, nullable=True)
        options = Options(
            startupSeconds=startup if startup is not None else 0,
            queueing="BEST_EFFORT_FIFO" if queueing == "BEST_EFFORT_FIFO" else "STRICT_FIFO",
            horizonSeconds=horizon,
        )

    raw_shares = chk.items(data, "shares", "", required=True)
    if len(raw_shares) > MAX_SHARES:
        chk.fault("shares", f"{len(raw_shares)} shares, a job queue holds at most {MAX_SHARES}")
    shares: dict[str, ShareConfig] = {}
    share_list: list[ShareConfig] = []
    for i, raw in enumerate(raw_shares):
        config = _share(chk, raw, f"shares[{i}]")
        if config is None:
            continue
        if config.quotaShareName in shares:
            chk.fault(f"shares[{i}].quotaShareName", f"duplicate share {config.quotaShareName!r}")
            continue
        shares[config.quotaShareName] = config
        share_list.append(config)

    share_names = {
        r["quotaShareName"] for r in raw_shares if isinstance(r, Mapping) and "quotaShareName" in r
    }
    raw_jobs = chk.items(data, "jobs", "", required=False)
    jobs: dict[str, JobSpec] = {}
    job_list: list[tuple[int, JobSpec]] = []
    seen_jobs: set[str] = set()
    for i, raw in enumerate(raw_jobs):
        spec = _job(chk, raw, f"jobs[{i}]")
        if isinstance(raw, Mapping):
            job_name = raw.get("jobName")
            if isinstance(job_name, str) and job_name:
                if job_name in seen_jobs:
                    chk.fault(f"jobs[{i}].jobName", f"duplicate job {job_name!r}")
                    continue
                seen_jobs.add(job_name)
            share_name = raw.get("quotaShareName")
            if isinstance(share_name, str) and share_name and share_name not in share_names:
                chk.fault(f"jobs[{i}].quotaShareName", f"unknown share {share_name!r}")
        if spec is None:
            continue
        jobs[spec.jobName] = spec
        job_list.append((i, spec))

    actions: list[ScenarioAction] = []
    for i, raw in enumerate(chk.items(data, "actions", "", required=False)):
        action = _action(chk, raw, i, share_names, jobs, seen_jobs)
        if action is not None:
            actions.append(action)

    # Replay share updates in time order: each resulting configuration must be valid,
    # and each job's instance type must be in its share's limits when it is submitted.
    updates = sorted(
        (
            (a.at, idx, a)
            for idx, a in enumerate(actions)
            if a.type == "UpdateQuotaShare" and a.fields.get("quotaShareName") in shares
        ),
        key=lambda t: (t[0], t[1]),
    )
    current = dict(shares)
    history: dict[str, list[tuple[float, ShareConfig]]] = {n: [] for n in shares}
    for at, _idx, action in updates:
        share_name = action.fields["quotaShareName"]
        new = _apply_share_update(current[share_name], action.fields)
        chk.faults += share_faults(new, f"actions[{action.index}]")
        current[share_name] = new
        history[share_name].append((at, new))
    unschedulable: dict[str, str] = {}
    for i, spec in job_list:
        if spec.quotaShareName not in shares:
            continue
        config = shares[spec.quotaShareName]
        later: list[ShareConfig] = []
        for at, new in history[spec.quotaShareName]:
            if at <= spec.submittedAt:
                config = new
            else:
                later.append(new)
        if config.limit(spec.instanceType) is None:
            chk.fault(
                f"jobs[{i}].instanceType",
                f"{spec.instanceType!r} is not in share {spec.quotaShareName!r}'s capacity limits",
            )
            continue
        reason = _never_admitted(spec, capacity, [config, *later])
        if reason is None:
            continue
        if allow_unschedulable:
            unschedulable[spec.jobName] = reason
        else:
            chk.fault(
                f"jobs[{i}].instanceCount",
                f"job {spec.jobName!r} can never be admitted: {reason} "
                "(--allow-unschedulable reports it as UNSCHEDULABLE instead)",
            )

    if chk.faults:
        raise ScenarioError(sorted(chk.faults, key=_fault_order))
    return Scenario(
        name=name,
        capacity=capacity,
        options=options,
        shares=share_list,
        jobs=[spec for _, spec in job_list],
        actions=actions,
        unschedulable=unschedulable,
    )


def _never_admitted(
    spec: JobSpec, capacity: Mapping[str, int], configs: list[ShareConfig]
) -> str | None:
    """The reason the job can be admitted under none of ``configs`` (the first one's
    reason), or None."""
    reasons = []
    for config in configs:
        rsc = config.resourceSharingConfiguration
        reason = unschedulable_reason(
            spec.instanceCount,
            spec.instanceType,
            capacity.get(spec.instanceType, 0),
            config.quotaShareName,
            config.limit(spec.instanceType),
            rsc.strategy,
            rsc.borrowLimit,
        )
        if reason is None:
            return None
        reasons.append(reason)
    return reasons[0]
