"""Plain Python values to and from the numbers boto3's DynamoDB serializer wants.

boto3's ``TypeSerializer`` refuses ``float`` (DynamoDB numbers are decimals) and
``TypeDeserializer`` returns every number as ``Decimal``. The adapters store epoch
seconds as floats and counts as ints; these two functions convert, recursively
through dicts and lists, so that a value read back equals the value written.

None members of a map are left out (as the Batch API and the records leave out members
without a value), so a map read back never holds a null; a None at the top level is
the caller's to handle (``update`` removes the attribute).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any


def to_dynamo(value: Any) -> Any:
    """Floats become ``Decimal`` (exactly as ``repr`` prints them) and None members of
    maps are dropped, recursively; booleans, ints and strings are kept as they are."""
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, Mapping):
        return {k: to_dynamo(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [to_dynamo(v) for v in value]
    return value


def from_dynamo(value: Any) -> Any:
    """Decimals become int when integral, else float; sets become sorted lists; recursively."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Mapping):
        return {k: from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [from_dynamo(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(from_dynamo(v) for v in value)
    return value
