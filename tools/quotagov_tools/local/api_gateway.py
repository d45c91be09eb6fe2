"""API Gateway's part in the local runtime: a request in, a REST proxy event, a response out.

The route table is the template's ``Api`` events
(:meth:`~quotagov_tools.local.stack.Stack.api_routes`).
A request that hits no route gets API Gateway's 404 ``Not Found``; one to an
IAM-authorised route without a caller gets 403 ``Missing Authentication Token``; a
handler that raises or returns something other than a proxy result gets 502
``Internal server error``. Otherwise the proxy result becomes the HTTP response
(``multiValueHeaders`` joined with ``, ``, a base64 body decoded).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quotagov_tools.local.invoker import Invocation
from quotagov_tools.local.lambda_events import rest_api_event
from quotagov_tools.local.stack import ApiRoute, Stack

_JSON = {"Content-Type": "application/json"}


@dataclass
class ApiResponse:
    """What the API Gateway proxy returns to the HTTP client."""

    status: int
    headers: dict[str, str]
    body: str

    def json(self) -> Any:
        """The body parsed as JSON (``None`` when empty)."""
        return json.loads(self.body) if self.body else None


def not_found() -> ApiResponse:
    """API Gateway's answer to a request that hits no route."""
    return ApiResponse(404, dict(_JSON), '{"message":"Not Found"}')


def missing_authentication_token() -> ApiResponse:
    """API Gateway's answer to an unsigned request to an IAM-authorised route."""
    return ApiResponse(403, dict(_JSON), '{"message":"Missing Authentication Token"}')


def find_route(
    routes: Sequence[ApiRoute], method: str, path: str
) -> tuple[ApiRoute, dict[str, str]] | None:
    """The first route ``method path`` hits, with its path parameters (``None``: no route)."""
    for route in routes:
        found = route.match(method, path)
        if found is not None:
            return route, found
    return None


def request_body(
    body: bytes | str | dict[str, Any] | None, headers: Mapping[str, str] | None
) -> tuple[bytes | None, dict[str, str]]:
    """The raw body and headers as sent: a dict is JSON (``Content-Type`` defaulted)."""
    sent = dict(headers or {})
    if isinstance(body, dict):
        body = json.dumps(body)
        sent.setdefault("Content-Type", "application/json")
    raw = body.encode("utf-8") if isinstance(body, str) else body
    return raw, sent


def proxy_event(
    stack: Stack,
    found: tuple[ApiRoute, dict[str, str]],
    *,
    method: str,
    path: str,
    principal: str | None,
    body: bytes | None,
    headers: Mapping[str, str],
    query: Mapping[str, list[str]] | None,
    now: Callable[[], float],
) -> dict[str, Any]:
    """The REST proxy event of one request to the route ``found`` (with its parameters).

    The caller is in ``requestContext.identity`` only for an IAM-authorised route; the
    stage, API id and ``BinaryMediaTypes`` are the route's API's, from the template.
    """
    route, params = found
    return rest_api_event(
        method=method,
        resource=route.path,
        path=path,
        path_parameters=params,
        headers=headers,
        query=query,
        body=body,
        principal_arn=principal if route.iam_auth else None,
        binary_media_types=stack.binary_media_types(route.rest_api),
        stage=stack.stage_name(route.rest_api),
        api_id=str(stack.ref(route.rest_api)),
        now=now,
    )


def proxy_response(record: Invocation) -> ApiResponse:
    """The HTTP response API Gateway makes of the handler's proxy result (502 if none)."""
    if not record.ok or not isinstance(record.result, dict):
        return ApiResponse(502, dict(_JSON), '{"message": "Internal server error"}')
    result = record.result
    headers = {str(k): str(v) for k, v in (result.get("headers") or {}).items()}
    for key, values in (result.get("multiValueHeaders") or {}).items():
        headers[str(key)] = ", ".join(str(v) for v in values)
    text = result.get("body") or ""
    if result.get("isBase64Encoded"):
        text = base64.b64decode(text).decode("utf-8", "replace")
    return ApiResponse(int(result.get("statusCode", 200)), headers, text)
