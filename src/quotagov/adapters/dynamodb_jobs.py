"""``JobsTable`` in DynamoDB: the :class:`~quotagov.governance.model.job.JobsRepository` adapter.

Table layout (``docs/architecture.md``): partition key ``pk`` (S) = submission id;
global secondary index ``byBatchJobId`` on ``batchJobId`` (S), projection ALL. The
index is sparse: a record has ``batchJobId`` only once Batch accepted its service job.
GSI ``byState`` on ``state`` (S) + ``updatedAt`` (N), projection ALL: the reconciler's
query for submissions stuck ``QUEUED``.

Every write is conditional (``attribute_not_exists(pk)`` on create, ``version`` and/or
``state`` on update), so two writers never silently overwrite each other.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from quotagov.adapters.dynamodb_values import from_dynamo, to_dynamo
from quotagov.clock import Clock
from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.ports import (
    JobRecordConflictError,
    JobRecordExistsError,
    JobRecordNotFoundError,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

#: Name of the GSI on ``batchJobId``.
BY_BATCH_JOB_ID_INDEX = "byBatchJobId"
#: ``GET /jobs?team=``: the index of a team's records, newest first.
BY_TEAM_INDEX = "byTeam"
#: The ``byTeam`` index's partition key: the record's ``team`` (never empty).
TEAM_KEY = "teamKey"
#: Name of the GSI on ``state`` + ``updatedAt``.
BY_STATE_INDEX = "byState"


def jobs_table_definition(table_name: str) -> dict[str, Any]:
    """``CreateTable`` arguments for ``JobsTable`` (on-demand), for the local runtime and tests.

    Mirrors the template: key ``pk`` (S), GSI ``byBatchJobId`` on ``batchJobId`` (S),
    GSI ``byTeam`` on ``teamKey`` (S) + ``createdAt`` (N),
    GSI ``byState`` on ``state`` (S) + ``updatedAt`` (N).
    """
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "batchJobId", "AttributeType": "S"},
            {"AttributeName": TEAM_KEY, "AttributeType": "S"},
            {"AttributeName": "createdAt", "AttributeType": "N"},
            {"AttributeName": "state", "AttributeType": "S"},
            {"AttributeName": "updatedAt", "AttributeType": "N"},
        ],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": BY_BATCH_JOB_ID_INDEX,
                "KeySchema": [{"AttributeName": "batchJobId", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": BY_TEAM_INDEX,
                "KeySchema": [
                    {"AttributeName": TEAM_KEY, "KeyType": "HASH"},
                    {"AttributeName": "createdAt", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": BY_STATE_INDEX,
                "KeySchema": [
                    {"AttributeName": "state", "KeyType": "HASH"},
                    {"AttributeName": "updatedAt", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
        ],
    }


def _record(item: Mapping[str, Any]) -> JobRecord:
    """The record of a stored item, without the index key this adapter adds."""
    return JobRecord.from_item({k: v for k, v in item.items() if k != TEAM_KEY})


def with_index_keys(item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` plus ``teamKey`` (= ``team``) when it has a team: the ``byTeam`` index's
    key. An empty string may not be an index key in DynamoDB, so records without a team
    (a malformed queue message) simply stay out of the index."""
    out = dict(item)
    if out.get("team"):
        out[TEAM_KEY] = out["team"]
    return out


_MANAGED = frozenset({"pk", "version", "updatedAt"})
_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def serialize_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """Plain attributes -> DynamoDB wire format (``{"S": ...}``, ``{"N": ...}``, ...)."""
    return {k: _serializer.serialize(to_dynamo(v)) for k, v in item.items() if v is not None}


def deserialize_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """DynamoDB wire format -> plain attributes (numbers as int or float)."""
    return {k: from_dynamo(_deserializer.deserialize(v)) for k, v in item.items()}


class DynamoDBJobsRepository:
    """:class:`~quotagov.governance.model.job.JobsRepository` on a DynamoDB table.

    Args:
        table_name: the ``JobsTable`` name (``JOBS_TABLE``).
        clock: gives ``updatedAt`` (epoch seconds).
        client: a boto3 DynamoDB client (built with the default session when None).

    IAM: ``dynamodb:PutItem``, ``GetItem``, ``UpdateItem`` on the table and
    ``dynamodb:Query`` on ``<table>/index/byBatchJobId``.
    """

    def __init__(self, table_name: str, clock: Clock, client: DynamoDBClient | None = None) -> None:
        if client is None:
            from quotagov.adapters import aws_clients

            client = aws_clients.client("dynamodb")
        self._client = client
        self._table = table_name
        self._clock = clock

    def create(self, record: JobRecord) -> JobRecord:
        """Put ``record`` if no record has its ``pk``; returns it with ``version`` 1.

        Raises:
            JobRecordExistsError: the ``pk`` is taken.
        """
        now = int(self._clock.now())
        stored = record.model_copy(
            update={"version": 1, "updatedAt": now, "createdAt": record.createdAt or now}
        )
        try:
            self._client.put_item(
                TableName=self._table,
                Item=serialize_item(with_index_keys(stored.to_item())),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if _is_condition_failure(exc):
                raise JobRecordExistsError(record.pk, "a record with this id exists") from None
            raise
        return stored

    def get(self, submission_id: str) -> JobRecord | None:
        """Strongly consistent read of ``submission_id``; None when absent."""
        response = self._client.get_item(
            TableName=self._table, Key={"pk": {"S": submission_id}}, ConsistentRead=True
        )
        item = response.get("Item")
        return _record(deserialize_item(item)) if item else None

    def list_team(
        self,
        team: str,
        *,
        limit: int,
        start: Mapping[str, Any] | None = None,
        keep: Callable[[JobRecord], bool] | None = None,
    ) -> tuple[list[JobRecord], dict[str, Any] | None]:
        """Up to ``limit`` records of ``team``, newest first (index ``byTeam``), that
        ``keep`` accepts; and where the next page starts (None: no more).

        ``start`` is a key returned by an earlier call. Pages are read until ``limit``
        records are kept or the index is exhausted, so a filter never yields a short
        page while more records exist.

        Raises:
            ValueError: ``start`` is not a key of ``team``'s listing (wrong attributes,
                another team).
        """
        if start is not None and (
            set(start) != {"pk", TEAM_KEY, "createdAt"} or start.get(TEAM_KEY) != team
        ):
            raise ValueError("start: not a key of this team's listing")
        kept: list[JobRecord] = []
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": BY_TEAM_INDEX,
            "KeyConditionExpression": "#t = :team",
            "ExpressionAttributeNames": {"#t": TEAM_KEY},
            "ExpressionAttributeValues": {":team": {"S": team}},
            "ScanIndexForward": False,
            "Limit": max(limit, 25),
        }
        if start:
            kwargs["ExclusiveStartKey"] = serialize_item(start)
        while True:
            page = self._client.query(**kwargs)
            for item in page.get("Items", []):
                record = _record(deserialize_item(item))
                if keep is None or keep(record):
                    kept.append(record)
                if len(kept) == limit:
                    last = record
                    more = item is not page["Items"][-1] or "LastEvaluatedKey" in page
                    key = {"pk": last.pk, TEAM_KEY: team, "createdAt": last.createdAt}
                    return kept, key if more else None
            if "LastEvaluatedKey" not in page:
                return kept, None
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def get_by_batch_job_id(self, batch_job_id: str) -> JobRecord | None:
        """The record of service job ``batch_job_id`` via GSI ``byBatchJobId``; None when absent."""
        response = self._client.query(
            TableName=self._table,
            IndexName=BY_BATCH_JOB_ID_INDEX,
            KeyConditionExpression="batchJobId = :id",
            ExpressionAttributeValues={":id": {"S": batch_job_id}},
            Limit=1,
        )
        items = response.get("Items", [])
        return _record(deserialize_item(items[0])) if items else None

    def in_state_since(
        self, state: SubmissionState, updated_before: int, *, limit: int
    ) -> list[JobRecord]:
        """Records in ``state`` with ``updatedAt <= updated_before``, oldest first (GSI
        ``byState``), at most ``limit``; pages through the index as needed.

        IAM: ``dynamodb:Query`` on ``<table>/index/byState``.
        """
        found: list[JobRecord] = []
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": BY_STATE_INDEX,
            "KeyConditionExpression": "#state = :state AND updatedAt <= :before",
            "ExpressionAttributeNames": {"#state": "state"},
            "ExpressionAttributeValues": {
                ":state": {"S": str(state)},
                ":before": {"N": str(int(updated_before))},
            },
            "ScanIndexForward": True,
        }
        while len(found) < limit:
            response = self._client.query(**request, Limit=limit - len(found))
            found.extend(_record(deserialize_item(item)) for item in response.get("Items", []))
            last = response.get("LastEvaluatedKey")
            if not last:
                break
            request["ExclusiveStartKey"] = last
        return found

    def update(
        self,
        submission_id: str,
        changes: Mapping[str, Any],
        *,
        expected_version: int | None = None,
        expected_states: Collection[SubmissionState] | None = None,
    ) -> JobRecord:
        """Conditionally set (or, for None values, remove) attributes; see the port.

        Raises:
            JobRecordNotFoundError, JobRecordConflictError, ValueError.
        """
        managed = _MANAGED.intersection(changes)
        if managed:
            raise ValueError(f"changes: {sorted(managed)} are managed by the repository")
        names: dict[str, str] = {"#version": "version", "#updatedAt": "updatedAt"}
        values: dict[str, Any] = {
            ":one": {"N": "1"},
            ":now": _serializer.serialize(int(self._clock.now())),
        }
        sets = ["#version = #version + :one", "#updatedAt = :now"]
        removes: list[str] = []
        for i, (name, value) in enumerate(sorted(changes.items())):
            names[f"#a{i}"] = name
            if value is None:
                removes.append(f"#a{i}")
            else:
                sets.append(f"#a{i} = :v{i}")
                values[f":v{i}"] = _serializer.serialize(to_dynamo(_plain(value)))
        conditions = ["attribute_exists(pk)"]
        if expected_version is not None:
            conditions.append("#version = :expectedVersion")
            values[":expectedVersion"] = {"N": str(expected_version)}
        if expected_states:
            names["#state"] = "state"
            keys = []
            for j, state in enumerate(sorted(expected_states)):
                values[f":s{j}"] = {"S": str(state)}
                keys.append(f":s{j}")
            conditions.append(f"#state IN ({', '.join(keys)})")
        expression = "SET " + ", ".join(sets)
        if removes:
            expression += " REMOVE " + ", ".join(removes)
        try:
            response = self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": submission_id}},
                UpdateExpression=expression,
                ConditionExpression=" AND ".join(conditions),
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if not _is_condition_failure(exc):
                raise
            old: Any = exc.response.get("Item")
            if not isinstance(old, Mapping) or not old:
                raise JobRecordNotFoundError(submission_id, "no such record") from None
            current = _record(deserialize_item(old))
            raise JobRecordConflictError(
                submission_id,
                f"expected version {expected_version} and state in "
                f"{sorted(expected_states or [])}, found version {current.version} "
                f"and state {current.state}",
                current,
            ) from None
        return _record(deserialize_item(response["Attributes"]))


def _plain(value: Any) -> Any:
    """Enum members and pydantic models become plain JSON-like values."""
    if isinstance(value, SubmissionState):
        return str(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _is_condition_failure(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
