"""The sample events of ``events/`` (as AWS delivers them), and requests built from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: The repository's sample events, one ``<handler module>[-<variant>].json`` per case.
EVENTS = ROOT / "events"

_KEEP: Any = object()


def load_event(name: str) -> dict[str, Any]:
    """``events/<name>.json``, a fresh copy."""
    data: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    return data


def rest_event(
    name: str,
    *,
    path: str | None = None,
    path_parameters: dict[str, str] | None = None,
    body: Any = _KEEP,
    principal: str | None = _KEEP,
) -> dict[str, Any]:
    """The API Gateway REST proxy event ``events/<name>.json`` with what is given changed:
    ``path`` and ``pathParameters``, ``body`` (a string or ``None`` as is, anything else
    JSON-encoded), the caller's ``requestContext.identity.userArn``."""
    event = load_event(name)
    if path is not None:
        event["path"] = path
    if path_parameters is not None:
        event["pathParameters"] = path_parameters
    if body is not _KEEP:
        event["body"] = body if body is None or isinstance(body, str) else json.dumps(body)
    if principal is not _KEEP:
        event["requestContext"]["identity"]["userArn"] = principal
    return event
