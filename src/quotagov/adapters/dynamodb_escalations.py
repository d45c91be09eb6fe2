"""``EscalationsTable`` in DynamoDB: escalation requests and the per-team budget counters.

Table shape (docs/architecture.md): partition key ``pk`` (S) = escalation id; global
secondary index ``byStatus`` on ``status`` (S) + ``expiresAt`` (N). Budget counters
live in the same table under ``pk = "budget#<team>#<periodStart>"``; they carry no
``status`` so the index never sees them. So do the per-job locks,
``pk = "open#<jobId>"`` with ``escalationId``: the one open escalation (PENDING,
APPROVED or APPLY_FAILED) of a job. A card whose ``chat.update`` failed has a pending
card update, ``pk = "card#<escalationId>"`` with ``status`` ``CARD_UPDATE`` (retried) or
``CARD_PARKED`` (given up), ``expiresAt`` = its first failure, ``attempts``, ``error``:
the ``byStatus`` index finds them under those statuses, apart from the escalations.

Races: a new PENDING request is written in one ``TransactWriteItems`` with the budget
counter's conditional increment (``count < limit``) and the conditional put of the
job's lock (``attribute_not_exists(pk)``), so two simultaneous requests can never both
take the last unit of a budget, nor both open an escalation for one job (the loser
takes no budget). Every status move is an ``UpdateItem``
conditioned on the current status, so two clicks apply one decision.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from quotagov.adapters.aws_clients import AwsFault, classify
from quotagov.adapters.dynamodb_values import from_dynamo, to_dynamo
from quotagov.governance.model.escalation import Escalation, EscalationStatus, check_move
from quotagov.governance.model.impact_preview import ImpactPreview
from quotagov.governance.ports import (
    BudgetSpentError,
    CardUpdate,
    EscalationConflictError,
    OpenEscalationError,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

STATUS_INDEX = "byStatus"

#: Tries of :meth:`EscalationsTable.create_pending` while DynamoDB cancels it for a
#: ``TransactionConflict``.
CONFLICT_ATTEMPTS = 3

#: Prefix of the per-job lock items: ``pk = OPEN_PREFIX + jobId``.
OPEN_PREFIX = "open#"
#: Prefix of the pending card updates: ``pk = CARD_PREFIX + escalationId``.
CARD_PREFIX = "card#"
#: ``status`` of a card update still retried, and of one given up.
CARD_PENDING = "CARD_UPDATE"
CARD_PARKED = "CARD_PARKED"

#: Escalation field -> DynamoDB attribute name.
_ATTRIBUTES: dict[str, str] = {
    "escalation_id": "pk",
    "job_id": "jobId",
    "batch_job_id": "batchJobId",
    "job_name": "jobName",
    "job_queue": "jobQueue",
    "team": "team",
    "quota_share_name": "quotaShareName",
    "requester": "requester",
    "requester_slack_id": "requesterSlackId",
    "reason": "reason",
    "current_priority": "currentPriority",
    "requested_level": "requestedLevel",
    "requested_priority": "requestedPriority",
    "status": "status",
    "created_at": "createdAt",
    "expires_at": "expiresAt",
    "direct": "direct",
    "preview": "preview",
    "channel": "channel",
    "ts": "ts",
    "decided_by": "decidedBy",
    "decided_at": "decidedAt",
    "applied_at": "appliedAt",
    "error": "error",
    "apply_attempts": "applyAttempts",
    "claimed_at": "claimedAt",
    "superseded_priority": "supersededPriority",
    "previous_preview": "previousPreview",
    "decision_proof": "decisionProof",
}
_FIELDS = {attribute: name for name, attribute in _ATTRIBUTES.items()}
#: Attribute holding the token of the last status move (:meth:`EscalationsTable.transition`);
#: not an Escalation field, ignored when an item is read.
_WRITE_TOKEN = "writeToken"
_INT_FIELDS = {"current_priority", "requested_priority", "apply_attempts", "superseded_priority"}
_FLOAT_FIELDS = {"created_at", "expires_at", "decided_at", "applied_at", "claimed_at"}

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def _to_dynamo(value: Any) -> Any:
    """Statuses and previews as plain values, then :func:`to_dynamo` (None members of maps
    dropped, floats as Decimal)."""
    return to_dynamo(_plain(value))


def _plain(value: Any) -> Any:
    """``value`` with every :class:`EscalationStatus` and :class:`ImpactPreview` made plain."""
    if isinstance(value, EscalationStatus):
        return value.value
    if isinstance(value, ImpactPreview):
        return value.to_dict()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def escalation_to_item(escalation: Escalation) -> dict[str, Any]:
    """The DynamoDB item (low-level attribute-value form) of ``escalation``."""
    item: dict[str, Any] = {}
    for name, attribute in _ATTRIBUTES.items():
        value = getattr(escalation, name)
        if value is not None:
            item[attribute] = _serializer.serialize(_to_dynamo(value))
    return item


def item_to_escalation(item: Mapping[str, Any]) -> Escalation:
    """Inverse of :func:`escalation_to_item`.

    Raises:
        KeyError: when a required attribute is missing (not an escalation item).
    """
    plain = {k: from_dynamo(_deserializer.deserialize(v)) for k, v in item.items()}
    values: dict[str, Any] = {}
    for attribute, value in plain.items():
        name = _FIELDS.get(attribute)
        if name is None:
            continue
        if name in _INT_FIELDS:
            value = int(value)
        elif name in _FLOAT_FIELDS:
            value = float(value)
        elif name == "status":
            value = EscalationStatus(value)
        elif name in ("preview", "previous_preview"):
            value = ImpactPreview.from_dict(value)
        values[name] = value
    return Escalation(**values)


def _plain_value(attribute_value: Any) -> Any:
    """One DynamoDB attribute value as a plain Python value (numbers as float/int)."""
    return from_dynamo(_deserializer.deserialize(attribute_value))


def _plain_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A DynamoDB item as plain values by attribute name, for comparing two items."""
    return {name: _plain_value(value) for name, value in item.items()}


class EscalationsTable:
    """The :class:`~quotagov.governance.ports.EscalationRepository` over DynamoDB.

    Args:
        client: a boto3 DynamoDB client.
        table_name: ``ESCALATIONS_TABLE``.

    Every method raises ``botocore.exceptions.ClientError`` for DynamoDB failures
    other than the conditional-check failures it translates.
    """

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self.client = client
        self.table_name = table_name

    # -- writes -----------------------------------------------------------------

    def create_pending(self, escalation: Escalation, *, budget_key: str, budget_limit: int) -> None:
        """Store a new request, take one unit of the team's budget and the job's lock,
        atomically (one ``TransactWriteItems``: all three or nothing).

        A transaction cancelled for a ``TransactionConflict`` is tried again (at most
        :data:`CONFLICT_ATTEMPTS` tries); one whose escalation item turns out stored
        exactly as ``escalation`` was this call's own (a lost answer, re-sent) and
        succeeds.

        Raises (checked in this order when several conditions fail):
            botocore.exceptions.ClientError: ``TransactionCanceledException`` still
                cancelled for ``TransactionConflict`` after the last try (retryable:
                the API answers 503), or any other DynamoDB failure.
            EscalationConflictError: another item with this escalation id exists.
            OpenEscalationError: the job's lock ``open#<jobId>`` exists; carries the
                id of the escalation holding it ("" if it cannot be read).
            BudgetSpentError: the counter ``budget_key`` already reached ``budget_limit``.
        """
        if budget_limit <= 0:
            raise BudgetSpentError(budget_limit)
        items = self._pending_items(escalation, budget_key, budget_limit)
        for attempt in range(1, CONFLICT_ATTEMPTS + 1):
            try:
                self.client.transact_write_items(TransactItems=items)
                return
            except ClientError as error:
                if classify(error) is AwsFault.CONFLICT and attempt < CONFLICT_ATTEMPTS:
                    continue
                if error.response["Error"]["Code"] != "TransactionCanceledException":
                    raise
                if classify(error) is AwsFault.CONFLICT:
                    raise
                if self._is_stored(escalation):
                    return  # our own write, whose answer was lost and which botocore re-sent
                self._raise_cancellation(error, escalation, budget_limit)

    def _is_stored(self, escalation: Escalation) -> bool:
        """True when the stored item of ``escalation``'s id is exactly ``escalation``
        (consistent read): a conditional put of it that failed was our own, retried."""
        item = self.client.get_item(
            TableName=self.table_name,
            Key={"pk": {"S": escalation.escalation_id}},
            ConsistentRead=True,
        ).get("Item")
        return item is not None and _plain_item(item) == _plain_item(escalation_to_item(escalation))

    def _pending_items(
        self, escalation: Escalation, budget_key: str, budget_limit: int
    ) -> list[Any]:
        """The transaction of :meth:`create_pending`, in this order: the budget
        counter's conditional increment, the escalation item, the job's lock item."""
        lock_item = {
            "pk": {"S": OPEN_PREFIX + escalation.job_id},
            "escalationId": {"S": escalation.escalation_id},
            "createdAt": {"N": repr(float(escalation.created_at))},
        }
        return [
            {
                "Update": {
                    "TableName": self.table_name,
                    "Key": {"pk": {"S": budget_key}},
                    "UpdateExpression": "ADD #count :one",
                    "ConditionExpression": "attribute_not_exists(#count) OR #count < :limit",
                    "ExpressionAttributeNames": {"#count": "count"},
                    "ExpressionAttributeValues": {
                        ":one": {"N": "1"},
                        ":limit": {"N": str(budget_limit)},
                    },
                }
            },
            {
                "Put": {
                    "TableName": self.table_name,
                    "Item": escalation_to_item(escalation),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Put": {
                    "TableName": self.table_name,
                    "Item": lock_item,
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
        ]

    def _raise_cancellation(
        self, error: ClientError, escalation: Escalation, budget_limit: int
    ) -> NoReturn:
        """Translate a cancelled :meth:`create_pending` transaction by which condition
        failed (see its Raises); re-raise ``error`` when none did."""
        reasons = error.response.get("CancellationReasons") or []
        codes = [str(reason.get("Code", "")) for reason in reasons]
        failed = [code == "ConditionalCheckFailed" for code in codes] + [False] * 3
        if failed[1]:
            raise EscalationConflictError(escalation.escalation_id) from error
        if failed[2]:
            holder = self.open_escalation_id(escalation.job_id)
            raise OpenEscalationError(holder or "") from error
        if failed[0]:
            raise BudgetSpentError(budget_limit) from error
        raise error

    def open_escalation_id(self, job_id: str) -> str | None:
        """The id of the escalation holding job ``job_id``'s lock (consistent read), or
        None when the job has no open escalation."""
        item = self.client.get_item(
            TableName=self.table_name, Key={"pk": {"S": OPEN_PREFIX + job_id}}, ConsistentRead=True
        ).get("Item")
        if item is None:
            return None
        return str(item.get("escalationId", {}).get("S", ""))

    def release_job(self, job_id: str, escalation_id: str) -> bool:
        """Delete job ``job_id``'s lock if (and only if) ``escalation_id`` holds it.

        Returns:
            True when the lock was deleted; False when it was held by another
            escalation or did not exist.
        """
        try:
            self.client.delete_item(
                TableName=self.table_name,
                Key={"pk": {"S": OPEN_PREFIX + job_id}},
                ConditionExpression="#holder = :id",
                ExpressionAttributeNames={"#holder": "escalationId"},
                ExpressionAttributeValues={":id": {"S": escalation_id}},
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def refund_budget(self, budget_key: str) -> None:
        """Give back one unit of the budget counter ``budget_key`` (never below 0)."""
        try:
            self.client.update_item(
                TableName=self.table_name,
                Key={"pk": {"S": budget_key}},
                UpdateExpression="ADD #count :minus",
                ConditionExpression="#count > :zero",
                ExpressionAttributeNames={"#count": "count"},
                ExpressionAttributeValues={":minus": {"N": "-1"}, ":zero": {"N": "0"}},
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise

    def budget_used(self, budget_key: str) -> int:
        """How many units of ``budget_key`` are taken (0 when the counter does not exist)."""
        item = self.client.get_item(
            TableName=self.table_name, Key={"pk": {"S": budget_key}}, ConsistentRead=True
        ).get("Item")
        return int(item["count"]["N"]) if item and "count" in item else 0

    def put_new(self, escalation: Escalation) -> None:
        """Store a request that needs no budget (a direct level).

        Raises:
            EscalationConflictError: an item with this escalation id exists.
        """
        try:
            self.client.put_item(
                TableName=self.table_name,
                Item=escalation_to_item(escalation),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            if not self._is_stored(escalation):  # else our own retried write
                raise EscalationConflictError(escalation.escalation_id) from error

    def transition_if_status(
        self,
        escalation_id: str,
        expected: EscalationStatus,
        changes: Mapping[str, Any],
    ) -> Escalation | None:
        """Apply ``changes`` (Escalation field names) only if the status is ``expected``.

        Returns:
            The escalation after the change, or None when its status was not
            ``expected`` (somebody else moved it first) or it does not exist.

        Raises:
            ValueError: when ``changes`` is empty.
            IllegalEscalationMoveError: the move is not in
                :data:`~quotagov.governance.model.escalation.MOVES` (nothing written).
        """
        if not changes:
            raise ValueError("changes: nothing to change")
        check_move(expected, EscalationStatus(changes.get("status", expected)))
        names: dict[str, str] = {"#status": "status"}
        values: dict[str, Any] = {":expected": {"S": expected.value}}
        sets: list[str] = []
        removes: list[str] = []
        for index, (name, value) in enumerate(sorted(changes.items())):
            attribute = _ATTRIBUTES[name]
            placeholder = f"#a{index}"
            names[placeholder] = attribute
            if value is None:
                removes.append(placeholder)
            else:
                values[f":v{index}"] = _serializer.serialize(_to_dynamo(value))
                sets.append(f"{placeholder} = :v{index}")
        # A status move also stores a token unique to this call, so a failed condition
        # can tell our own re-sent write (lost answer) from another caller's identical
        # move (two approvers' clicks in the same second write the same fields).
        token = uuid.uuid4().hex if "status" in changes else None
        if token is not None:
            names["#token"] = _WRITE_TOKEN
            values[":token"] = {"S": token}
            sets.append("#token = :token")
        expression = ""
        if sets:
            expression += "SET " + ", ".join(sets)
        if removes:
            expression += " REMOVE " + ", ".join(removes)
        try:
            answer = self.client.update_item(
                TableName=self.table_name,
                Key={"pk": {"S": escalation_id}},
                UpdateExpression=expression.strip(),
                ConditionExpression="attribute_exists(pk) AND #status = :expected",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return self._own_transition(escalation_id, expected, changes, token)
            raise
        return item_to_escalation(answer["Attributes"])

    def _own_transition(
        self,
        escalation_id: str,
        expected: EscalationStatus,
        changes: Mapping[str, Any],
        token: str | None,
    ) -> Escalation | None:
        """After a failed :meth:`transition_if_status`: the escalation when the stored item shows
        exactly this move (status moved away from ``expected``, the stored write token
        is this call's ``token`` and every changed field holds our value), i.e. our own
        write whose answer was lost and which botocore re-sent; None when somebody else
        moved it (or it does not exist). The token keeps a concurrent caller that wrote
        the same values (the same approver clicking twice in one second) from passing
        for us.

        A move that leaves the status alone cannot fail its own retry (the status is
        still ``expected``), so only status moves are recognised.
        """
        if "status" not in changes or token is None:
            return None
        item = self.client.get_item(
            TableName=self.table_name, Key={"pk": {"S": escalation_id}}, ConsistentRead=True
        ).get("Item")
        if item is None:
            return None
        stored = _plain_item(item)
        if stored.get("status") == expected.value or stored.get(_WRITE_TOKEN) != token:
            return None
        for name, value in changes.items():
            attribute = _ATTRIBUTES[name]
            wanted = (
                None if value is None else _plain_value(_serializer.serialize(_to_dynamo(value)))
            )
            if stored.get(attribute) != wanted:
                return None
        return item_to_escalation(item)

    def release_stale_claim(
        self, escalation_id: str, claimed_before: float, error: str
    ) -> Escalation | None:
        """Move an APPROVED request whose claim is older than ``claimed_before`` to
        APPLY_FAILED with ``error``, so a retry can claim it again.

        The age test is part of the write's condition: ``claimedAt < claimed_before``
        (or, for a record without ``claimedAt``, ``decidedAt < claimed_before``). A run
        that claimed the request in the meantime wrote a fresh ``claimedAt``, so its
        claim is never taken away.

        Args:
            escalation_id: the request.
            claimed_before: epoch seconds; only older claims are released.
            error: recorded in ``error``.

        Returns:
            The request after the change, or None when it is not APPROVED or its claim
            is not older than ``claimed_before`` (so None also after an earlier run, or
            this call's own write whose answer was lost, released it: the request is
            APPLY_FAILED in both cases).
        """
        try:
            answer = self.client.update_item(
                TableName=self.table_name,
                Key={"pk": {"S": escalation_id}},
                UpdateExpression="SET #status = :failed, #error = :error",
                ConditionExpression=(
                    "#status = :approved AND (#claimed < :cutoff OR "
                    "(attribute_not_exists(#claimed) AND #decided < :cutoff))"
                ),
                ExpressionAttributeNames={
                    "#status": "status",
                    "#error": "error",
                    "#claimed": "claimedAt",
                    "#decided": "decidedAt",
                },
                ExpressionAttributeValues={
                    ":failed": {"S": EscalationStatus.APPLY_FAILED.value},
                    ":approved": {"S": EscalationStatus.APPROVED.value},
                    ":error": {"S": error},
                    ":cutoff": {"N": repr(float(claimed_before))},
                },
                ReturnValues="ALL_NEW",
            )
        except ClientError as failure:
            if failure.response["Error"]["Code"] == "ConditionalCheckFailedException":
                # Not :meth:`_own_transition`: this write carries nothing unique to one
                # caller, so a second run's identical release would pass for our own
                # re-sent write and the request would be "released" twice. A lost
                # answer re-sent by botocore reads as None here; the request is
                # APPLY_FAILED either way, which is all the caller acts on.
                return None
            raise
        return item_to_escalation(answer["Attributes"])

    def set_message(self, escalation_id: str, channel: str, ts: str) -> None:
        """Record where the Slack message of ``escalation_id`` was posted."""
        self.client.update_item(
            TableName=self.table_name,
            Key={"pk": {"S": escalation_id}},
            UpdateExpression="SET #channel = :channel, #ts = :ts",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeNames={"#channel": "channel", "#ts": "ts"},
            ExpressionAttributeValues={":channel": {"S": channel}, ":ts": {"S": ts}},
        )

    # -- reads ------------------------------------------------------------------

    def get(self, escalation_id: str) -> Escalation | None:
        """The escalation ``escalation_id`` (strongly consistent read), or None."""
        item = self.client.get_item(
            TableName=self.table_name, Key={"pk": {"S": escalation_id}}, ConsistentRead=True
        ).get("Item")
        if item is None or "status" not in item:
            return None
        return item_to_escalation(item)

    def due_for_expiry(self, now: float) -> list[Escalation]:
        """PENDING requests whose ``expiresAt`` is before ``now`` (epoch seconds)."""
        return list(
            self._query_status(
                EscalationStatus.PENDING, "#status = :status AND #expires < :now", now
            )
        )

    def with_status(self, status: EscalationStatus) -> list[Escalation]:
        """Every request in ``status`` (through the ``byStatus`` index)."""
        return list(self._query_status(status, "#status = :status", None))

    def _query_status(
        self, status: EscalationStatus, condition: str, now: float | None
    ) -> Iterator[Escalation]:
        names = {"#status": "status"}
        values: dict[str, Any] = {":status": {"S": status.value}}
        if now is not None:
            names["#expires"] = "expiresAt"
            values[":now"] = {"N": repr(float(now))}
        paginator = self.client.get_paginator("query")
        for page in paginator.paginate(
            TableName=self.table_name,
            IndexName=STATUS_INDEX,
            KeyConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        ):
            for item in page.get("Items", []):
                yield item_to_escalation(item)

    # -- pending card updates ---------------------------------------------------

    def note_card_update_failed(self, escalation_id: str, error: str, now: float) -> CardUpdate:
        """One more failed ``chat.update`` of ``escalation_id``'s card (``UpdateItem``,
        creating the item at the first failure; a parked one stays parked)."""
        answer = self.client.update_item(
            TableName=self.table_name,
            Key={"pk": {"S": CARD_PREFIX + escalation_id}},
            UpdateExpression=(
                "SET #status = if_not_exists(#status, :pending), "
                "#first = if_not_exists(#first, :now), #error = :error, #id = :id "
                "ADD #attempts :one"
            ),
            ExpressionAttributeNames={
                "#status": "status",
                "#first": "expiresAt",
                "#error": "error",
                "#id": "escalationId",
                "#attempts": "attempts",
            },
            ExpressionAttributeValues={
                ":pending": {"S": CARD_PENDING},
                ":now": {"N": repr(float(now))},
                ":error": {"S": error or "unknown"},
                ":id": {"S": escalation_id},
                ":one": {"N": "1"},
            },
            ReturnValues="ALL_NEW",
        )
        return _card_update(answer["Attributes"])

    def card_updates_due(self) -> list[CardUpdate]:
        """Every pending card update (``byStatus`` = ``CARD_UPDATE``), oldest first."""
        paginator = self.client.get_paginator("query")
        found: list[CardUpdate] = []
        for page in paginator.paginate(
            TableName=self.table_name,
            IndexName=STATUS_INDEX,
            KeyConditionExpression="#status = :status",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={":status": {"S": CARD_PENDING}},
        ):
            found.extend(_card_update(item) for item in page.get("Items", []))
        return found

    def card_updated(self, escalation_id: str) -> None:
        """Delete the pending card update of ``escalation_id`` (none: nothing happens)."""
        self.client.delete_item(
            TableName=self.table_name, Key={"pk": {"S": CARD_PREFIX + escalation_id}}
        )

    def park_card_update(self, escalation_id: str) -> None:
        """``CARD_UPDATE`` -> ``CARD_PARKED`` (only an existing pending update)."""
        try:
            self.client.update_item(
                TableName=self.table_name,
                Key={"pk": {"S": CARD_PREFIX + escalation_id}},
                UpdateExpression="SET #status = :parked",
                ConditionExpression="#status = :pending",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={
                    ":parked": {"S": CARD_PARKED},
                    ":pending": {"S": CARD_PENDING},
                },
            )
        except ClientError as failure:
            if failure.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise


def _card_update(item: Mapping[str, Any]) -> CardUpdate:
    """A :class:`CardUpdate` from its low-level DynamoDB item."""
    return CardUpdate(
        escalation_id=item["escalationId"]["S"],
        attempts=int(item["attempts"]["N"]),
        error=item.get("error", {}).get("S", ""),
        first_failed_at=float(item["expiresAt"]["N"]),
        parked=item["status"]["S"] == CARD_PARKED,
    )


def create_escalations_table(client: DynamoDBClient, table_name: str) -> None:
    """Create ``EscalationsTable`` as the SAM template does (for tests and the local runtime)."""
    client.create_table(
        TableName=table_name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "status", "AttributeType": "S"},
            {"AttributeName": "expiresAt", "AttributeType": "N"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": STATUS_INDEX,
                "KeySchema": [
                    {"AttributeName": "status", "KeyType": "HASH"},
                    {"AttributeName": "expiresAt", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
