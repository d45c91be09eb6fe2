"""Who is calling: the principal from an API Gateway request context, never from the body.

Looked up in this order (reference facts, section 8):

1. REST API with IAM (SigV4) auth: ``requestContext.identity.userArn``;
2. REST API with a Cognito user-pool authorizer: ``requestContext.authorizer.claims.sub``;
3. HTTP API (v2) JWT authorizer: ``requestContext.authorizer.jwt.claims.sub``;
4. HTTP API (v2) IAM auth: ``requestContext.authorizer.iam.userArn``;
5. REST Lambda authorizer: ``requestContext.authorizer.principalId``.

The local runtime builds the same request context, so the same code applies there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
