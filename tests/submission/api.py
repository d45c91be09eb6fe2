"""Calling the jobs API handler the way API Gateway does (REST proxy events)."""

from __future__ import annotations

import json
from typing import Any

from support.events import rest_event
from support.lambda_context import LambdaContext
from support.principals import ALICE


def post_jobs(
    body: Any,
    principal: str | None = ALICE,
    *,
    raw: str | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """``POST /jobs`` with ``body`` as the caller ``principal``; returns (status, JSON reply).

    ``headers`` replace the event's headers of the same name (e.g. ``Content-Type``).
    """
    from quotagov.handlers import jobs_api

    event = rest_event("jobs_api-submit", body=raw if raw is not None else json.dumps(body))
    _set_principal(event, principal)
    for name, value in (headers or {}).items():
        for key in [k for k in event["headers"] if k.lower() == name.lower()]:
            del event["headers"][key]
        for key in [k for k in event.get("multiValueHeaders") or {} if k.lower() == name.lower()]:
            del event["multiValueHeaders"][key]
        event["headers"][name] = value
        event.setdefault("multiValueHeaders", {})[name] = [value]
    reply = jobs_api.handler(event, LambdaContext())
    return reply["statusCode"], json.loads(reply["body"])


def get_job(job_id: str, principal: str | None = ALICE) -> tuple[int, Any]:
    """``GET /jobs/{jobId}`` as ``principal``; returns (status, JSON reply)."""
    from quotagov.handlers import jobs_api

    event = rest_event("jobs_api-get", path=f"/jobs/{job_id}", path_parameters={"jobId": job_id})
    _set_principal(event, principal)
    reply = jobs_api.handler(event, LambdaContext())
    return reply["statusCode"], json.loads(reply["body"])


def _set_principal(event: dict[str, Any], principal: str | None) -> None:
    identity = event["requestContext"]["identity"]
    identity["userArn"] = principal
    identity["caller"] = identity["user"] = principal.rsplit("/", 1)[-1] if principal else None
