"""Handlers for the runtime tests on the mini template: they show what they received."""

from __future__ import annotations

import json
import os
from typing import Any

RECEIVED: list[tuple[str, dict[str, Any]]] = []


def echo(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Answer with the event, the context's function name and selected environment."""
    env = {k: os.environ.get(k) for k in ("JOBS_TABLE", "SUBMISSION_QUEUE_URL", "POLICY_PARAMETER")}
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"event": event, "function": context.function_name, "env": env}),
    }


def worker(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Fail the records whose body says ``fail``; remember every record."""
    failures = []
    for record in event["Records"]:
        RECEIVED.append(("worker", record))
        if record["body"] == "fail":
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}


def remember(event: dict[str, Any], context: Any) -> None:
    """Remember an EventBridge envelope; fail on a detail with ``"fail": true``."""
    RECEIVED.append(("state", event))
    if (event.get("detail") or {}).get("fail"):
        raise RuntimeError("asked to fail")
