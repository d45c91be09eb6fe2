"""Canonical JSON of audit records: sorted keys, no whitespace, normalized numbers.

Keys sorted, no whitespace, UTF-8 (non-ASCII kept as is), numbers normalized so that a
value written as ``int``/``float`` and read back from DynamoDB as ``Decimal`` hashes
the same (integral numbers as integers, others as the shortest decimal form). ``NaN``
and infinities are refused (DynamoDB refuses them too). A finite number DynamoDB cannot
store (more than 38 significant digits, or a magnitude above 9.99E+125 or below
1E-130: DynamoDB developer guide, "Supported data types") is kept as its decimal text
(a string), so that a CloudTrail event carrying one, e.g. a refused
``UpdateQuotaShare`` with ``maxCapacity: 1e300``, is still recorded instead of
failing the audit function. Used by the audit chain's hashes and by the adapters that
store audit values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal, localcontext
from typing import Any


class CanonicalFormError(ValueError):
    """A value cannot be put in canonical JSON form (names the path and the fault)."""


#: DynamoDB numbers: at most 38 significant digits, magnitude 1E-130 to 9.99...E+125.
DYNAMODB_DIGITS = 38
DYNAMODB_MAX_EXPONENT = 125
DYNAMODB_MIN_EXPONENT = -130


def storable(number: Decimal) -> bool:
    """Whether DynamoDB can store the finite ``number`` exactly (see the module doc).

    An integral number is written out in full (boto3's serializer turns ``10**40`` into
    41 digits and refuses it), so it must have at most 38 digits.
    """
    if number.is_zero():
        return True
    if number == number.to_integral_value():
        return len(str(abs(int(number)))) <= DYNAMODB_DIGITS
    digits = number.normalize().as_tuple().digits
    exponent = number.adjusted()
    return (
        len(digits) <= DYNAMODB_DIGITS
        and DYNAMODB_MIN_EXPONENT <= exponent <= DYNAMODB_MAX_EXPONENT
    )


def _normal_number(value: int | float | Decimal, path: str) -> int | Decimal | str:
    if isinstance(value, bool):  # pragma: no cover - handled by caller
        raise CanonicalFormError(f"{path}: a boolean is not a number")
    with localcontext() as context:
        context.prec = 2 * DYNAMODB_DIGITS + 10  # exact for anything storable
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        if not number.is_finite():
            raise CanonicalFormError(f"{path}: {value!r} is not a finite number")
        if not storable(number):
            return str(value) if isinstance(value, int) else format(number.normalize(), "E")
        if number == number.to_integral_value():
            return int(number)
        return number.normalize()


def normalize(value: Any, path: str = "$") -> Any:
    """Return ``value`` with every number normalized (see module doc); shape unchanged.

    Integral numbers become ``int``; others become a normalized ``Decimal``. Mappings
    must have string keys; tuples become lists.

    Raises:
        CanonicalFormError: for non-finite numbers, non-string keys or unsupported types.
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | float | Decimal):
        return _normal_number(value, path)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalFormError(f"{path}: key {key!r} is not a string")
            out[key] = normalize(item, f"{path}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [normalize(item, f"{path}[{i}]") for i, item in enumerate(value)]
    raise CanonicalFormError(f"{path}: {type(value).__name__} is not JSON data")


def _encode(value: Any) -> str:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dict):
        items = sorted(value.items())
        return (
            "{"
            + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_encode(v)}" for k, v in items)
            + "}"
        )
    if isinstance(value, list):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value`` (sorted keys, no whitespace, normalized numbers).

    Raises:
        CanonicalFormError: see :func:`normalize`.
    """
    return _encode(normalize(value))
