"""Checking a SageMaker ``CreateTrainingJob`` request against botocore's service model.

The ``serviceRequestPayload`` of a ``SubmitServiceJob`` call is a SageMaker
``CreateTrainingJob`` request (Amazon SageMaker API Reference, "CreateTrainingJob",
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateTrainingJob.html).
Batch does not check it; SageMaker
does, when the job finally starts, hours later. :func:`training_request_faults` checks
it at submission, as SageMaker's own API would:

- required members (``required`` in the model), unknown members refused;
- types: ``string`` (str), ``integer``/``long`` (int, not bool), ``float``/``double``
  (finite int or float, not bool), ``boolean`` (bool), ``timestamp`` (str, int, float),
  ``structure``/``map`` (object), ``list`` (array);
- ``min``/``max`` (string length, list and map sizes, number ranges) and ``enum``;
- ``pattern``: matched in full (Java ``String.matches``), where the pattern is usable by
  Python's :mod:`re` (a few use ``\\p{...}`` classes: :func:`unusable_patterns` lists them);
- numbers that DynamoDB can store: an ``integer`` is a 32-bit, a ``long`` a 64-bit signed
  number (the model's Java types), a float at most :data:`MAX_FLOAT_MAGNITUDE` and
  finite. DynamoDB numbers have 38 digits of precision and a magnitude up to 9.99E+125
  (DynamoDB developer guide, "Supported data types"), so a request that passes can always
  be stored on the job record.

The SageMaker model is several megabytes; loading it at a Lambda cold start costs
seconds. The shapes reachable from ``CreateTrainingJobRequest`` are therefore extracted
once into ``sagemaker_create_training_job.json`` (package data, 100 KB) by
``python -m quotagov.adapters.sagemaker_model``; ``tests/submission/test_training_request_model.py``
fails when that file differs from :func:`extract_operation_input` of the installed
botocore.

Rules the model does not carry (stopping condition rules) are in
:mod:`quotagov.governance.submission.request`.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Mapping
from importlib import resources
from typing import Any

#: The extract shipped with the package (see the module docstring).
EXTRACT_FILE = "sagemaker_create_training_job.json"
#: The operation whose input is checked.
OPERATION = "CreateTrainingJob"
#: Range of a model ``integer`` (Java ``int``) and ``long`` (Java ``long``).
INT_RANGE: Mapping[str, tuple[int, int]] = {
    "integer": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
}
#: Largest magnitude of a ``float``/``double`` member (DynamoDB stores up to 9.99E+125).
MAX_FLOAT_MAGNITUDE = 1e125

Fault = tuple[str, str]


def extract_operation_input(operation: str = OPERATION) -> dict[str, Any]:
    """The input shape of a ``sagemaker`` operation and every shape it reaches, from botocore.

    Returns:
        ``{"operation", "botocoreVersion", "root": <shape name>, "shapes": {name: {...}}}``;
        each shape has ``type`` and, where the model has them, ``required``, ``members``
        (member -> shape name), ``member`` (list), ``key``/``value`` (map), ``min``,
        ``max``, ``enum``, ``pattern``.
    """
    import botocore
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    root = model.operation_model(operation).input_shape
    if root is None:
        raise ValueError(f"sagemaker {operation} has no input shape")
    shapes: dict[str, dict[str, Any]] = {}

    def visit(shape: Any) -> None:
        if shape.name in shapes:
            return
        entry: dict[str, Any] = {"type": shape.type_name}
        for key in ("min", "max", "enum", "pattern"):
            if key in shape.metadata:
                entry[key] = shape.metadata[key]
        shapes[shape.name] = entry
        if shape.type_name == "structure":
            entry["required"] = sorted(shape.required_members)
            entry["members"] = {name: m.name for name, m in shape.members.items()}
            for member in shape.members.values():
                visit(member)
        elif shape.type_name == "list":
            entry["member"] = shape.member.name
            visit(shape.member)
        elif shape.type_name == "map":
            entry["key"], entry["value"] = shape.key.name, shape.value.name
            visit(shape.key)
            visit(shape.value)

    visit(root)
    return {
        "operation": operation,
        "botocoreVersion": botocore.__version__,
        "root": root.name,
        "shapes": dict(sorted(shapes.items())),
    }


@functools.cache
def _extract() -> dict[str, Any]:
    text = resources.files("quotagov.adapters").joinpath(EXTRACT_FILE).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@functools.cache
def _pattern(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def unusable_patterns() -> list[str]:
    """The model's patterns that Python's :mod:`re` cannot compile (not checked)."""
    shapes = _extract()["shapes"].values()
    return sorted(
        {s["pattern"] for s in shapes if "pattern" in s and _pattern(s["pattern"]) is None}
    )


def training_request_faults(payload: Any) -> list[Fault]:
    """Every fault of ``payload`` against the ``CreateTrainingJobRequest`` model.

    Args:
        payload: the decoded ``serviceRequestPayload`` (a JSON object).

    Returns:
        ``(path, fault)`` pairs in document order, paths relative to the payload
        (``ResourceConfig.InstanceCount``, ``Tags[3].Key``); empty when it conforms.
        Never raises for any JSON value.
    """
    data = _extract()
    faults: list[Fault] = []
    _check(data["shapes"], data["root"], payload, "", faults)
    return faults


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__  # pragma: no cover - not a JSON value


def _check(
    shapes: Mapping[str, Any], name: str, value: Any, path: str, faults: list[Fault]
) -> None:
    shape = shapes[name]
    kind = shape["type"]
    where = path or "(payload)"
    if kind == "structure":
        if not isinstance(value, dict):
            faults.append((where, f"must be an object, not {_describe(value)}"))
            return
        members = shape["members"]
        for required in shape["required"]:
            if required not in value:
                faults.append((_join(path, required), "required by CreateTrainingJob"))
        for key, item in value.items():
            if key not in members:
                faults.append(
                    (_join(path, str(key)), "not a member of the CreateTrainingJob request")
                )
            else:
                _check(shapes, members[key], item, _join(path, key), faults)
        return
    if kind == "list":
        if not isinstance(value, list):
            faults.append((where, f"must be an array, not {_describe(value)}"))
            return
        _bounds(shape, len(value), where, faults, unit="items")
        for i, item in enumerate(value):
            _check(shapes, shape["member"], item, f"{path}[{i}]", faults)
        return
    if kind == "map":
        if not isinstance(value, dict):
            faults.append((where, f"must be an object, not {_describe(value)}"))
            return
        _bounds(shape, len(value), where, faults, unit="entries")
        for key, item in value.items():
            _check(shapes, shape["key"], key, f"{_join(path, str(key))} (key)", faults)
            _check(shapes, shape["value"], item, _join(path, str(key)), faults)
        return
    if kind == "string":
        if not isinstance(value, str):
            faults.append((where, f"must be a string, not {_describe(value)}"))
            return
        if "enum" in shape and value not in shape["enum"]:
            shown = ", ".join(shape["enum"][:8]) + (", ..." if len(shape["enum"]) > 8 else "")
            faults.append((where, f"{value[:80]!r} is not one of {shown}"))
            return
        _bounds(shape, len(value), where, faults, unit="characters")
        compiled = _pattern(shape["pattern"]) if "pattern" in shape else None
        if compiled is not None and compiled.fullmatch(value) is None:
            faults.append((where, f"does not match the pattern {shape['pattern']}"))
        return
    if kind in ("integer", "long"):
        if isinstance(value, bool) or not isinstance(value, int):
            faults.append((where, f"must be an integer, not {_describe(value)}"))
            return
        low, high = INT_RANGE[kind]
        if not low <= value <= high:
            faults.append((where, f"{value} is outside the range {low} to {high}"))
            return
        _bounds(shape, value, where, faults)
        return
    if kind in ("float", "double"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            faults.append((where, f"must be a number, not {_describe(value)}"))
            return
        number = float(value) if abs(value) < 1e300 else math.inf
        if not math.isfinite(number) or abs(number) > MAX_FLOAT_MAGNITUDE:
            faults.append((where, f"must be finite and at most {MAX_FLOAT_MAGNITUDE:g} in size"))
            return
        _bounds(shape, number, where, faults)
        return
    if kind == "boolean":
        if not isinstance(value, bool):
            faults.append((where, f"must be true or false, not {_describe(value)}"))
        return
    if kind == "timestamp":
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            faults.append((where, f"must be a timestamp, not {_describe(value)}"))
        return
    faults.append((where, f"model type {kind} cannot be sent as JSON"))  # blob


def _bounds(
    shape: Mapping[str, Any], size: float, where: str, faults: list[Fault], *, unit: str = ""
) -> None:
    """The model's ``min``/``max``: of a length (``unit`` given) or of a number."""
    low, high = shape.get("min"), shape.get("max")
    if unit:
        if low is not None and size < low:
            faults.append((where, f"has {size:g} {unit}, at least {low} required"))
        elif high is not None and size > high:
            faults.append((where, f"has {size:g} {unit}, at most {high} allowed"))
    elif low is not None and size < low:
        faults.append((where, f"{size:g} is below the minimum {low}"))
    elif high is not None and size > high:
        faults.append((where, f"{size:g} is above the maximum {high}"))


def main(argv: list[str] | None = None) -> int:
    """Write (default) or check (``--check``) the extract next to this module.

    ``--check`` compares the shapes only (not the botocore version that wrote them).
    """
    args = sys.argv[1:] if argv is None else argv
    fresh = extract_operation_input()
    target = resources.files("quotagov.adapters").joinpath(EXTRACT_FILE)
    if "--check" in args:
        stored = json.loads(target.read_text("utf-8"))
        same = (stored["root"], stored["shapes"]) == (fresh["root"], fresh["shapes"])
        print(f"{EXTRACT_FILE}: {'up to date' if same else 'differs from botocore'}")
        return 0 if same else 1
    with resources.as_file(target) as path:
        path.write_text(json.dumps(fresh, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {EXTRACT_FILE}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
