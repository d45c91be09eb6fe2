"""Add-only versions (last known configurations, decisions by subject) in the audit table.

Items: ``pk`` = ``<namespace>#<key>``, ``sk`` = ``<at_ms, 13 digits>#<tag>``, plus
``value`` (a map) and ``at`` (epoch ms). Each is put with ``attribute_not_exists(pk)``
and never changed; a repeated put of the same version is a no-op. The latest version
before a time is one ``Query`` (descending, ``Limit`` 1); the versions in a range are one
paginated ``Query`` (ascending, so by time, then tag). Same table and permissions as
:mod:`quotagov.adapters.dynamodb_audit` (``PutItem``, ``Query``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from quotagov.adapters.dynamodb_audit import from_item, to_item
from quotagov.governance.canonical import normalize
from quotagov.governance.ports import Version


def _sk(at_ms: int, tag: str = "") -> str:
    return f"{at_ms:013d}#{tag}"


class DynamoDBVersionStore:
    """:class:`~quotagov.governance.ports.audit.VersionStore` over the audit table.

    Args:
        table_name: the ``AuditTable`` name.
        client: a boto3 DynamoDB client (low level).
    """

    def __init__(self, table_name: str, client: Any) -> None:
        self.table_name = table_name
        self._client = client

    def put(self, namespace: str, key: str, at_ms: int, tag: str, value: Mapping[str, Any]) -> None:
        """Store the version if absent (``attribute_not_exists(pk)``); an existing one wins.

        Raises:
            botocore.exceptions.ClientError: for failures other than the version existing.
        """
        item = {"pk": f"{namespace}#{key}", "sk": _sk(at_ms, tag), "at": at_ms}
        item["value"] = normalize(dict(value))
        try:
            self._client.put_item(
                TableName=self.table_name,
                Item=to_item(item),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise

    def latest(
        self, namespace: str, key: str, *, before_ms: int | None = None, since_ms: int = 0
    ) -> Version | None:
        """The newest version with ``since_ms <= at < before_ms`` (consistent read), or None."""
        upper = _sk(before_ms) if before_ms is not None else "9" * 14
        answer = self._client.query(
            TableName=self.table_name,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues={
                ":pk": {"S": f"{namespace}#{key}"},
                ":low": {"S": _sk(since_ms)},
                ":high": {"S": upper},
            },
            ConsistentRead=True,
            ScanIndexForward=False,
            Limit=2,
        )
        for raw in answer.get("Items", []):
            item = from_item(raw)
            if str(item["sk"]) >= upper and before_ms is not None:
                continue  # BETWEEN is inclusive; the bound itself is not "before"
            return Version(
                at_ms=int(item["at"]),
                tag=str(item["sk"]).split("#", 1)[1],
                value=dict(item["value"]),
            )
        return None

    def versions(
        self, namespace: str, key: str, *, since_ms: int = 0, before_ms: int | None = None
    ) -> list[Version]:
        """Every version with ``since_ms <= at < before_ms``, oldest first (consistent read;
        the sort key orders them by time, then tag)."""
        upper = _sk(before_ms) if before_ms is not None else "9" * 14
        paginator = self._client.get_paginator("query")
        out: list[Version] = []
        for page in paginator.paginate(
            TableName=self.table_name,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues={
                ":pk": {"S": f"{namespace}#{key}"},
                ":low": {"S": _sk(since_ms)},
                ":high": {"S": upper},
            },
            ConsistentRead=True,
        ):
            for raw in page.get("Items", []):
                item = from_item(raw)
                if before_ms is not None and str(item["sk"]) >= upper:
                    continue  # BETWEEN is inclusive; the bound itself is not "before"
                out.append(
                    Version(
                        at_ms=int(item["at"]),
                        tag=str(item["sk"]).split("#", 1)[1],
                        value=dict(item["value"]),
                    )
                )
        return out
