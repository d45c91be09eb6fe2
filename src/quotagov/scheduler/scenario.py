"""Scenario files: loading (JSON or YAML) and validation with one message per fault.

Format: ``docs/simulator/spec.md`` ("Input"). Every fault is reported, each
message starting with the field path, as ``jobs[3].quotaShareName: unknown share 'gpu'``;
:class:`ScenarioError` carries them all. Nothing runs unless the whole scenario is valid.

The rules live in three modules, each written once: the field rules (types, required
fields, unknown fields, ranges, defaults, enumerations) are the pydantic models of
:mod:`~quotagov.scheduler.scenario_models` (also ``docs/scenario-format.schema.json``);
the rules across fields (unknown share or job; instance type not in the share's capacity
limits as in effect at the job's ``submittedAt``; more than 20 shares; fewer than 1 or
more than 5 capacity limits; ``borrowLimit`` on a share that is not LEND_AND_BORROW;
duplicate names; an action on a job before the job is submitted; a job that can never
be admitted) are :mod:`~quotagov.scheduler.scenario_checks`; the messages and their
order are :mod:`~quotagov.scheduler.scenario_faults`. The pydantic part is imported on
first validation, so ``import quotagov.scheduler`` stays light.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from quotagov.scheduler.models import JobSpec, Options, ShareConfig


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


def validate_scenario(doc: Any, allow_unschedulable: bool = False) -> Scenario:
    """Validate a parsed scenario document and build the typed :class:`Scenario`.

    The field rules are the models of :mod:`~quotagov.scheduler.scenario_models` (one
    strict pydantic validation of the whole document), the rules across fields
    :mod:`~quotagov.scheduler.scenario_checks`. A job that can never be admitted (more
    instances than the environment has of its type, or more than its share can hold
    within quota plus its borrow limit, under the share's configuration at its
    submission and every later one the actions give,
    :func:`~quotagov.batch_semantics.unschedulable_reason`) is a fault naming the job;
    with ``allow_unschedulable`` it is listed in :attr:`Scenario.unschedulable`.

    Raises:
        ScenarioError: one message per fault, each naming the field path, in document
            order (:mod:`~quotagov.scheduler.scenario_faults`).
    """
    from quotagov.scheduler.scenario_checks import check
    from quotagov.scheduler.scenario_faults import in_document_order
    from quotagov.scheduler.scenario_parts import parse

    parsed = parse(doc)
    if not isinstance(doc, Mapping):
        raise ScenarioError(in_document_order(parsed.faults))
    checked = check(parsed, allow_unschedulable)
    faults = parsed.faults + checked.faults
    if faults:
        raise ScenarioError(in_document_order(faults))
    return Scenario(
        name=parsed.name,
        capacity=parsed.capacity,
        options=parsed.options,
        shares=checked.shares,
        jobs=parsed.jobs,
        actions=[
            ScenarioAction(at=a.at, type=a.type, fields=a.fields, index=a.index)
            for a in checked.actions
        ],
        unschedulable=checked.unschedulable,
    )
