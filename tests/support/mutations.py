"""Hypothesis strategies that mutate a valid JSON document (for the property tests).

:func:`mutated` draws a copy of a document with a few changes, each one of: a member set
to an arbitrary JSON value (huge and non-finite numbers, long and odd strings, nested
containers), a member deleted, an unknown member added, a list emptied; the whole body
may instead be replaced by text that is not the document at all.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

#: JSON leaves that have broken handlers before: huge ints, NaN/Infinity (Python's
#: json module reads and writes them), empty and long strings, odd characters.
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([0, -1, 2**31, 2**63, 10**40, -(10**40)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["", " ", "a" * 300, "\u0000", "💥", "../..", "${x}", "nan"]),
)
VALUES = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=8,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out += _paths(value, (*prefix, index))
    return out


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        doc = doc[part]
    return doc


@st.composite
def mutated(draw: st.DrawFn, document: Any, max_changes: int = 3) -> Any:
    """A copy of ``document`` with 1 to ``max_changes`` random changes."""
    doc = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, max_changes))):
        paths = [p for p in _paths(doc) if p]
        if not paths or not isinstance(doc, dict | list):
            break
        path = draw(st.sampled_from(paths))
        parent = _parent(doc, path)
        kind = draw(st.sampled_from(["set", "delete", "add", "empty"]))
        if kind == "set":
            parent[path[-1]] = draw(VALUES)
        elif kind == "delete":
            del parent[path[-1]]
        elif kind == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=12))] = draw(VALUES)
        elif kind == "empty" and isinstance(parent[path[-1]], list | dict):
            parent[path[-1]] = type(parent[path[-1]])()
    return doc


def bodies(document: Any) -> st.SearchStrategy[str]:
    """Request bodies: mostly the mutated document as JSON, sometimes not JSON at all."""
    return st.one_of(
        mutated(document).map(json.dumps),
        mutated(document).map(lambda d: json.dumps(d)[: max(1, len(json.dumps(d)) // 2)]),
        st.text(max_size=60),
        st.sampled_from(["", "null", "[]", "1e999", '"x"', "[" * 200, "{" * 3]),
    )
