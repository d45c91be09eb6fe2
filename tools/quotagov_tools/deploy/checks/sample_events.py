"""The ``event`` rule: every function has sample events that fit one of its triggers.

Samples are ``events/<handler module>[-<variant>].json`` (for ``sam local invoke -e``
and ``quotagov invoke``); each file is a JSON object of the kind of one of the
function's triggers (REST proxy, SQS, EventBridge, schedule), an API event hits one of
the function's routes and an EventBridge event matches one of its rule patterns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from quotagov_tools.deploy.checks.findings import Finding
from quotagov_tools.deploy.template import FUNCTION_TYPE, function_property, resources_of_type

_ROUTE_PARAM = re.compile(r"\\\{[^/]+?\\\}")


def _event_kind(event: Mapping[str, Any]) -> str:
    """Which trigger an event looks like: Api, SQS, Schedule, EventBridgeRule or unknown.

    Payload 2.0 events (API Gateway HTTP API, Lambda function URL) count as ``Api``: the
    same HTTP request, for a handler that accepts every shape of it.
    """
    if "httpMethod" in event and "requestContext" in event:
        return "Api"
    if event.get("version") == "2.0" and isinstance(_http(event), Mapping):
        return "Api"
    records = event.get("Records")
    if isinstance(records, list) and records and isinstance(records[0], Mapping):
        return "SQS" if records[0].get("eventSource") == "aws:sqs" else "unknown"
    if "detail-type" in event and "source" in event:
        return "Schedule" if event.get("detail-type") == "Scheduled Event" else "EventBridgeRule"
    return "unknown"


def _pattern_matches(pattern: Any, event: Any) -> bool:
    """EventBridge pattern matching for literal value lists (other filters match anything).

    Leaves of a pattern are arrays; a leaf matches when the event's value (or any item of
    an event array) equals one literal. Content filters (``prefix``, ``anything-but``,
    ...) and CloudFormation intrinsics inside a leaf count as matching.
    """
    if isinstance(pattern, Mapping):
        if not isinstance(event, Mapping):
            return False
        return all(
            key in event and _pattern_matches(sub, event[key]) for key, sub in pattern.items()
        )
    if isinstance(pattern, list):
        if any(isinstance(item, Mapping) for item in pattern):
            return True
        values = event if isinstance(event, list) else [event]
        return any(value in pattern for value in values)
    return bool(pattern == event)


def _http(event: Mapping[str, Any]) -> Any:
    """``requestContext.http`` of a payload 2.0 event (None for other events)."""
    context = event.get("requestContext")
    return context.get("http") if isinstance(context, Mapping) else None


def _method_and_path(event: Mapping[str, Any]) -> tuple[str, str]:
    """The HTTP method and path of a REST (v1) or payload 2.0 event."""
    if "httpMethod" in event:
        return str(event.get("httpMethod", "")), str(event.get("path", ""))
    http = _http(event) or {}
    return str(http.get("method", "")), str(event.get("rawPath") or http.get("path") or "")


def _route_matches(route: Mapping[str, Any], event: Mapping[str, Any]) -> bool:
    """Whether an API event's method and resource (or path) hit the ``Api`` event ``route``."""
    method = str(route.get("Method", "")).upper()
    event_method, event_path = _method_and_path(event)
    if method not in ("ANY", event_method.upper()):
        return False
    path = str(route.get("Path", ""))
    if event.get("resource") == path:
        return True
    regex = "^" + _ROUTE_PARAM.sub("[^/]+", re.escape(path)) + "$"
    return re.match(regex, event_path) is not None


def _event_fits(kind: str, event: Mapping[str, Any], triggers: Sequence[Mapping[str, Any]]) -> str:
    """Empty when ``event`` fits one of the function's ``triggers``, else the reason."""
    same_kind = [t for t in triggers if t.get("Type") == kind]
    if not same_kind:
        kinds = sorted({str(t.get("Type")) for t in triggers}) or ["none"]
        return f"is an event of type {kind} but the function's triggers are {', '.join(kinds)}"
    if kind == "Api":
        routes = [t.get("Properties") or {} for t in same_kind]
        if not any(_route_matches(route, event) for route in routes):
            listed = ", ".join(f"{r.get('Method', '')} {r.get('Path', '')}" for r in routes)
            event_method, event_path = _method_and_path(event)
            hit = f"{event_method} {event.get('resource') or event_path}"
            return f"{hit} hits none of the function's routes ({listed})"
    if kind == "EventBridgeRule":
        patterns = [(t.get("Properties") or {}).get("Pattern") or {} for t in same_kind]
        if not any(_pattern_matches(p, event) for p in patterns):
            return "matches none of the function's EventBridge rule patterns"
    return ""


def _sample_files(events_dir: Path, module: str) -> list[Path]:
    """``<module>.json`` and ``<module>-<variant>.json`` in ``events_dir``, sorted."""
    return sorted(
        path
        for path in events_dir.glob(f"{module}*.json")
        if path.stem == module or path.stem.startswith(f"{module}-")
    )


def _sample_finding(
    logical_id: str, path: Path, triggers: Sequence[Mapping[str, Any]]
) -> Finding | None:
    """Why the sample event at ``path`` does not do for the function, or ``None``."""
    try:
        event = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return Finding("event", logical_id, f"{path.name}: not JSON ({exc})")
    if not isinstance(event, Mapping):
        return Finding("event", logical_id, f"{path.name}: not a JSON object")
    reason = _event_fits(_event_kind(event), event, triggers)
    return Finding("event", logical_id, f"{path.name} {reason}") if reason else None


def check_events(template: Mapping[str, Any], events_dir: str | Path) -> list[Finding]:
    """Every function has fitting sample events ``<module>[-<variant>].json`` in ``events_dir``.

    Returns:
        ``event`` findings, sorted: no sample for a function, a file that is not a JSON
        object, or one that fits none of the function's triggers. A function whose
        ``Handler`` is not ``module.attribute`` is left to
        :func:`~quotagov_tools.deploy.checks.handlers.check_handlers`.
    """
    events_dir = Path(events_dir)
    findings: list[Finding] = []
    for logical_id in resources_of_type(template, FUNCTION_TYPE):
        handler = function_property(template, logical_id, "Handler")
        if not isinstance(handler, str) or "." not in handler:
            continue  # reported by check_handlers
        module = handler.rsplit(".", 2)[-2]
        files = _sample_files(events_dir, module)
        if not files:
            message = f"no sample event {events_dir.name}/{module}.json or {module}-<variant>.json"
            findings.append(Finding("event", logical_id, message))
            continue
        events = function_property(template, logical_id, "Events") or {}
        triggers = [t for t in events.values() if isinstance(t, Mapping)]
        for path in files:
            finding = _sample_finding(logical_id, path, triggers)
            if finding is not None:
                findings.append(finding)
    return sorted(findings)
