"""Job-state and disposition writes on the ``JobsTable`` (DynamoDB, boto3).

Implements :class:`quotagov.governance.ports.jobs.JobStateRepository` (raising its
:class:`~quotagov.governance.ports.jobs.StaleJobStateError`). The
submission fields of an item belong to the submission repository
(``adapters/dynamodb_jobs.py``); this module only writes its own attributes, always
with ``UpdateItem`` and a condition, so late or concurrent events can never regress a
record:

* ``jobStateFacts`` (map), ``jobState`` (map), ``jobStateVersion`` (number): written
  together only if ``jobStateVersion`` still has the value read (optimistic locking);
  the caller re-reads and re-folds on :class:`StaleJobStateError`.
* ``disposition`` (map): written only if the recorded disposition status is the
  expected one (or there is none yet); ``successorIds`` (list) grows in the same write.
* ``FOREIGN#<jobId>`` items: events of service jobs quotagov did not submit. They
  carry ``foreignJobId`` (not ``batchJobId``) so they never appear in the
  ``byBatchJobId`` index.

Table layout: ``docs/architecture.md`` (``pk`` string key, GSI ``byBatchJobId``).
Numbers: floats are written as ``Decimal`` and read back as ``int``/``float``
(:mod:`quotagov.adapters.dynamodb_values`); None values inside the maps written here
are left out, never stored as ``NULL``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from quotagov.adapters.dynamodb_jobs import with_index_keys
from quotagov.adapters.dynamodb_values import from_dynamo, to_dynamo
from quotagov.governance.ports import StaleJobStateError

FOREIGN_PREFIX = "FOREIGN#"
BY_BATCH_JOB_ID = "byBatchJobId"


class JobRecordMissingError(Exception):
    """The item to update does not exist (``pk`` unknown)."""


class DynamoDBJobStateStore:
    """Job-state and disposition persistence on the ``JobsTable``.

    Args:
        table: a boto3 ``dynamodb.Table`` resource of the ``JobsTable``.
    """

    def __init__(self, table: Any, *, id_cache_size: int = 4096) -> None:
        self._table = table
        self._ids: OrderedDict[str, str] = OrderedDict()
        self._id_cache_size = id_cache_size

    @classmethod
    def from_name(cls, table_name: str, *, session: Any = None) -> DynamoDBJobStateStore:
        """Build from the table name (``JOBS_TABLE``) with a default or given boto3 session."""
        from quotagov.adapters import aws_clients

        resource = aws_clients.resource("dynamodb", session)
        return cls(resource.Table(table_name))

    def find_submission_id(self, batch_job_id: str) -> str | None:
        """Look ``batch_job_id`` up in the ``byBatchJobId`` index (eventually consistent).

        Only ``pk`` is read. Found ids are remembered (a record's ``batchJobId`` never
        changes once set), so a warm function reads the index once per job; misses
        are never remembered.
        """
        if batch_job_id in self._ids:
            self._ids.move_to_end(batch_job_id)
            return self._ids[batch_job_id]
        response = self._table.query(
            IndexName=BY_BATCH_JOB_ID,
            KeyConditionExpression="batchJobId = :id",
            ExpressionAttributeValues={":id": batch_job_id},
            ProjectionExpression="pk",
        )
        items = [
            i for i in response.get("Items", []) if not str(i["pk"]).startswith(FOREIGN_PREFIX)
        ]
        if not items:
            return None
        found = str(items[0]["pk"])
        self._ids[batch_job_id] = found
        if len(self._ids) > self._id_cache_size:
            self._ids.popitem(last=False)
        return found

    def get(self, submission_id: str) -> dict[str, Any] | None:
        """The item by ``pk`` (strongly consistent), numbers as int/float; None if absent."""
        response = self._table.get_item(Key={"pk": submission_id}, ConsistentRead=True)
        item = response.get("Item")
        return from_dynamo(item) if item is not None else None

    def save_job_state(
        self,
        submission_id: str,
        *,
        facts: Mapping[str, Any],
        summary: Mapping[str, Any],
        expected_version: int,
    ) -> int:
        """Write the folded facts and summary if ``jobStateVersion == expected_version``.

        ``expected_version`` 0 means "never written". Returns the new version, also when
        the write's answer was lost and botocore's re-sent copy met the state it had
        written (the stored version is ``expected_version + 1`` with these very facts
        and summary).

        Raises:
            StaleJobStateError: the version moved on (re-read, re-fold, retry).
            JobRecordMissingError: no item with that ``pk``.
        """
        condition = "attribute_exists(pk) AND " + (
            "attribute_not_exists(jobStateVersion)"
            if expected_version == 0
            else "jobStateVersion = :expected"
        )
        values: dict[str, Any] = {
            ":facts": to_dynamo(facts),
            ":summary": to_dynamo(summary),
            ":next": expected_version + 1,
        }
        if expected_version:
            values[":expected"] = expected_version
        try:
            self._table.update_item(
                Key={"pk": submission_id},
                UpdateExpression="SET jobStateFacts = :facts, jobState = :summary, "
                "jobStateVersion = :next",
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
        except ClientError as error:
            if _conditional_failure(error):
                stored = self.get(submission_id)
                if stored is None:
                    raise JobRecordMissingError(f"pk: no job record {submission_id!r}") from None
                if _is_own_state_write(stored, facts, summary, expected_version + 1):
                    # our write took effect and only its answer was lost: a re-fold would
                    # find nothing new and the owner would never hear of this event
                    return expected_version + 1
                raise StaleJobStateError(submission_id) from None
            raise
        return expected_version + 1

    def transition_disposition(
        self,
        submission_id: str,
        *,
        expected_status: str | None,
        disposition: Mapping[str, Any],
        successor_id: str | None = None,
        expected_lease: float | None = None,
    ) -> bool:
        """Replace ``disposition`` if its ``status`` is ``expected_status`` (None: absent)
        and, with ``expected_lease``, its ``leaseUntil`` equals it (absent counts as 0).

        Also appends ``successor_id`` to ``successorIds`` in the same write. Returns False
        when the condition failed because someone else moved first; True when the write
        took effect, also when its answer was lost and botocore's re-sent write met the
        disposition this call had stored (:meth:`_own_disposition`). Without that, the
        write that opened or applied a disposition would look like another caller's, and
        nobody would finish it: it would stay ``applying`` with no successor.
        """
        expression = "SET disposition = :d"
        values: dict[str, Any] = {":d": to_dynamo(disposition)}
        names: dict[str, str] = {}
        if expected_status is None:
            condition = "attribute_exists(pk) AND attribute_not_exists(disposition)"
        else:
            condition = "disposition.#status = :expected"
            names["#status"] = "status"
            values[":expected"] = expected_status
        if expected_lease is not None:
            values[":lease"] = to_dynamo(float(expected_lease))
            lease_condition = "disposition.leaseUntil = :lease"
            if not expected_lease:
                lease_condition = (
                    f"(attribute_not_exists(disposition.leaseUntil) OR {lease_condition})"
                )
            condition += f" AND {lease_condition}"
        if successor_id is not None:
            expression += ", successorIds = list_append(if_not_exists(successorIds, :none), :succ)"
            values[":none"] = []
            values[":succ"] = [successor_id]
        kwargs: dict[str, Any] = {
            "Key": {"pk": submission_id},
            "UpdateExpression": expression,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": values,
        }
        if names:
            kwargs["ExpressionAttributeNames"] = names
        try:
            self._table.update_item(**kwargs)
        except ClientError as error:
            if _conditional_failure(error):
                return self._own_disposition(submission_id, disposition, successor_id)
            raise
        return True

    def _own_disposition(
        self, submission_id: str, disposition: Mapping[str, Any], successor_id: str | None
    ) -> bool:
        """After a failed :meth:`transition_disposition`: True when the stored item (read
        consistently) holds exactly ``disposition`` (and ``successor_id`` in
        ``successorIds``), i.e. the first send of this very write took effect and only
        its answer was lost (DynamoDB error handling, "retries": a retried write meets
        the state its first attempt left,
        https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html).

        A disposition carries its decision and lease times, so a different writer's move
        is not mistaken for ours; a twin invocation that wrote the identical disposition
        is harmless, since every step after it is idempotent (the successor's
        conditional put and its deterministic ``clientToken``).
        """
        stored = self.get(submission_id)
        if stored is None:
            return False
        if stored.get("disposition") != from_dynamo(to_dynamo(disposition)):
            return False
        return successor_id is None or successor_id in (stored.get("successorIds") or [])

    def put_successor(self, item: Mapping[str, Any]) -> bool:
        """Create ``item`` unless its ``pk`` exists; True when created."""
        try:
            self._table.put_item(
                Item=to_dynamo(with_index_keys(item)),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as error:
            if _conditional_failure(error):
                return False
            raise
        return True

    def set_batch_job_id(
        self, submission_id: str, batch_job_id: str, *, batch_job_arn: str | None = None
    ) -> None:
        """Record ``batchJobId``/``batchJobArn`` and state ``SUBMITTED`` once.

        Bumps ``version`` and ``updatedAt`` like the submission repository does; the same
        id again is a no-op write.

        Raises:
            ValueError: the item already has a different ``batchJobId``.
        """
        expression = "SET batchJobId = :b, #state = :submitted, version = version + :one"
        values: dict[str, Any] = {":b": batch_job_id, ":submitted": "SUBMITTED", ":one": 1}
        if batch_job_arn:
            expression += ", batchJobArn = :arn"
            values[":arn"] = batch_job_arn
        try:
            self._table.update_item(
                Key={"pk": submission_id},
                UpdateExpression=expression,
                ConditionExpression="attribute_exists(pk) AND "
                "(attribute_not_exists(batchJobId) OR batchJobId = :b)",
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues=values,
            )
        except ClientError as error:
            if _conditional_failure(error):
                raise ValueError(
                    f"batchJobId: submission {submission_id!r} already has another Batch job"
                ) from None
            raise

    def is_foreign(self, batch_job_id: str) -> bool:
        """True when a ``FOREIGN#<jobId>`` item exists (an event was recorded as foreign)."""
        response = self._table.get_item(
            Key={"pk": f"{FOREIGN_PREFIX}{batch_job_id}"}, ProjectionExpression="pk"
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

        Idempotent: the statuses seen form a set (``statusesSeen``); ``firstEventTime`` is
        the envelope time of the first event delivered. A job tagged with a submission
        that is not its own also keeps ``claimedSubmissionId`` and ``finding``.
        """
        values: dict[str, Any] = {
            ":id": batch_job_id,
            ":status": {status},
            ":t": event_time_ms,
            ":foreign": "FOREIGN",
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
                values[f":{attribute}"] = value
        self._table.update_item(
            Key={"pk": f"{FOREIGN_PREFIX}{batch_job_id}"},
            UpdateExpression="SET " + ", ".join(sets) + " ADD statusesSeen :status",
            ExpressionAttributeValues=values,
        )


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


def _conditional_failure(error: ClientError) -> bool:
    code: str = error.response.get("Error", {}).get("Code", "")
    return code == "ConditionalCheckFailedException"
