"""The audit table (``AuditTable``, keys ``pk``/``sk``, both strings), append-only.

Item layout (docs/architecture.md, "Tables"):

=====================  ==========================  ==========================================
``pk``                 ``sk``                      holds
=====================  ==========================  ==========================================
``CHAIN#<queue>``      ``SEQ#<seq, 12 digits>``    audit record ``seq`` of the job queue's chain
``DEDUP#<queue>``      ``<dedupKey>``              marker: this CloudTrail event / decision
                                                   is record ``seq`` with ``hash``
``CHAINS``             ``<queue>``                 the chain exists (written with record 1)
``CONFIG#<arn>``       ``<ms, 13 digits>#<tag>``   a last known configuration (see
                                                   :mod:`quotagov.adapters.dynamodb_known`)
``DECISION#<subject>`` ``<ms, 13 digits>#<id>``    a controller decision about ``subject``
=====================  ==========================  ==========================================

Every write is a ``Put`` conditioned on ``attribute_not_exists(pk)``; nothing is ever
updated or deleted, so the function role needs only ``dynamodb:PutItem``,
``dynamodb:GetItem`` and ``dynamodb:Query`` on the table (a ``TransactWriteItems`` is
authorised per contained ``Put``). Only ``quotagov audit verify`` (run by a person, not
by a function) also needs ``dynamodb:Scan``: :meth:`DynamoDBChainStore.stored_chains`
finds chains from their records, so that deleting a ``CHAINS`` item cannot hide one.
A run of records (the records one audit queue batch brings, sealed once: see
:mod:`quotagov.governance.audit.seals`) and their dedup markers are written in one
transaction, so a redelivered event, even racing its first delivery, stores one record,
a crash never leaves a record without its marker, and a run is never stored without the
record that seals it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from quotagov.governance.ports import AppendAttempt, AppendOutcome, ChainHead

_SERIALIZER = TypeSerializer()
_DESERIALIZER = TypeDeserializer()
_KEYS = ("pk", "sk")
_NEW_KEY = "attribute_not_exists(pk)"


#: Escape of nested map keys: DynamoDB refuses an empty map key (a request parameter map
#: may hold one, e.g. ``tags: {"": ...}``), so ``""`` is stored as ``"~"`` and a key
#: starting with ``~`` gets one more ``~``; reading undoes it, so the record (and its
#: hash) is exactly what was sealed.
_ESCAPE = "~"


def _escape(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            (_ESCAPE + k if k.startswith(_ESCAPE) or not k else k): _escape(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_escape(v) for v in value]
    return value


def _unescape(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {(k[1:] if k.startswith(_ESCAPE) else k): _unescape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unescape(v) for v in value]
    return value


def to_item(value: Mapping[str, Any]) -> dict[str, Any]:
    """A Python mapping (numbers as int/Decimal) as a DynamoDB item of typed attributes.

    Nested map keys are escaped (``""`` -> ``"~"``, ``"~k"`` -> ``"~~k"``), because
    DynamoDB refuses empty map keys; :func:`from_item` undoes it.
    """
    return {k: _SERIALIZER.serialize(_escape(v)) for k, v in value.items()}


def from_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A DynamoDB item as a Python dict (numbers come back as ``Decimal``), nested map
    keys unescaped (see :func:`to_item`)."""
    return {k: _unescape(_DESERIALIZER.deserialize(v)) for k, v in item.items()}


def record_key(chain: str, seq: int) -> dict[str, str]:
    """``{pk, sk}`` of record ``seq`` of ``chain``."""
    return {"pk": f"CHAIN#{chain}", "sk": f"SEQ#{seq:012d}"}


def marker_key(chain: str, dedup_key: str) -> dict[str, str]:
    """``{pk, sk}`` of the dedup marker ``dedup_key`` of ``chain``."""
    return {"pk": f"DEDUP#{chain}", "sk": dedup_key}


class DynamoDBChainStore:
    """:class:`~quotagov.governance.ports.audit.ChainStore` over the audit table.

    Args:
        table_name: the ``AuditTable`` name (``AUDIT_TABLE``).
        client: a boto3 DynamoDB client (low level).
    """

    def __init__(self, table_name: str, client: Any) -> None:
        self.table_name = table_name
        self._client = client

    def _query(
        self, pk: str, *, forward: bool = True, limit: int | None = None, after_sk: str = ""
    ) -> Iterator[dict[str, Any]]:
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk AND sk > :after" if after_sk else "pk = :pk",
            "ExpressionAttributeValues": (
                {":pk": {"S": pk}, ":after": {"S": after_sk}} if after_sk else {":pk": {"S": pk}}
            ),
            "ConsistentRead": True,
            "ScanIndexForward": forward,
        }
        if limit is not None:
            request["Limit"] = limit
        while True:
            page = self._client.query(**request)
            for item in page.get("Items", []):
                yield from_item(item)
            if limit is not None or "LastEvaluatedKey" not in page:
                return
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def head(self, chain: str) -> ChainHead | None:
        """The last record of ``chain`` (consistent read) with its seal, or None when it
        is empty."""
        for item in self._query(f"CHAIN#{chain}", forward=False, limit=1):
            seal = item.get("seal")
            return ChainHead(
                seq=int(item["seq"]),
                hash=str(item["hash"]),
                seal=seal if isinstance(seal, str) else None,
            )
        return None

    def try_append(self, record: Mapping[str, Any]) -> AppendAttempt:
        """:meth:`try_append_run` of one record."""
        return self.try_append_run([record])

    def try_append_run(self, records: Sequence[Mapping[str, Any]]) -> AppendAttempt:
        """Put each record on its slot and its dedup marker (and, with record 1, the
        chain's registry item), every item only if absent, in one ``TransactWriteItems``:
        all or nothing (at most 49 records: the transaction takes 100 items).

        Returns:
            ``APPENDED``; ``DUPLICATE`` with the dedup keys whose markers exist;
            ``SLOT_TAKEN`` when a slot is held; ``CONFLICT`` otherwise (e.g. a
            concurrent transaction on the same items). Nothing is written unless
            ``APPENDED``.

        Raises:
            ValueError: an empty run, or more than 49 records.
            botocore.exceptions.ClientError: for failures other than a lost race
                (e.g. throttling after botocore's retries, missing permissions).
        """
        if not records or len(records) > 49:
            raise ValueError(f"a run holds 1 to 49 records, got {len(records)}")
        puts: list[dict[str, Any]] = []
        # per item: ("record", ""), ("marker", its dedupKey) or ("registry", "")
        kinds: list[tuple[str, str]] = []
        for record in records:
            chain, seq = str(record["chain"]), int(record["seq"])
            dedup_key = str(record["dedupKey"])
            puts.append({**record_key(chain, seq), **record})
            kinds.append(("record", ""))
            marker = {"seq": seq, "chain": chain, "hash": record["hash"]}
            puts.append({**marker_key(chain, dedup_key), **marker})
            kinds.append(("marker", dedup_key))
            if seq == 1:
                puts.append({"pk": "CHAINS", "sk": chain})
                kinds.append(("registry", ""))
        try:
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self.table_name,
                            "Item": to_item(item),
                            "ConditionExpression": _NEW_KEY,
                        }
                    }
                    for item in puts
                ]
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                raise
            reasons = exc.response.get("CancellationReasons", [])
            failed = [
                kind
                for kind, reason in zip(kinds, reasons, strict=False)
                if reason.get("Code") == "ConditionalCheckFailed"
            ]
            duplicates = tuple(key for kind, key in failed if kind == "marker")
            if duplicates:
                return AppendAttempt(AppendOutcome.DUPLICATE, duplicates)
            if any(kind == "record" for kind, _ in failed):
                return AppendAttempt(AppendOutcome.SLOT_TAKEN)
            return AppendAttempt(AppendOutcome.CONFLICT)
        return AppendAttempt(AppendOutcome.APPENDED)

    def _get(self, key: Mapping[str, str]) -> dict[str, Any] | None:
        answer = self._client.get_item(
            TableName=self.table_name, Key=to_item(key), ConsistentRead=True
        )
        item = answer.get("Item")
        return None if item is None else from_item(item)

    def find(self, chain: str, dedup_key: str) -> dict[str, Any] | None:
        """The record of ``chain`` whose dedup marker is ``dedup_key``, or None."""
        marker = self._get(marker_key(chain, dedup_key))
        seq = None if marker is None else _marker_seq(marker)
        if seq is None:
            return None
        item = self._get(record_key(chain, seq))
        if item is None or item.get("dedupKey") != dedup_key:
            return None
        return {k: v for k, v in item.items() if k not in _KEYS}

    def records(self, chain: str, after_seq: int = 0) -> Iterator[dict[str, Any]]:
        """Every record item of ``chain`` with ``sk`` after record ``after_seq``'s, in
        ``sk`` order, without ``pk``/``sk``, as stored."""
        after = record_key(chain, after_seq)["sk"] if after_seq > 0 else ""
        for item in self._query(f"CHAIN#{chain}", after_sk=after):
            yield {k: v for k, v in item.items() if k not in _KEYS}

    def markers(self, chain: str) -> dict[str, tuple[int, str]]:
        """Every dedup marker of ``chain``: dedup key -> (seq, hash) of its record.

        A marker whose ``seq`` is missing or not a whole number (an edited item) maps to
        ``(-1, "")``, which matches no record, so verification reports it as a break.
        """
        found: dict[str, tuple[int, str]] = {}
        for m in self._query(f"DEDUP#{chain}"):
            seq = _marker_seq(m)
            found[str(m["sk"])] = (-1, "") if seq is None else (seq, str(m.get("hash")))
        return found

    def chains(self) -> list[str]:
        """Names of every chain in the registry (``pk=CHAINS``), sorted."""
        return sorted(str(item["sk"]) for item in self._query("CHAINS"))

    def stored_chains(self) -> list[str]:
        """Names of every chain that has a record or a dedup marker in the table, sorted.

        Found from the items themselves, not from the ``CHAINS`` registry: a consistent,
        paginated ``Scan`` of the whole table projecting only ``pk``, filtered on ``pk``
        beginning with ``CHAIN#`` or ``DEDUP#``. It reads (and is billed for) every item
        of the table, ``CONFIG#``/``DECISION#`` ones included, so it is meant for
        verification (``quotagov audit verify``), never for the functions' hot path.

        Raises:
            botocore.exceptions.ClientError: e.g. no ``dynamodb:Scan`` permission.
        """
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "ProjectionExpression": "pk",
            "FilterExpression": "begins_with(pk, :chain) OR begins_with(pk, :dedup)",
            "ExpressionAttributeValues": {":chain": {"S": "CHAIN#"}, ":dedup": {"S": "DEDUP#"}},
            "ConsistentRead": True,
        }
        names: set[str] = set()
        while True:
            page = self._client.scan(**request)
            for item in page.get("Items", []):
                _, _, name = str(item["pk"]["S"]).partition("#")
                names.add(name)
            if "LastEvaluatedKey" not in page:
                return sorted(names)
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _marker_seq(marker: Mapping[str, Any]) -> int | None:
    """The record sequence number a dedup marker points at, None when it is malformed."""
    seq = marker.get("seq")
    if not isinstance(seq, Decimal) or not seq.is_finite() or seq != seq.to_integral_value():
        return None
    return int(seq)
