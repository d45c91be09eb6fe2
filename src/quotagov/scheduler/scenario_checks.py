"""The scenario format's cross-field rules: each written once, here.

Rules (``docs/simulator/spec.md``, "Input"; the AWS Batch quota-management
pages for the limits):

- at most :data:`~quotagov.scheduler.models.MAX_SHARES` shares; a share's own rules
  (1 to 5 capacity limits, one per unit, ``borrowLimit`` only with LEND_AND_BORROW) are
  :func:`~quotagov.scheduler.rules.share_faults`, shared with the engine and the
  simulated Batch, and hold for every configuration the ``UpdateQuotaShare`` actions
  give too (replayed in time order, then input order);
- share and job names are unique; a job's share exists; an action's job or share exists;
  an ``UpdateQuotaShare`` changes something; an action on a job comes after its
  submission (actions run before submissions at the same time);
- a job's instance type is in its share's capacity limits as in effect at its
  ``submittedAt``;
- a job must be admissible under its share's configuration at its submission or a later
  one (:func:`~quotagov.batch_semantics.unschedulable_reason`, whose bound is
  :func:`~quotagov.batch_semantics.max_admissible_instances`); with
  ``allow_unschedulable`` such a job is listed instead of being a fault.

A reference to a part that exists but has faults of its own is not reported again as
unknown (a job naming a share whose block is invalid). Each rule's fault is placed by
:func:`~quotagov.scheduler.scenario_faults.fault_at` after the faults of the field it
is about.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from quotagov.batch_semantics import unschedulable_reason
from quotagov.scheduler.models import MAX_SHARES, JobSpec, ShareConfig
from quotagov.scheduler.rules import share_faults
from quotagov.scheduler.scenario_faults import AFTER_FIELDS, Fault, fault_after, fault_at
from quotagov.scheduler.scenario_models import (
    SHARE_UPDATE_FIELDS,
    ActionModel,
    TerminateServiceJob,
    UpdateServiceJob,
)
from quotagov.scheduler.scenario_parts import Parsed


@dataclass(frozen=True, slots=True)
class CheckedAction:
    """A valid action: its document index, ``type``, time and Batch-shaped fields."""

    index: int
    type: str
    at: float
    fields: dict[str, Any]


@dataclass
class CrossChecked:
    """The result of the cross-field rules.

    Attributes:
        faults: one per fault, placed in document order.
        shares: the valid shares (first of each name), in document order.
        actions: the actions without faults, in document order.
        unschedulable: with ``allow_unschedulable``, the jobs that can never be
            admitted, by name, with the reason.
    """

    faults: list[Fault] = field(default_factory=list)
    shares: list[ShareConfig] = field(default_factory=list)
    actions: list[CheckedAction] = field(default_factory=list)
    unschedulable: dict[str, str] = field(default_factory=dict)


def check(parsed: Parsed, allow_unschedulable: bool = False) -> CrossChecked:
    """Apply every cross-field rule to the valid parts of a document (:class:`Parsed`)."""
    out = CrossChecked()
    shares = _shares(parsed, out)
    share_names = {
        r["quotaShareName"]
        for r in parsed.raw_shares
        if isinstance(r, Mapping) and isinstance(r.get("quotaShareName"), str)
    }
    targets = {name for name in _action_jobs(parsed) if name is not None}
    job_names, targeted, repeated = _jobs(parsed, share_names, targets, out)
    _actions(parsed, share_names, job_names, targeted, out)
    history = _replay(shares, out)
    _admission(parsed, history, repeated, allow_unschedulable, out)
    return out


def _shares(parsed: Parsed, out: CrossChecked) -> dict[str, ShareConfig]:
    """Count, each share's own rules, unique names."""
    if len(parsed.raw_shares) > MAX_SHARES:
        out.faults.append(
            fault_at(
                ("shares",),
                f"{len(parsed.raw_shares)} shares, a job queue holds at most {MAX_SHARES}",
                order=(-1,),
            )
        )
    shares: dict[str, ShareConfig] = {}
    for i, model in parsed.shares:
        config = model.to_config()
        out.faults += [
            fault_after(("shares", i), fault, (AFTER_FIELDS, 0))
            for fault in share_faults(config, f"shares[{i}]")
        ]
        name = config.quotaShareName
        if name in shares:
            out.faults.append(
                fault_at(
                    ("shares", i, "quotaShareName"),
                    f"duplicate share {name!r}",
                    after=("shares", i),
                    order=(AFTER_FIELDS, 1),
                )
            )
            continue
        shares[name] = config
        out.shares.append(config)
    return shares


def _job_views(parsed: Parsed) -> Iterator[tuple[int, str | None, str | None, JobSpec | None]]:
    """``(document index, jobName, quotaShareName, spec)`` of every job, in document
    order; a faulty job has no spec, and None for each of its names that is absent or
    faulty."""
    if parsed.job_index is None:
        for i, spec in enumerate(parsed.jobs):
            yield i, spec.jobName, spec.quotaShareName, spec
        return
    failed = iter(parsed.failed_jobs)
    pending = next(failed, None)
    for index, spec in zip(parsed.job_index, parsed.jobs, strict=True):
        while pending is not None and pending < index:
            yield _failed_job(parsed, pending)
            pending = next(failed, None)
        yield index, spec.jobName, spec.quotaShareName, spec
    while pending is not None:
        yield _failed_job(parsed, pending)
        pending = next(failed, None)


def _failed_job(parsed: Parsed, i: int) -> tuple[int, str | None, str | None, None]:
    raw = parsed.raw_jobs[i]
    name = parsed.usable(raw, ("jobs", i, "jobName"))
    return i, name, parsed.usable(raw, ("jobs", i, "quotaShareName")), None


def _jobs(
    parsed: Parsed,
    share_names: set[str],
    targets: set[str],
    out: CrossChecked,
) -> tuple[set[str], dict[str, JobSpec], set[int]]:
    """Unique job names and known shares.

    Returns:
        every job name given (faulty jobs' included), the valid jobs the actions name
        (by name; the first job of a name is the one), and the document indices of the
        jobs whose name came before (left out of the later checks).
    """
    seen: set[str] = set()
    repeated: set[int] = set()
    targeted: dict[str, JobSpec] = {}
    for i, name, share, spec in _job_views(parsed):
        if name is not None:
            if name in seen:
                repeated.add(i)
                out.faults.append(
                    fault_at(
                        ("jobs", i, "jobName"),
                        f"duplicate job {name!r}",
                        after=("jobs", i),
                        order=(AFTER_FIELDS, 0),
                    )
                )
                continue
            seen.add(name)
            if spec is not None and name in targets:
                targeted[name] = spec
        if share is not None and share not in share_names:
            out.faults.append(
                fault_at(
                    ("jobs", i, "quotaShareName"),
                    f"unknown share {share!r}",
                    after=("jobs", i),
                    order=(AFTER_FIELDS, 1),
                )
            )
    return seen, targeted, repeated


def _action_views(parsed: Parsed) -> Iterator[tuple[int, str, Any, ActionModel | None]]:
    """``(document index, type, raw item, model or None)`` of every typed action, in
    document order (faulty actions with a known ``type`` included)."""
    views: list[tuple[int, str, Any, ActionModel | None]] = [
        (i, a.type, None, a) for i, a in parsed.actions
    ]
    views += [
        (i, parsed.raw_actions[i]["type"], parsed.raw_actions[i], None)
        for i in parsed.failed_actions
    ]
    yield from sorted(views, key=lambda v: v[0])


def _value(parsed: Parsed, i: int, raw: Any, model: ActionModel | None, name: str) -> Any:
    if model is not None:
        return getattr(model, name, None)
    return parsed.usable(raw, ("actions", i, name))


def _action_jobs(parsed: Parsed) -> Iterator[str | None]:
    for i, kind, raw, model in _action_views(parsed):
        if kind != "UpdateQuotaShare":
            yield _value(parsed, i, raw, model, "jobName")


def _actions(
    parsed: Parsed,
    share_names: set[str],
    job_names: set[str],
    targeted: dict[str, JobSpec],
    out: CrossChecked,
) -> None:
    """Each action's target exists, comes after its job's submission, changes something."""
    for i, kind, raw, model in _action_views(parsed):
        before = len(out.faults)
        at = _value(parsed, i, raw, model, "at")
        if kind == "UpdateQuotaShare":
            name = _value(parsed, i, raw, model, "quotaShareName")
            where = ("actions", i, kind, "quotaShareName")
            if name is not None and name not in share_names:
                out.faults.append(fault_at(where, f"unknown share {name!r}", order=(1,)))
            given = model.model_fields_set if model is not None else set(raw)
            if not given.intersection(SHARE_UPDATE_FIELDS):
                out.faults.append(
                    fault_at(
                        ("actions", i),
                        "UpdateQuotaShare changes nothing: give at least one of "
                        + ", ".join(SHARE_UPDATE_FIELDS),
                        after=where,
                        order=(2,),
                    )
                )
        else:
            name = _value(parsed, i, raw, model, "jobName")
            where = ("actions", i, kind, "jobName")
            job = targeted.get(name) if name is not None else None
            if name is not None and name not in job_names:
                out.faults.append(fault_at(where, f"unknown job {name!r}", order=(1,)))
            elif job is not None and at is not None and at <= job.submittedAt:
                out.faults.append(
                    fault_at(
                        ("actions", i, "at"),
                        f"{at} is not after job {name!r} is submitted ({job.submittedAt}); "
                        "actions run before submissions at the same time",
                        after=where,
                        order=(2,),
                    )
                )
        if model is not None and len(out.faults) == before:
            out.actions.append(CheckedAction(i, kind, model.at, _fields(model)))


def _fields(model: ActionModel) -> dict[str, Any]:
    """An action's Batch-shaped fields (``at`` and ``type`` left out)."""
    if isinstance(model, UpdateServiceJob):
        return {"jobName": model.jobName, "schedulingPriority": model.schedulingPriority}
    if isinstance(model, TerminateServiceJob):
        return {"jobName": model.jobName}
    fields: dict[str, Any] = {"quotaShareName": model.quotaShareName}
    for name in SHARE_UPDATE_FIELDS:
        if name in model.model_fields_set:
            value = getattr(model, name)
            if isinstance(value, list):
                fields[name] = [item.model_dump() for item in value]
            elif hasattr(value, "model_dump"):
                fields[name] = value.model_dump()
            else:
                fields[name] = value
    return fields


@dataclass
class _History:
    """A share's configurations: the initial one, then one per update, in time order."""

    times: list[float]
    configs: list[ShareConfig]


def _replay(shares: dict[str, ShareConfig], out: CrossChecked) -> dict[str, _History]:
    """Apply the valid share updates in time order (then input order): each resulting
    configuration must pass the share's own rules."""
    history = {name: _History([], [config]) for name, config in shares.items()}
    updates = sorted(
        (a for a in out.actions if a.type == "UpdateQuotaShare"),
        key=lambda a: (a.at, a.index),
    )
    for action in updates:
        line = history.get(action.fields["quotaShareName"])
        if line is None:
            continue
        new = _apply_share_update(line.configs[-1], action.fields)
        out.faults += [
            fault_after(("actions", action.index), fault, (AFTER_FIELDS,))
            for fault in share_faults(new, f"actions[{action.index}]")
        ]
        line.times.append(action.at)
        line.configs.append(new)
    return history


def _apply_share_update(config: ShareConfig, fields: Mapping[str, Any]) -> ShareConfig:
    data = config.to_batch()
    for key in SHARE_UPDATE_FIELDS:
        if key in fields:
            data[key] = fields[key]
    return ShareConfig.from_batch(data)


def _admission(
    parsed: Parsed,
    history: dict[str, _History],
    repeated: set[int],
    allow_unschedulable: bool,
    out: CrossChecked,
) -> None:
    """Each valid job's instance type is in its share's limits at submission, and some
    configuration from then on can admit it (one verdict per share, configuration,
    instance type and count)."""
    verdicts: dict[tuple[str, int, str, int], tuple[str, str] | None] = {}
    for k, spec in enumerate(parsed.jobs):
        line = history.get(spec.quotaShareName)
        if line is None:
            continue
        i = k if parsed.job_index is None else parsed.job_index[k]
        if repeated and i in repeated:
            continue
        epoch = bisect_right(line.times, spec.submittedAt) if line.times else 0
        key = (spec.quotaShareName, epoch, spec.instanceType, spec.instanceCount)
        if key not in verdicts:
            verdicts[key] = _verdict(spec, parsed.capacity, line.configs[epoch:])
        verdict = verdicts[key]
        if verdict is None:
            continue
        field_name, reason = verdict
        if field_name == "instanceType":
            out.faults.append(
                fault_at(
                    ("jobs", i, "instanceType"),
                    reason,
                    after=("jobs", i),
                    order=(AFTER_FIELDS, 2),
                )
            )
        elif allow_unschedulable:
            out.unschedulable[spec.jobName] = reason
        else:
            out.faults.append(
                fault_at(
                    ("jobs", i, "instanceCount"),
                    f"job {spec.jobName!r} can never be admitted: {reason} "
                    "(--allow-unschedulable reports it as UNSCHEDULABLE instead)",
                    after=("jobs", i),
                    order=(AFTER_FIELDS, 2),
                )
            )


def _verdict(
    spec: JobSpec, capacity: Mapping[str, int], configs: list[ShareConfig]
) -> tuple[str, str] | None:
    """None when the job can be admitted under its share's configuration at submission
    (``configs[0]``) or a later one; else the field at fault and why."""
    if configs[0].limit(spec.instanceType) is None:
        return (
            "instanceType",
            f"{spec.instanceType!r} is not in share {spec.quotaShareName!r}'s capacity limits",
        )
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
    return "instanceCount", reasons[0]
