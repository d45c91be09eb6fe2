"""A scenario document validated by the models, with the valid parts of an invalid one.

:func:`parse` validates the whole document with
:class:`~quotagov.scheduler.scenario_models.ScenarioDocument` in one pydantic call
(strict). When that fails, every error becomes a fault
(:func:`~quotagov.scheduler.scenario_faults.field_fault`) and the items of ``shares``,
``jobs`` and ``actions`` that have no error are validated again, alone, so the
cross-field rules (:mod:`~quotagov.scheduler.scenario_checks`) still run on them: every
fault is reported in one run. The fields of a faulty item that have no fault of their
own (a job's name and share, an action's target and time) are kept too, as the
cross-field rules read them (:meth:`Parsed.usable`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from quotagov.scheduler.models import JobSpec, Options
from quotagov.scheduler.scenario_faults import Fault, field_fault, path_of
from quotagov.scheduler.scenario_models import (
    Action,
    ActionBase,
    ActionModel,
    JobEntry,
    QuotaShare,
    ScenarioDocument,
)

_UNION_TAG_ERRORS = ("union_tag_invalid", "union_tag_not_found")


@dataclass
class Parsed:
    """The valid parts of a scenario document, each with its index in the document.

    Attributes:
        faults: the field faults (empty when the models accept the whole document).
        jobs: the valid jobs as the engine's specs; ``job_index[k]`` is the document
            index of ``jobs[k]`` (None: ``jobs[k]`` is ``jobs[k]`` of the document).
        raw_shares, raw_jobs, raw_actions: the document's lists as given (``[]`` when
            absent or not a list), for the names of faulty items.
        failed_jobs, failed_actions: document indices of the items with field faults
            (actions whose ``type`` is unknown or missing are left out: no cross-field
            rule applies to them).
    """

    name: str = "scenario"
    capacity: dict[str, int] = field(default_factory=dict)
    options: Options = field(default_factory=Options)
    shares: list[tuple[int, QuotaShare]] = field(default_factory=list)
    jobs: list[JobSpec] = field(default_factory=list)
    job_index: list[int] | None = None
    actions: list[tuple[int, ActionModel]] = field(default_factory=list)
    raw_shares: list[Any] = field(default_factory=list)
    raw_jobs: list[Any] = field(default_factory=list)
    raw_actions: list[Any] = field(default_factory=list)
    failed_jobs: list[int] = field(default_factory=list)
    failed_actions: list[int] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    #: Paths of the fields with a fault of their own.
    faulty_paths: set[str] = field(default_factory=set)

    def usable(self, raw: Any, loc: tuple[int | str, ...]) -> Any:
        """The value of field ``loc[-1]`` of the faulty item ``raw`` (at ``loc[:-1]``), or
        None when it is absent or has a fault of its own."""
        name = loc[-1]
        if not isinstance(raw, Mapping) or name not in raw or path_of(loc) in self.faulty_paths:
            return None
        return raw[name]


@cache
def _items(section: str) -> TypeAdapter[list[Any]]:
    """The validator of one of the document's lists (the models' own item types)."""
    item: Any = {"shares": QuotaShare, "jobs": JobEntry, "actions": Action}[section]
    return TypeAdapter(list[item])


def parse(doc: Any) -> Parsed:
    """Validate ``doc`` with the models: the whole of it, or the parts that are valid.

    Returns:
        :class:`Parsed`; its ``faults`` are empty exactly when the document passes every
        field rule.
    """
    try:
        document = ScenarioDocument.model_validate(doc, strict=True)
    except ValidationError as exc:
        return _partial(doc, exc)
    return Parsed(
        name=document.name,
        capacity=document.capacity,
        options=document.options.to_options() if document.options else Options(),
        shares=list(enumerate(document.shares)),
        jobs=document.jobs or [],
        actions=list(enumerate(document.actions or [])),
        raw_shares=_listed(doc, "shares"),
    )


def _listed(doc: Mapping[str, Any], section: str) -> list[Any]:
    value = doc.get(section)
    return value if isinstance(value, list) else []


def _partial(doc: Any, exc: ValidationError) -> Parsed:
    """The faults of ``exc`` and the parts of ``doc`` that are valid on their own."""
    errors = exc.errors(include_url=False)
    parsed = Parsed(faults=[field_fault(e) for e in errors])
    if not isinstance(doc, Mapping):
        return parsed
    parsed.faulty_paths = {path_of(tuple(e["loc"])) for e in errors}
    failed: dict[str, set[int]] = {"shares": set(), "jobs": set(), "actions": set()}
    # A share or job whose only faults are unknown fields of its own (not inside its
    # capacity limits or configurations) still counts for the cross-field rules: its
    # unknown fields are reported, the rest of it is checked without them.
    unknown: dict[tuple[str, int], set[Any]] = {}
    untyped: list[int] = []
    for e in errors:
        loc = e["loc"]
        if len(loc) < 2 or loc[0] not in failed or not isinstance(loc[1], int):
            continue
        section, i = str(loc[0]), loc[1]
        if e["type"] == "extra_forbidden" and section != "actions" and len(loc) == 3:
            unknown.setdefault((section, i), set()).add(loc[2])
            continue
        failed[section].add(i)
        if section == "actions" and len(loc) == 2 and e["type"] in _UNION_TAG_ERRORS:
            untyped.append(i)
    raw = {section: _listed(doc, section) for section in failed}
    valid: dict[str, list[tuple[int, Any]]] = {}
    for section, items in raw.items():
        if section in parsed.faulty_paths:  # the section itself is at fault
            valid[section] = []
            continue
        kept = [i for i in range(len(items)) if i not in failed[section]]
        cleaned = [
            {k: v for k, v in items[i].items() if k not in unknown[(section, i)]}
            if (section, i) in unknown
            else items[i]
            for i in kept
        ]
        values = _items(section).validate_python(cleaned, strict=True)
        valid[section] = list(zip(kept, values, strict=True))
    parsed.raw_shares, parsed.raw_jobs, parsed.raw_actions = (
        raw["shares"],
        raw["jobs"],
        raw["actions"],
    )
    parsed.shares = valid["shares"]
    parsed.jobs = [spec for _, spec in valid["jobs"]]
    parsed.job_index = [i for i, _ in valid["jobs"]]
    parsed.actions = valid["actions"]
    parsed.failed_jobs = sorted(failed["jobs"])
    parsed.failed_actions = [  # typed ones: the others are not mappings or have no type
        i
        for i in sorted(failed["actions"].difference(untyped))
        if isinstance(parsed.raw_actions[i], Mapping)
    ]
    for i in untyped:  # an action of no known type: its time is checked all the same
        action = parsed.raw_actions[i]
        times = {"at": action["at"]} if "at" in action else {}
        try:
            ActionBase.model_validate(times, strict=True)
        except ValidationError as time_exc:
            parsed.faults += [field_fault(e, ("actions", i)) for e in time_exc.errors()]
    capacity = doc.get("capacity")
    if isinstance(capacity, Mapping) and "capacity" not in parsed.faulty_paths:
        parsed.capacity = {
            unit: count
            for unit, count in capacity.items()
            if f"capacity.{unit}" not in parsed.faulty_paths
        }
    return parsed
