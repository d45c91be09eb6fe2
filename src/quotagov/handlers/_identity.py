"""Who is calling: the caller's principal from an API Gateway REST request context.

The identity always comes from the request context API Gateway fills in after
authenticating the caller, never from the body (reference §8):

- IAM (SigV4) auth: ``requestContext.identity.userArn``, e.g.
  ``arn:aws:sts::111122223333:assumed-role/researcher/alice``;
- Cognito user-pool authorizer: ``requestContext.authorizer.claims.sub``;
- Lambda authorizer: ``requestContext.authorizer.principalId``.

Any of these objects may be missing or ``null``; nothing here raises on odd shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def caller_principal(event: Mapping[str, Any]) -> str | None:
    """The authenticated caller of a REST (v1) proxy event, or None when anonymous."""
    context = _mapping(event.get("requestContext"))
    identity = _mapping(context.get("identity"))
    user_arn = identity.get("userArn")
    if isinstance(user_arn, str) and user_arn:
        return user_arn
    authorizer = _mapping(context.get("authorizer"))
    claims = _mapping(authorizer.get("claims"))
    subject = claims.get("sub")
    if isinstance(subject, str) and subject:
        return subject
    principal_id = authorizer.get("principalId")
    if isinstance(principal_id, str) and principal_id:
        return principal_id
    return None
