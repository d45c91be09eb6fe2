"""The owner-notification log on the ``JobsTable`` (DynamoDB, boto3).

Implements :class:`quotagov.governance.ports.notifications.NotificationLog`. One item
per job, ``pk = NOTIFY#<submission id>``:

* ``entries`` (map): one entry per event key; an entry is added with
  ``attribute_not_exists(entries.<key>)``, so of several deliveries of the same event
  exactly one claims it; the added entry carries a ``claim`` token of its own, so a
  claim whose answer was lost, and which botocore re-sent, is recognised as this
  call's (the retry meets its own entry) instead of being taken for another delivery's
  (which would leave the owner untold);
* ``digest`` (map) and ``digestVersion`` (number): the preemption digest message,
  written with a version condition.

One more item, ``pk = NOTIFY-RETRY``, holds ``pending`` (string set): the
``<submission id>|<event key>`` of every entry whose DM could not be delivered
(``failed``), added by :meth:`DynamoDBNotificationLog.complete` with a ``failed``
outcome and removed by any other outcome, so the 5-minute retry reads one item instead
of scanning the table.

The item has no ``batchJobId`` and no ``team`` attribute, so it is in none of the
table's indexes, and its ``pk`` (with ``#``) is not a valid ``/jobs/{jobId}``.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from botocore.exceptions import ClientError

from quotagov.adapters.dynamodb_values import from_dynamo, to_dynamo
from quotagov.governance.ports.notifications import (
    RETRY_LEASE_SECONDS,
    UNDELIVERED,
    DigestConflictError,
    DigestState,
    NotificationEntry,
    NotificationKind,
)

NOTIFY_PREFIX = "NOTIFY#"
#: The retry list's item (its ``pk`` has no ``#``, so it is no job's log).
RETRY_LIST_KEY = "NOTIFY-RETRY"
#: Events at the same instant are listed as they follow from each other: a preemption
#: before the failure it caused, the failure before its disposition.
_KIND_ORDER = {kind.value: rank for rank, kind in enumerate(NotificationKind)}


class DynamoDBNotificationLog:
    """:class:`~quotagov.governance.ports.notifications.NotificationLog` on ``JobsTable``.

    Args:
        table: a boto3 ``dynamodb.Table`` resource of the ``JobsTable``.
    """

    def __init__(self, table: Any) -> None:
        self._table = table

    @classmethod
    def from_name(cls, table_name: str, *, session: Any = None) -> DynamoDBNotificationLog:
        """Build from the table name (``JOBS_TABLE``) with a default or given boto3 session."""
        from quotagov.adapters import aws_clients

        return cls(aws_clients.resource("dynamodb", session).Table(table_name))

    def claim(self, entry: NotificationEntry) -> bool:
        """Add ``entry`` unless its event key is there (True when this call added it,
        also when its answer was lost and the re-sent write met the entry it added)."""
        key = {"pk": f"{NOTIFY_PREFIX}{entry.submission_id}"}
        self._table.update_item(
            Key=key,
            UpdateExpression="SET #e = if_not_exists(#e, :empty), notifySubmissionId = :sid",
            ExpressionAttributeNames={"#e": "entries"},
            ExpressionAttributeValues={":empty": {}, ":sid": entry.submission_id},
        )
        token = uuid.uuid4().hex
        try:
            self._table.update_item(
                Key=key,
                UpdateExpression="SET #e.#k = :entry",
                ConditionExpression="attribute_not_exists(#e.#k)",
                ExpressionAttributeNames={"#e": "entries", "#k": entry.event_key},
                ExpressionAttributeValues={":entry": to_dynamo(_to_item(entry) | {"claim": token})},
            )
        except ClientError as error:
            if _conditional_failure(error):
                return self._claimed_by(key, entry.event_key, token)
            raise
        return True

    def _claimed_by(self, key: dict[str, str], event_key: str, token: str) -> bool:
        """True when entry ``event_key`` carries claim ``token`` (consistent read)."""
        item = self._table.get_item(
            Key=key,
            ConsistentRead=True,
            ProjectionExpression="#e.#k.#c",
            ExpressionAttributeNames={"#e": "entries", "#k": event_key, "#c": "claim"},
        ).get("Item")
        stored = ((item or {}).get("entries") or {}).get(event_key) or {}
        return bool(stored.get("claim") == token)

    def complete(self, entry: NotificationEntry) -> None:
        """Overwrite the entry (it exists: :meth:`claim` added it), then note it in the
        retry list when its delivery ``failed`` (a retried one that did not fail is taken
        off). The entry is written
        first: a list entry whose log entry was delivered is only dropped by the next
        retry, never a failed entry left off the list."""
        self._table.update_item(
            Key={"pk": f"{NOTIFY_PREFIX}{entry.submission_id}"},
            UpdateExpression="SET #e.#k = :entry",
            ExpressionAttributeNames={"#e": "entries", "#k": entry.event_key},
            ExpressionAttributeValues={":entry": to_dynamo(_to_item(entry))},
        )
        if entry.delivery != "failed" and entry.attempts <= 1:
            return  # never listed: only a failed delivery is, and its retries count up
        verb = "ADD" if entry.delivery == "failed" else "DELETE"
        self._table.update_item(
            Key={"pk": RETRY_LIST_KEY},
            UpdateExpression=f"{verb} pending :key",
            ExpressionAttributeValues={":key": {_retry_key(entry)}},
        )

    def undelivered(self) -> list[NotificationEntry]:
        """The entries the retry list names that are still undelivered (one ``GetItem``
        for the list, one per job named); a listed entry found delivered is dropped from
        the list."""
        item = self._table.get_item(Key={"pk": RETRY_LIST_KEY}, ConsistentRead=True).get("Item")
        keys = sorted(str(k) for k in (item or {}).get("pending") or ())
        by_job: dict[str, list[str]] = {}
        for key in keys:
            submission_id, _, event_key = key.partition("|")
            by_job.setdefault(submission_id, []).append(event_key)
        found: list[NotificationEntry] = []
        for submission_id, event_keys in by_job.items():
            logged = {e.event_key: e for e in self.entries(submission_id)}
            for event_key in event_keys:
                entry = logged.get(event_key)
                if entry is not None and entry.delivery in UNDELIVERED:
                    found.append(entry)
                else:
                    self._table.update_item(
                        Key={"pk": RETRY_LIST_KEY},
                        UpdateExpression="DELETE pending :key",
                        ExpressionAttributeValues={":key": {f"{submission_id}|{event_key}"}},
                    )
        return sorted(found, key=lambda e: (e.at, _KIND_ORDER.get(e.kind, 9), e.submission_id))

    def claim_retry(self, entry: NotificationEntry, *, now: float) -> NotificationEntry | None:
        """Move ``entry`` to ``retrying`` (``attempts`` + 1, ``retryAt`` = ``now``) if it
        still has ``entry.attempts`` and is ``failed``, or ``retrying`` since before
        ``now`` - :data:`RETRY_LEASE_SECONDS`. A claim whose answer was lost is
        recognised by its token, as in :meth:`claim`."""
        key = {"pk": f"{NOTIFY_PREFIX}{entry.submission_id}"}
        token = uuid.uuid4().hex
        claimed = replace(entry, delivery="retrying", attempts=entry.attempts + 1, retry_at=now)
        names = {"#e": "entries", "#k": entry.event_key}
        try:
            self._table.update_item(
                Key=key,
                UpdateExpression="SET #e.#k = :entry",
                ConditionExpression="#e.#k.attempts = :n AND (#e.#k.delivery = :failed OR "
                "(#e.#k.delivery = :retrying AND #e.#k.retryAt < :stale))",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={
                    ":entry": to_dynamo(_to_item(claimed) | {"claim": token}),
                    ":n": entry.attempts,
                    ":failed": "failed",
                    ":retrying": "retrying",
                    ":stale": to_dynamo(float(now - RETRY_LEASE_SECONDS)),
                },
            )
        except ClientError as error:
            if _conditional_failure(error) and self._claimed_by(key, entry.event_key, token):
                return claimed
            if _conditional_failure(error):
                return None
            raise
        return claimed

    def entries(self, submission_id: str | None = None) -> list[NotificationEntry]:
        """One job's entries (``GetItem``), or every job's (``Scan``, for reports and
        the local demo), oldest first."""
        if submission_id is not None:
            item = self._table.get_item(
                Key={"pk": f"{NOTIFY_PREFIX}{submission_id}"}, ConsistentRead=True
            ).get("Item")
            items = [item] if item else []
        else:
            items = []
            kwargs: dict[str, Any] = {
                "FilterExpression": "begins_with(pk, :p)",
                "ExpressionAttributeValues": {":p": NOTIFY_PREFIX},
            }
            while True:
                page = self._table.scan(**kwargs)
                items.extend(page.get("Items", []))
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        found = [
            _from_item(value)
            for item in items
            for value in (from_dynamo(item.get("entries")) or {}).values()
        ]
        return sorted(found, key=lambda e: (e.at, _KIND_ORDER.get(e.kind, 9), e.submission_id))

    def digest(self, submission_id: str) -> DigestState | None:
        """The job's digest state, or None."""
        item = self._table.get_item(
            Key={"pk": f"{NOTIFY_PREFIX}{submission_id}"},
            ConsistentRead=True,
            ProjectionExpression="digest, digestVersion",
        ).get("Item")
        if not item or "digest" not in item:
            return None
        raw = from_dynamo(item["digest"])
        return DigestState(
            submission_id=submission_id,
            channel=str(raw["channel"]),
            ts=str(raw["ts"]),
            first_at=float(raw["firstAt"]),
            lines=tuple(str(line) for line in raw.get("lines") or ()),
            version=int(from_dynamo(item.get("digestVersion")) or 0),
        )

    def save_digest_if_version(self, state: DigestState, *, expected_version: int | None) -> None:
        """Write the digest if its version is the expected one (None: no digest yet).

        Raises:
            DigestConflictError: another writer got there first.
        """
        if expected_version is None:
            condition = "attribute_not_exists(digestVersion)"
            values: dict[str, Any] = {}
        else:
            condition = "digestVersion = :expected"
            values = {":expected": expected_version}
        digest = {
            "channel": state.channel,
            "ts": state.ts,
            "firstAt": state.first_at,
            "lines": list(state.lines),
        }
        try:
            self._table.update_item(
                Key={"pk": f"{NOTIFY_PREFIX}{state.submission_id}"},
                UpdateExpression="SET digest = :d, digestVersion = :v",
                ConditionExpression=condition,
                ExpressionAttributeValues={
                    ":d": to_dynamo(digest),
                    ":v": (expected_version or 0) + 1,
                    **values,
                },
            )
        except ClientError as error:
            if _conditional_failure(error):
                raise DigestConflictError(state.submission_id) from None
            raise


def _retry_key(entry: NotificationEntry) -> str:
    """The entry's member of the retry list: ``<submission id>|<event key>``."""
    return f"{entry.submission_id}|{entry.event_key}"


def _to_item(entry: NotificationEntry) -> dict[str, Any]:
    raw = {
        "submissionId": entry.submission_id,
        "eventKey": entry.event_key,
        "kind": entry.kind,
        "jobName": entry.job_name,
        "team": entry.team,
        "recipient": entry.recipient,
        "text": entry.text,
        "at": entry.at,
        "delivery": entry.delivery,
        "channel": entry.channel,
        "ts": entry.ts,
        "error": entry.error,
        "details": {k: v for k, v in entry.details.items() if v is not None},
        "attempts": entry.attempts,
        "retryAt": entry.retry_at,
    }
    return {k: v for k, v in raw.items() if v is not None}


def _from_item(raw: dict[str, Any]) -> NotificationEntry:
    return NotificationEntry(
        submission_id=str(raw["submissionId"]),
        event_key=str(raw["eventKey"]),
        kind=str(raw["kind"]),
        job_name=str(raw.get("jobName") or ""),
        team=str(raw.get("team") or ""),
        recipient=str(raw.get("recipient") or ""),
        text=str(raw.get("text") or ""),
        at=float(raw.get("at") or 0),
        delivery=str(raw.get("delivery") or "pending"),
        channel=raw.get("channel"),
        ts=raw.get("ts"),
        error=raw.get("error"),
        details=dict(raw.get("details") or {}),
        attempts=int(raw.get("attempts") or 1),
        retry_at=float(raw["retryAt"]) if raw.get("retryAt") is not None else None,
    )


def _conditional_failure(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
