"""``JobsTable`` in DynamoDB: the one repository of job items
(:class:`~quotagov.governance.ports.jobs.JobsRepository`), boto3 client style.

Table layout (``docs/architecture.md``): partition key ``pk`` (S) = submission id;
global secondary index ``byBatchJobId`` on ``batchJobId`` (S), projection ALL. The
index is sparse: a record has ``batchJobId`` only once Batch accepted its service job.
GSI ``byState`` on ``state`` (S) + ``updatedAt`` (N), projection ALL: the reconciler's
query for submissions stuck ``QUEUED``. GSI ``byTeam`` on ``teamKey`` + ``createdAt``.

Every write of a job item is conditional, and each method is named after its
condition: :meth:`~DynamoDBJobsRepository.create_if_absent`,
:meth:`~DynamoDBJobsRepository.update_if_expected`,
:meth:`~DynamoDBJobsRepository.save_job_state_if_version`,
:meth:`~DynamoDBJobsRepository.move_disposition_if_status`,
:meth:`~DynamoDBJobsRepository.mark_submitted_if_job_unset`. So two writers never
silently overwrite each other, and late or concurrent events never regress a record.

A write whose answer was lost (botocore re-sends it, and the re-sent copy meets the
state the first send left: DynamoDB error handling,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html)
is recognised where a caller could not tell it from another writer's: the job-state
and disposition writes read the item back and compare it with what they wrote.

``FOREIGN#<jobId>`` items note events of service jobs quotagov did not submit. They
carry ``foreignJobId`` (not ``batchJobId``) so they never appear in the
``byBatchJobId`` index, and no ``team``, so they are in no listing.

Numbers: floats are written as ``Decimal`` and read back as ``int``/``float``
(:mod:`quotagov.adapters.dynamodb_values`); None values are left out, never stored as
``NULL``.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
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
    StaleJobStateError,
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
#: ``pk`` prefix of the items noting service jobs quotagov did not submit.
FOREIGN_PREFIX = "FOREIGN#"


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
    """:class:`~quotagov.governance.ports.jobs.JobsRepository` on a DynamoDB table.

    Args:
        table_name: the ``JobsTable`` name (``JOBS_TABLE``).
        clock: gives ``updatedAt`` (epoch seconds).
        client: a boto3 DynamoDB client (built with the default session when None).
        id_cache_size: how many ``batchJobId -> pk`` answers of
            :meth:`find_submission_id` a warm function remembers.

    IAM: ``dynamodb:PutItem``, ``GetItem``, ``UpdateItem``, ``Query`` on the table and
    ``dynamodb:Query`` on its indexes (``<table>/index/*``).
    """

    def __init__(
        self,
        table_name: str,
        clock: Clock,
        client: DynamoDBClient | None = None,
        *,
        id_cache_size: int = 4096,
    ) -> None:
        if client is None:
            from quotagov.adapters import aws_clients

            client = aws_clients.client("dynamodb")
        self._client = client
        self._table = table_name
        self._clock = clock
        self._ids: OrderedDict[str, str] = OrderedDict()
        self._id_cache_size = id_cache_size

    def create_if_absent(self, record: JobRecord) -> JobRecord:
        """Put ``record`` if no item has its ``pk`` (condition
        ``attribute_not_exists(pk)``); returns it with ``version`` 1 and ``updatedAt``
        now (``createdAt`` too when unset).

        Raises:
            JobRecordExistsError: the ``pk`` is taken (nothing written).
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
        item = self._item(submission_id)
        return _record(item) if item is not None else None

    def _item(self, submission_id: str) -> dict[str, Any] | None:
        """The stored item as plain attributes (strongly consistent), None when absent."""
        response = self._client.get_item(
            TableName=self._table, Key={"pk": {"S": submission_id}}, ConsistentRead=True
        )
        item = response.get("Item")
        return deserialize_item(item) if item else None

    def find_submission_id(self, batch_job_id: str) -> str | None:
        """The ``pk`` whose ``batchJobId`` is ``batch_job_id`` (index ``byBatchJobId``,
        eventually consistent; only ``pk`` is read), None when none is.

        Found ids are remembered (a record's ``batchJobId`` never changes once set), so
        a warm function reads the index once per job; misses are never remembered.
        """
        if batch_job_id in self._ids:
            self._ids.move_to_end(batch_job_id)
            return self._ids[batch_job_id]
        response = self._client.query(
            TableName=self._table,
            IndexName=BY_BATCH_JOB_ID_INDEX,
            KeyConditionExpression="batchJobId = :id",
            ExpressionAttributeValues={":id": {"S": batch_job_id}},
            ProjectionExpression="pk",
        )
        found = next(
            (
                str(item["pk"]["S"])
                for item in response.get("Items", [])
                if not str(item["pk"]["S"]).startswith(FOREIGN_PREFIX)
            ),
            None,
        )
        if found is None:
            return None
        self._ids[batch_job_id] = found
        if len(self._ids) > self._id_cache_size:
            self._ids.popitem(last=False)
        return found

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

    def update_if_expected(
        self,
        submission_id: str,
        changes: Mapping[str, Any],
        *,
        expected_version: int | None = None,
        expected_states: Collection[SubmissionState] | None = None,
    ) -> JobRecord:
        """Set (or, for None values, remove) attributes if the item exists, its
        ``version`` is ``expected_version`` (when given) and its ``state`` one of
        ``expected_states`` (when given); bumps ``version`` and ``updatedAt``.

        Raises:
            JobRecordNotFoundError: no item has this ``pk``.
            JobRecordConflictError: the version or state was another (``current``
                holds the stored record, returned by the failed write itself).
            ValueError: ``changes`` names ``pk``, ``version`` or ``updatedAt``.
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
            current = _refused(exc, submission_id)
            raise JobRecordConflictError(
                submission_id,
                f"expected version {expected_version} and state in "
                f"{sorted(expected_states or [])}, found version {current.version} "
                f"and state {current.state}",
                current,
            ) from None
        return _record(deserialize_item(response["Attributes"]))

    def save_job_state_if_version(
        self,
        submission_id: str,
        *,
        facts: Mapping[str, Any],
        summary: Mapping[str, Any],
        expected_version: int,
    ) -> int:
        """Write ``jobStateFacts``, ``jobState`` and ``jobStateVersion``
        (``expected_version + 1``) if the item exists and its ``jobStateVersion`` is
        ``expected_version`` (0: the attribute is absent). Returns the new version, also
        when the write's answer was lost and botocore's re-sent copy met the state it
        had written (the stored version is ``expected_version + 1`` with these very
        facts and summary): a re-fold would then find nothing new and the owner would
        never hear of the event.

        Raises:
            StaleJobStateError: the version moved on (re-read, re-fold, retry).
            JobRecordNotFoundError: no item has this ``pk``.
        """
        condition = "attribute_exists(pk) AND " + (
            "attribute_not_exists(jobStateVersion)"
            if expected_version == 0
            else "jobStateVersion = :expected"
        )
        values: dict[str, Any] = {
            ":facts": _serializer.serialize(to_dynamo(facts)),
            ":summary": _serializer.serialize(to_dynamo(summary)),
            ":next": {"N": str(expected_version + 1)},
        }
        if expected_version:
            values[":expected"] = {"N": str(expected_version)}
        try:
            self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": submission_id}},
                UpdateExpression="SET jobStateFacts = :facts, jobState = :summary, "
                "jobStateVersion = :next",
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if not _is_condition_failure(exc):
                raise
            stored = self._item(submission_id)
            if stored is None:
                raise JobRecordNotFoundError(submission_id, "no such record") from None
            if _is_own_state_write(stored, facts, summary, expected_version + 1):
                return expected_version + 1
            raise StaleJobStateError(submission_id) from None
        return expected_version + 1

    def move_disposition_if_status(
        self,
        submission_id: str,
        *,
        expected_status: str | None,
        disposition: Mapping[str, Any],
        successor_id: str | None = None,
        expected_lease: float | None = None,
    ) -> bool:
        """Replace the ``disposition`` map if its ``status`` is ``expected_status``
        (None: the item exists and has no disposition) and, with ``expected_lease``,
        its ``leaseUntil`` equals it (absent counts as 0). Appends ``successor_id`` to
        ``successorIds`` in the same write.

        Returns:
            True when the write took effect, also when its answer was lost and the
            re-sent write met the write token (``dispositionToken``) this call stored
            with it (:meth:`_own_disposition`; without that, the write that opened or
            applied a disposition would look like another caller's and nobody would
            finish it). False when the condition failed because someone else moved
            first (nothing written).
        """
        token = uuid.uuid4().hex
        expression = "SET disposition = :d, dispositionToken = :token"
        values: dict[str, Any] = {
            ":d": _serializer.serialize(to_dynamo(disposition)),
            ":token": {"S": token},
        }
        names: dict[str, str] = {}
        if expected_status is None:
            condition = "attribute_exists(pk) AND attribute_not_exists(disposition)"
        else:
            condition = "disposition.#status = :expected"
            names["#status"] = "status"
            values[":expected"] = {"S": expected_status}
        if expected_lease is not None:
            values[":lease"] = _serializer.serialize(to_dynamo(float(expected_lease)))
            lease_condition = "disposition.leaseUntil = :lease"
            if not expected_lease:
                lease_condition = (
                    f"(attribute_not_exists(disposition.leaseUntil) OR {lease_condition})"
                )
            condition += f" AND {lease_condition}"
        if successor_id is not None:
            expression += ", successorIds = list_append(if_not_exists(successorIds, :none), :succ)"
            values[":none"] = {"L": []}
            values[":succ"] = {"L": [{"S": successor_id}]}
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "Key": {"pk": {"S": submission_id}},
            "UpdateExpression": expression,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": values,
        }
        if names:
            kwargs["ExpressionAttributeNames"] = names
        try:
            self._client.update_item(**kwargs)
        except ClientError as exc:
            if _is_condition_failure(exc):
                return self._own_disposition(submission_id, token, successor_id)
            raise
        return True

    def _own_disposition(self, submission_id: str, token: str, successor_id: str | None) -> bool:
        """After a failed :meth:`move_disposition_if_status`: True when the stored item
        (read consistently) carries this call's write token (``dispositionToken``, and
        ``successor_id`` in ``successorIds``), i.e. the first send of this very write
        took effect and only its answer was lost.

        The token is new for every call, so neither another writer's move nor a twin
        invocation that wrote an identical disposition (the same decision at the same
        instant) is mistaken for this call's: exactly one of them goes on.
        """
        stored = self._item(submission_id)
        if stored is None or stored.get("dispositionToken") != token:
            return False
        return successor_id is None or successor_id in (stored.get("successorIds") or [])

    def mark_submitted_if_job_unset(
        self, submission_id: str, batch_job_id: str, *, batch_job_arn: str | None = None
    ) -> None:
        """Record ``batchJobId`` (and ``batchJobArn``) and state ``SUBMITTED`` if the item
        exists and has no ``batchJobId`` or this very one (so the same id again, a
        re-sent write included, is a no-op). Bumps ``version`` and sets ``updatedAt``.

        Raises:
            JobRecordConflictError: the item has another ``batchJobId`` (``current``
                holds it; nothing written).
            JobRecordNotFoundError: no item has this ``pk``.
        """
        expression = (
            "SET batchJobId = :b, #state = :submitted, version = version + :one, updatedAt = :now"
        )
        values: dict[str, Any] = {
            ":b": {"S": batch_job_id},
            ":submitted": {"S": str(SubmissionState.SUBMITTED)},
            ":one": {"N": "1"},
            ":now": {"N": str(int(self._clock.now()))},
        }
        if batch_job_arn:
            expression += ", batchJobArn = :arn"
            values[":arn"] = {"S": batch_job_arn}
        try:
            self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": submission_id}},
                UpdateExpression=expression,
                ConditionExpression="attribute_exists(pk) AND "
                "(attribute_not_exists(batchJobId) OR batchJobId = :b)",
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            current = _refused(exc, submission_id)
            raise JobRecordConflictError(
                submission_id,
                f"batchJobId: already has Batch job {current.batchJobId!r}",
                current,
            ) from None

    def is_foreign(self, batch_job_id: str) -> bool:
        """True when a ``FOREIGN#<jobId>`` item exists (an event was recorded as foreign)."""
        response = self._client.get_item(
            TableName=self._table,
            Key={"pk": {"S": f"{FOREIGN_PREFIX}{batch_job_id}"}},
            ProjectionExpression="pk",
        )
        return "Item" in response

    def record_foreign(
        self,
        batch_job_id: str,
        *,
        status: str,
        event_time_ms: int,
        job_queue: str | None,
        job_name: str | None,
        quota_share_name: str | None,
        claimed_submission_id: str | None = None,
        finding: str | None = None,
    ) -> None:
        """Note an event of a job quotagov did not submit (``FOREIGN#<jobId>`` item).

        Unconditional and idempotent: the statuses seen form a set (``statusesSeen``,
        ``ADD``); ``firstEventTime`` (epoch ms) is the envelope time of the first event
        delivered (``if_not_exists``). A job tagged with a submission that is not its
        own also keeps ``claimedSubmissionId`` and ``finding``.
        """
        values: dict[str, Any] = {
            ":id": {"S": batch_job_id},
            ":status": {"SS": [status]},
            ":t": {"N": str(int(event_time_ms))},
            ":foreign": {"S": "FOREIGN"},
        }
        sets = [
            "foreignJobId = :id",
            "kind = :foreign",
            "firstEventTime = if_not_exists(firstEventTime, :t)",
        ]
        for attribute, value in (
            ("jobQueue", job_queue),
            ("jobName", job_name),
            ("quotaShareName", quota_share_name),
            ("claimedSubmissionId", claimed_submission_id),
            ("finding", finding),
        ):
            if value is not None:
                sets.append(f"{attribute} = :{attribute}")
                values[f":{attribute}"] = {"S": value}
        self._client.update_item(
            TableName=self._table,
            Key={"pk": {"S": f"{FOREIGN_PREFIX}{batch_job_id}"}},
            UpdateExpression="SET " + ", ".join(sets) + " ADD statusesSeen :status",
            ExpressionAttributeValues=values,
        )


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


def _is_own_state_write(
    stored: Mapping[str, Any],
    facts: Mapping[str, Any],
    summary: Mapping[str, Any],
    version: int,
) -> bool:
    """True when ``stored`` holds exactly the job state a write of ``facts`` and
    ``summary`` at ``version`` leaves (numbers compared as DynamoDB stores them)."""
    return (
        stored.get("jobStateVersion") == version
        and stored.get("jobStateFacts") == from_dynamo(to_dynamo(facts))
        and stored.get("jobState") == from_dynamo(to_dynamo(summary))
    )


def _refused(exc: ClientError, submission_id: str) -> JobRecord:
    """The stored record an update's condition refused (``ReturnValuesOnConditionCheckFailure
    = ALL_OLD``), for the caller's :class:`JobRecordConflictError`.

    Raises:
        ClientError: ``exc`` itself, when it is not a condition failure.
        JobRecordNotFoundError: the condition failed because no record exists.
    """
    if not _is_condition_failure(exc):
        raise exc
    old: Any = exc.response.get("Item")
    if not isinstance(old, Mapping) or not old:
        raise JobRecordNotFoundError(submission_id, "no such record") from None
    return _record(deserialize_item(old))


def _is_condition_failure(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
