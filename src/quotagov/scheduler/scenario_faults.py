"""Scenario faults: pydantic's errors as the format's messages, in document order.

Every fault reads ``path: text``, the path in dots and brackets from the document's
root (``jobs[3].quotaShareName``, ``capacity.ml.g5.xlarge``, ``(document)`` for the
root), as ``docs/simulator/spec.md`` ("Invalid input") asks.
:func:`field_fault` is the one translation of a pydantic error (location and type) of
:mod:`~quotagov.scheduler.scenario_models`; :func:`fault_at` places a fault of a
cross-field rule (:mod:`~quotagov.scheduler.scenario_checks`) the same way.

Order: faults sort by their place in the document: its sections in the order ``name``,
``capacity``, ``options``, ``shares``, ``jobs``, ``actions``, then unknown top-level
fields; within a list, by index; within an object, its unknown fields first (after
``at`` and ``type`` in an action), then its fields in the model's order. A cross-field
fault sorts after the faults of the field it is anchored to (``order``).
"""

from __future__ import annotations

import math
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from quotagov.scheduler.scenario_models import ConvertedTo, ScenarioDocument, ScenarioModel

#: Sorts after every field of an object (cross-field faults about the whole object).
AFTER_FIELDS = 1 << 20


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault: ``message`` (``path: text``) and ``key``, its place in the report."""

    key: tuple[int, ...]
    message: str


@dataclass(frozen=True, slots=True)
class _Place:
    path: str
    key: tuple[int, ...]
    #: The field the location ends in (None for list items, map entries, unknown fields).
    field: FieldInfo | None
    #: The type expected there, Annotated and Optional stripped.
    expected: Any


def _strip(tp: Any) -> Any:
    """``tp`` without ``Annotated`` and ``| None``; a converted type is its model."""
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            converted = [m for m in tp.__metadata__ if isinstance(m, ConvertedTo)]
            tp = converted[0].model if converted else get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(tp) if a is not type(None)]
            if len(members) > 1:
                return tp
            tp = members[0]
        else:
            return tp


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _members(union: Any) -> dict[str, type[ScenarioModel]]:
    """The members of a discriminated union of models, by their ``type`` tag."""
    return {get_args(m.model_fields["type"].annotation)[0]: m for m in get_args(union)}


def _place(loc: tuple[int | str, ...]) -> _Place:
    """Walk ``loc`` from the document's root through the models: the path as the format
    writes it (union tags left out), the sort key, and what is expected there."""
    node: Any = ScenarioDocument
    field: FieldInfo | None = None
    path = ""
    key: list[int] = []
    for part in loc:
        node = _strip(node)
        if get_origin(node) in (Union, types.UnionType):  # the actions' union: a tag...
            members = _members(node)
            if part in members:
                node = members[str(part)]
                continue
            node = next(iter(members.values()))  # ...or a field all members begin with
        field = None
        if get_origin(node) is dict:
            path += f".{part}"
            key.append(0)  # map entries keep pydantic's order (the document's)
            node = get_args(node)[1]
            continue
        if isinstance(part, int):
            path += f"[{part}]"
            key.append(part)
            node = get_args(node)[0] if get_origin(node) is list else None
            continue
        if part == "[key]":  # a map's key itself
            node = str
            continue
        path += f".{part}" if path else part
        if _is_model(node) and part in node.model_fields:
            names = list(node.model_fields)
            key.append(2 * names.index(part) + 1)
            field = node.model_fields[part]
            node = field.annotation
        else:
            unknown_after = getattr(node, "UNKNOWN_FIELDS_AFTER", 0)
            key.append(2 * unknown_after)
            node = None
    return _Place(path or "(document)", tuple(key), field, _strip(node))


def describe(value: Any) -> str:
    """A value as the messages show what they got: ``null``, ``a list``, ``string 'x'``,
    ``int 5``..."""
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


def _seconds_text(value: Any, positive: bool) -> str:
    if value is None:
        return "must not be null"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"expected a number, got {describe(value)}"
    if not math.isfinite(value):
        return f"{value} is not a finite number"
    if value < 0:
        return f"{value} is negative"
    return "must be positive (use null for none)" if positive else f"{value} is invalid"


def _text(error: ErrorDetails, place: _Place, top_level: bool) -> str:
    """The message of one pydantic error at ``place``."""
    kind = error["type"]
    value = error.get("input")
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind in ("model_type", "model_attributes_type", "dict_type", "list_type"):
        if value is None and top_level:  # a null section counts as a missing one
            return "required"
        return f"expected a {'list' if kind == 'list_type' else 'mapping'}, got {describe(value)}"
    if kind == "int_type":
        return (
            "must not be null" if value is None else f"expected an integer, got {describe(value)}"
        )
    if kind == "greater_than_equal":
        return f"{value} is negative" if ctx["ge"] == 0 else f"{value} is below {ctx['ge']}"
    if kind == "less_than_equal":
        return f"{value} is above {ctx['le']}"
    if kind == "seconds":
        return _seconds_text(value, bool(ctx.get("positive")))
    if kind in ("string_type", "string_too_short"):
        metadata = place.field.metadata if place.field is not None else []
        non_empty = any(getattr(m, "min_length", 0) for m in metadata)  # Field(min_length=1)
        return f"expected a {'non-empty ' if non_empty else ''}string, got {describe(value)}"
    if kind == "literal_error" and get_origin(place.expected) is Literal:
        return f"{value!r} is not one of {', '.join(map(str, get_args(place.expected)))}"
    if kind == "union_tag_invalid" and isinstance(value, Mapping):
        return f"{value.get('type')!r} is not one of {', '.join(_members(place.expected))}"
    if kind == "union_tag_not_found":
        return "required"
    return str(error["msg"])


def field_fault(error: ErrorDetails, prefix: tuple[int | str, ...] = ()) -> Fault:
    """The fault of one pydantic error of the scenario models (``prefix`` goes before its
    location when a part of the document was validated alone)."""
    loc = (*prefix, *error["loc"])
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        union = _place(loc).expected  # the actions' union, for the tags it expects
        place = _place((*loc, "type"))  # the discriminator is the field at fault
        place = _Place(place.path, place.key, place.field, union)
    else:
        place = _place(loc)
    return Fault(place.key, f"{place.path}: {_text(error, place, len(loc) == 1)}")


def path_of(loc: tuple[int | str, ...]) -> str:
    """The field path of a location as the messages write it (``jobs[3].jobName``)."""
    return _place(loc).path


def fault_at(
    loc: tuple[int | str, ...],
    text: str,
    *,
    after: tuple[int | str, ...] | None = None,
    order: tuple[int, ...] = (),
) -> Fault:
    """A cross-field fault ``path: text`` about the field at ``loc``; it sorts after the
    faults of the field at ``after`` (default ``loc``) and, among faults there, by
    ``order``."""
    anchor = _place(loc if after is None else after)
    return Fault((*anchor.key, *order), f"{path_of(loc)}: {text}")


def fault_after(after: tuple[int | str, ...], message: str, order: tuple[int, ...] = ()) -> Fault:
    """A fault whose message is written already (``path: text``), sorted after the faults
    of the field at ``after``, then by ``order``."""
    return Fault((*_place(after).key, *order), message)


def in_document_order(faults: list[Fault]) -> list[str]:
    """The messages, sorted by place (stable: equal places keep the order given)."""
    return [f.message for f in sorted(faults, key=lambda f: f.key)]
