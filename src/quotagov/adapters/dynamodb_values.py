"""Plain Python values to and from the numbers boto3's DynamoDB serializer wants.

boto3's ``TypeSerializer`` refuses ``float`` (DynamoDB numbers are decimals) and
``TypeDeserializer`` returns every number as ``Decimal``. The adapters store epoch
seconds as floats and counts as ints; these two functions convert, recursively
through dicts and lists, so that a value read back equals the value written.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any


def to_dynamo(value: Any) -> Any:
    """Floats become ``Decimal`` (exactly as ``repr`` prints them), recursively."""
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, dict):
        return {k: to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_dynamo(v) for v in value]
    return value


def from_dynamo(value: Any) -> Any:
    """Decimals become int when integral, else float; sets become sorted lists; recursively."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [from_dynamo(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(from_dynamo(v) for v in value)
    return value
