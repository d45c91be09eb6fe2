"""Checking Batch request and response dictionaries against botocore's own service model.

Fidelity of the simulated Batch (and of every request quotagov sends) is checked,
not assumed: :func:`validate_request` and :func:`validate_response` walk a
dictionary against the input or output shape of a ``batch`` operation in the
service model botocore ships (API version 2016-08-10), so a renamed field, a wrong
type or an unknown enum value fails.

What is checked, on both sides:

- required members (``required`` in the model),
- types: ``string`` (str), ``integer``/``long`` (int, not bool), ``double``/``float``
  (int or float, not bool), ``boolean`` (bool), ``timestamp`` (datetime, int or
  float), ``structure``/``map`` (dict), ``list`` (list or tuple),
- enums (``enum`` in the model),
- ``min``/``max`` where the model has them (string length, list and map sizes,
  numbers),
- unknown members (not in the model) are rejected.

Requests are in addition passed through botocore's
:class:`botocore.validate.ParamValidator`, which is what boto3 itself runs before
sending, so a request that passes here is one boto3 would send.

The model marks ``DescribeServiceJobResponse.startedAt`` as required although a job
that has never started has no start time; that one member is
exempted, see :data:`OUTPUT_REQUIRED_EXEMPT`.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Mapping
from typing import Any

import botocore.session
from botocore.model import OperationModel, ServiceModel, Shape, StructureShape
from botocore.validate import ParamValidator

#: (output shape name, member) pairs the model calls required but Batch can omit.
#: ``startedAt`` cannot exist before a job first starts.
OUTPUT_REQUIRED_EXEMPT: frozenset[tuple[str, str]] = frozenset(
    {("DescribeServiceJobResponse", "startedAt")}
)


class BatchModelError(ValueError):
    """A dictionary does not match the botocore ``batch`` model.

    Attributes:
        operation: the operation name, e.g. ``"SubmitServiceJob"``.
        direction: ``"request"`` or ``"response"``.
        faults: one message per fault, each starting with the member path
            (``retryStrategy.attempts``, ``attempts[0].serviceResourceId.name``).
    """

    def __init__(self, operation: str, direction: str, faults: list[str]) -> None:
        lines = "\n".join(f"  {f}" for f in faults)
        super().__init__(f"{operation} {direction} does not match the batch model:\n{lines}")
        self.operation = operation
        self.direction = direction
        self.faults = faults


@functools.cache
def batch_service_model() -> ServiceModel:
    """The ``batch`` service model of the installed botocore (loaded once)."""
    return botocore.session.get_session().get_service_model("batch")


def operation_model(operation: str) -> OperationModel:
    """The model of one Batch operation, e.g. ``"SubmitServiceJob"``.

    Raises:
        ValueError: when botocore's model has no such operation.
    """
    model = batch_service_model()
    if operation not in model.operation_names:
        raise ValueError(f"batch has no operation {operation!r}")
    return model.operation_model(operation)


def request_faults(operation: str, params: Mapping[str, Any]) -> list[str]:
    """Every fault of ``params`` as a request of ``operation``; empty when valid."""
    shape = operation_model(operation).input_shape
    if shape is None:
        return [] if not params else [f"(request): {operation} takes no parameters"]
    faults = _walk(params, shape, "", exempt=frozenset())
    report = ParamValidator().validate(dict(params), shape)
    if report.has_errors():
        faults.extend(
            f"botocore: {line.strip()}"
            for line in report.generate_report().splitlines()
            if line.strip()
        )
    return faults


def response_faults(operation: str, response: Mapping[str, Any]) -> list[str]:
    """Every fault of ``response`` as the output of ``operation``; empty when valid.

    A ``ResponseMetadata`` key (added by boto3 to every response) is ignored.
    """
    shape = operation_model(operation).output_shape
    body = {k: v for k, v in response.items() if k != "ResponseMetadata"}
    if shape is None:
        return [] if not body else [f"(response): {operation} returns no members"]
    return _walk(body, shape, "", exempt=OUTPUT_REQUIRED_EXEMPT)


def validate_request(operation: str, params: Mapping[str, Any]) -> None:
    """Check ``params`` as the request of Batch ``operation``.

    Raises:
        BatchModelError: listing every fault with its member path.
        ValueError: when ``operation`` is not a Batch operation.
    """
    faults = request_faults(operation, params)
    if faults:
        raise BatchModelError(operation, "request", faults)


def validate_response(operation: str, response: Mapping[str, Any]) -> None:
    """Check ``response`` as the output of Batch ``operation``.

    Raises:
        BatchModelError: listing every fault with its member path.
        ValueError: when ``operation`` is not a Batch operation.
    """
    faults = response_faults(operation, response)
    if faults:
        raise BatchModelError(operation, "response", faults)


_SCALAR_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "long": (int,),
    "double": (int, float),
    "float": (int, float),
    "boolean": (bool,),
    "timestamp": (datetime.datetime, int, float),
    "blob": (bytes, bytearray, str),
}


def _join(path: str, member: str) -> str:
    return f"{path}.{member}" if path else member


def _walk(value: Any, shape: Shape, path: str, *, exempt: frozenset[tuple[str, str]]) -> list[str]:
    where = path or "(top)"
    kind = shape.type_name
    if kind == "structure":
        assert isinstance(shape, StructureShape)
        if not isinstance(value, Mapping):
            return [f"{where}: expected a structure (dict), got {type(value).__name__}"]
        return _walk_structure(value, shape, path, exempt=exempt)
    if kind == "list":
        if not isinstance(value, list | tuple):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        faults = _size_faults(len(value), shape, where, "items")
        member = shape.member  # type: ignore[attr-defined]
        for i, item in enumerate(value):
            faults.extend(_walk(item, member, f"{path}[{i}]", exempt=exempt))
        return faults
    if kind == "map":
        if not isinstance(value, Mapping):
            return [f"{where}: expected a map (dict), got {type(value).__name__}"]
        faults = _size_faults(len(value), shape, where, "entries")
        key_shape = shape.key  # type: ignore[attr-defined]
        value_shape = shape.value  # type: ignore[attr-defined]
        for k, v in value.items():
            faults.extend(_walk(k, key_shape, f"{path}<key {k!r}>", exempt=exempt))
            faults.extend(_walk(v, value_shape, f"{path}[{k!r}]", exempt=exempt))
        return faults
    return _scalar_faults(value, shape, where)


def _walk_structure(
    value: Mapping[str, Any],
    shape: StructureShape,
    path: str,
    *,
    exempt: frozenset[tuple[str, str]],
) -> list[str]:
    faults: list[str] = []
    members = shape.members
    for name in shape.required_members:
        if name not in value and (shape.name, name) not in exempt:
            faults.append(f"{_join(path, name)}: required member is missing")
    for name, item in value.items():
        if name not in members:
            faults.append(f"{_join(path, str(name))}: unknown member of {shape.name}")
            continue
        if item is None:
            faults.append(f"{_join(path, name)}: null is not a {members[name].type_name}")
            continue
        faults.extend(_walk(item, members[name], _join(path, name), exempt=exempt))
    return faults


def _scalar_faults(value: Any, shape: Shape, where: str) -> list[str]:
    kind = shape.type_name
    allowed = _SCALAR_TYPES.get(kind)
    if allowed is None:
        return [f"{where}: shape type {kind!r} is not supported by this checker"]
    if isinstance(value, bool) and kind != "boolean":
        return [f"{where}: expected {kind}, got bool"]
    if not isinstance(value, allowed):
        return [f"{where}: expected {kind}, got {type(value).__name__}"]
    faults: list[str] = []
    enum = getattr(shape, "enum", None) or []
    if enum and value not in enum:
        faults.append(f"{where}: {value!r} is not one of {', '.join(enum)}")
    if isinstance(value, str):
        faults.extend(_size_faults(len(value), shape, where, "characters"))
    elif kind in ("integer", "long", "double", "float"):
        low = shape.metadata.get("min")
        high = shape.metadata.get("max")
        if low is not None and value < low:
            faults.append(f"{where}: {value} is below the minimum {low}")
        if high is not None and value > high:
            faults.append(f"{where}: {value} is above the maximum {high}")
    return faults


def _size_faults(size: int, shape: Shape, where: str, unit: str) -> list[str]:
    faults: list[str] = []
    low = shape.metadata.get("min")
    high = shape.metadata.get("max")
    if low is not None and size < low:
        faults.append(f"{where}: {size} {unit}, the minimum is {low}")
    if high is not None and size > high:
        faults.append(f"{where}: {size} {unit}, the maximum is {high}")
    return faults
