"""Who is calling: the principal from an API Gateway request context, never from the body.

Looked up in this order (API Gateway Developer Guide, "Lambda proxy integrations in API
Gateway",
https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html):

1. REST API with IAM (SigV4) auth: ``requestContext.identity.userArn``;
2. REST API with a Cognito user-pool authorizer: ``requestContext.authorizer.claims.sub``;
3. HTTP API (v2) JWT authorizer: ``requestContext.authorizer.jwt.claims.sub``;
4. HTTP API (v2) IAM auth: ``requestContext.authorizer.iam.userArn``;
5. REST Lambda authorizer: ``requestContext.authorizer.principalId``.

The local runtime builds the same request context, so the same code applies there.

Every API route asks :func:`caller_of`: a request without a caller is refused the same
way everywhere (:class:`~quotagov.governance.errors.NotAuthenticatedError`, HTTP 401 in
``quotagov.handlers.api_errors``). Behind API Gateway's IAM authorizer such a request
never reaches the function; the rule guards direct invocations and other authorizers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quotagov.governance.errors import NotAuthenticatedError

#: The message of the refusal of a request without a caller.
NO_CALLER = "no caller identity in the request"


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def principal_of(event: Mapping[str, Any]) -> str:
    """The caller's principal (IAM ARN or JWT subject), or ``""`` when the event has none."""
    context = event.get("requestContext") or {}
    for path in (
        ("identity", "userArn"),
        ("authorizer", "claims", "sub"),
        ("authorizer", "jwt", "claims", "sub"),
        ("authorizer", "iam", "userArn"),
        ("authorizer", "principalId"),
    ):
        value = _get(context, *path)
        if isinstance(value, str) and value:
            return value
    return ""


def caller_of(event: Mapping[str, Any]) -> str:
    """The caller's principal (see :func:`principal_of`).

    Raises:
        NotAuthenticatedError: the request context names no caller (:data:`NO_CALLER`).
    """
    principal = principal_of(event)
    if not principal:
        raise NotAuthenticatedError(NO_CALLER)
    return principal
