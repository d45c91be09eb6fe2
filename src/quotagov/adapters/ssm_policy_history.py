"""The policy parameter's history through boto3 SSM ``GetParameterHistory`` (paginated,
values decrypted for a SecureString). IAM: ``ssm:GetParameterHistory`` on the parameter
(https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_GetParameterHistory.html)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from quotagov.governance.ports.policy_history import PolicyHistoryError, PolicyVersion


class SsmPolicyHistory:
    """:class:`~quotagov.governance.ports.policy_history.PolicyHistory` on SSM.

    Args:
        client: a boto3 ``ssm`` client (a new one when None).
    """

    def __init__(self, client: Any = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("ssm")
        self._client = client

    def version(self, name: str, version: int | None = None) -> PolicyVersion | None:
        """See the port. A missing parameter (``ParameterNotFound``) is None."""
        found: dict[str, Any] | None = None
        try:
            pages = self._client.get_paginator("get_parameter_history").paginate(
                Name=name, WithDecryption=True
            )
            for page in pages:
                for item in page.get("Parameters", []):
                    if version is None:
                        if found is None or int(item["Version"]) > int(found["Version"]):
                            found = item
                    elif int(item["Version"]) == version:
                        found = item
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ParameterNotFound":
                return None
            raise PolicyHistoryError(f"GetParameterHistory {name}: {exc}") from exc
        except BotoCoreError as exc:
            raise PolicyHistoryError(f"GetParameterHistory {name}: {exc}") from exc
        if found is None:
            return None
        modified = found.get("LastModifiedDate")
        return PolicyVersion(
            version=int(found["Version"]),
            text=str(found.get("Value", "")),
            modified_by=found.get("LastModifiedUser"),
            modified_at=modified.timestamp() if modified is not None else 0.0,
        )
