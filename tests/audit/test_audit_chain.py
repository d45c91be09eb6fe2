"""The hash chain: canonical form, and verify naming the first changed, deleted or
inserted record of a chain stored in the (moto) audit table."""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

import pytest

from audit.support import TABLE
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore, from_item, to_item
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import (
    ChainBreak,
    ChainIntegrityError,
    record_hash,
    seal,
    verify_chain,
)
from quotagov.governance.audit.decisions import DecisionLog
from quotagov.governance.canonical import CanonicalFormError, canonical_json
from quotagov.governance.ports import ControllerDecision

CHAIN = "ml-gov-queue"


def test_canonical_json_sorts_keys_and_normalizes_numbers() -> None:
    written = {"b": [1, 2.5, 3.0], "a": {"z": "é", "y": None, "x": True}}
    read_back = {
        "a": {"x": True, "y": None, "z": "é"},
        "b": [Decimal("1"), Decimal("2.50"), Decimal("3")],
    }

    assert canonical_json(written) == '{"a":{"x":true,"y":null,"z":"é"},"b":[1,2.5,3]}'
    assert canonical_json(read_back) == canonical_json(written)
    assert record_hash(written) == record_hash(read_back)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), {1: "x"}, {"s": {1, 2}}])
def test_canonical_json_refuses_what_dynamodb_cannot_hold(bad: Any) -> None:
    with pytest.raises(CanonicalFormError):
        canonical_json({"v": bad} if not isinstance(bad, dict) else bad)


def _five_decisions(decisions: DecisionLog, clock: ManualClock) -> None:
    for n in range(1, 6):
        clock.advance(60)
        decisions.record_decision(
            ControllerDecision(
                action="SubmissionRefused",
                actor="quotagov",
                job_queue=CHAIN,
                resource=f"sub-{n:04d}",
                decision_id=f"refuse-sub-{n:04d}",
                details={"reason": f"class scheduled may not use share research ({n})"},
            )
        )


def _key(seq: int) -> dict[str, Any]:
    return {"pk": {"S": f"CHAIN#{CHAIN}"}, "sk": {"S": f"SEQ#{seq:012d}"}}


def _item(dynamodb: Any, seq: int) -> dict[str, Any]:
    return from_item(dynamodb.get_item(TableName=TABLE, Key=_key(seq), ConsistentRead=True)["Item"])


def _verify(chains: DynamoDBChainStore) -> tuple[int, ChainBreak | None]:
    return verify_chain(CHAIN, chains.records(CHAIN), chains.markers(CHAIN))


@pytest.fixture
def five(decisions: DecisionLog, clock: ManualClock, chains: DynamoDBChainStore) -> None:
    _five_decisions(decisions, clock)
    assert _verify(chains) == (5, None)


@pytest.mark.usefixtures("five")
def test_intact_chain_links_every_record(chains: DynamoDBChainStore) -> None:
    records = list(chains.records(CHAIN))
    assert [r["seq"] for r in records] == [1, 2, 3, 4, 5]
    assert all(b["prevHash"] == a["hash"] for a, b in itertools.pairwise(records))
    assert chains.chains() == [CHAIN]


@pytest.mark.usefixtures("five")
def test_edited_record_fails_at_that_record(dynamodb: Any, chains: DynamoDBChainStore) -> None:
    dynamodb.update_item(
        TableName=TABLE,
        Key=_key(3),
        UpdateExpression="SET #a = :a",
        ExpressionAttributeNames={"#a": "action"},
        ExpressionAttributeValues={":a": {"S": "SubmissionAccepted"}},
    )

    _count, broken = _verify(chains)

    assert broken == ChainBreak(CHAIN, 3, "hash does not match its content (changed)")
    assert str(broken) == "chain ml-gov-queue: record 3: hash does not match its content (changed)"


@pytest.mark.parametrize("seq", [3, 5])
@pytest.mark.usefixtures("five")
def test_edited_record_with_recomputed_hash_fails_at_that_record(
    dynamodb: Any, chains: DynamoDBChainStore, seq: int
) -> None:
    record = _item(dynamodb, seq)
    record["details"] = {"reason": "nothing to see"}
    record["hash"] = record_hash({k: v for k, v in record.items() if k not in ("pk", "sk")})
    dynamodb.put_item(TableName=TABLE, Item=to_item(record))

    _, broken = _verify(chains)

    assert broken is not None and broken.seq == seq
    assert "replaced or forged" in broken.reason


@pytest.mark.usefixtures("five")
def test_deleted_record_fails_at_that_record(dynamodb: Any, chains: DynamoDBChainStore) -> None:
    dynamodb.delete_item(TableName=TABLE, Key=_key(3))

    assert _verify(chains)[1] == ChainBreak(
        CHAIN, 3, "missing: the next stored record is 4 (deleted)"
    )


@pytest.mark.usefixtures("five")
def test_deleted_last_record_fails_at_that_record(
    dynamodb: Any, chains: DynamoDBChainStore
) -> None:
    dynamodb.delete_item(TableName=TABLE, Key=_key(5))

    assert _verify(chains)[1] == ChainBreak(
        CHAIN,
        5,
        "missing: dedup marker 'decision:refuse-sub-0005' names it but the chain has no "
        "such record (deleted)",
    )


@pytest.mark.usefixtures("five")
def test_inserted_record_fails_at_that_record(dynamodb: Any, chains: DynamoDBChainStore) -> None:
    """A careful forger: shifts records 3-5 to 4-6 (rehashed with their new seq), puts a
    well-formed record 3 chained to record 2, and writes its dedup marker too."""
    originals = [_item(dynamodb, seq) for seq in (5, 4, 3)]
    for record in originals:
        body = {k: v for k, v in record.items() if k not in ("pk", "sk", "hash")}
        body["seq"] = int(record["seq"]) + 1
        body["hash"] = record_hash(body)
        dynamodb.put_item(
            TableName=TABLE,
            Item=to_item({**body, **{"pk": f"CHAIN#{CHAIN}", "sk": f"SEQ#{body['seq']:012d}"}}),
        )
        dynamodb.put_item(
            TableName=TABLE,
            Item=to_item(
                {
                    "pk": f"DEDUP#{CHAIN}",
                    "sk": body["dedupKey"],
                    "seq": body["seq"],
                    "hash": body["hash"],
                }
            ),
        )
    second = _item(dynamodb, 2)
    forged = seal(
        {"recordType": "Decision", "kind": "DECISION", "action": "EscalationApproved"},
        chain=CHAIN,
        seq=3,
        prev_hash=str(second["hash"]),
        dedup_key="decision:forged",
    )
    dynamodb.put_item(
        TableName=TABLE, Item=to_item({**forged, "pk": f"CHAIN#{CHAIN}", "sk": f"SEQ#{3:012d}"})
    )
    dynamodb.put_item(
        TableName=TABLE,
        Item=to_item(
            {"pk": f"DEDUP#{CHAIN}", "sk": "decision:forged", "seq": 3, "hash": forged["hash"]}
        ),
    )

    assert _verify(chains)[1] == ChainBreak(
        CHAIN, 3, "inserted: record 4 links to record 2, so record(s) 3 were put in between"
    )


@pytest.mark.usefixtures("five")
def test_naively_inserted_copy_fails_at_its_position(
    dynamodb: Any, chains: DynamoDBChainStore
) -> None:
    copy = _item(dynamodb, 2)
    copy["sk"] = "SEQ#000000000002x"
    dynamodb.put_item(TableName=TABLE, Item=to_item(copy))

    assert _verify(chains)[1] == ChainBreak(
        CHAIN, 3, "an extra record claiming seq 2 is stored after record 2 (inserted)"
    )


@pytest.mark.usefixtures("five")
def test_redelivery_after_its_record_was_deleted_reports_the_tampering(
    dynamodb: Any, decisions: DecisionLog
) -> None:
    dynamodb.delete_item(TableName=TABLE, Key=_key(5))

    with pytest.raises(ChainIntegrityError, match="'decision:refuse-sub-0005' exists but its"):
        decisions.record_decision(
            ControllerDecision(
                action="SubmissionRefused",
                actor="quotagov",
                job_queue=CHAIN,
                resource="sub-0005",
                decision_id="refuse-sub-0005",
            )
        )


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        (10**38 - 1, str(10**38 - 1)),  # 38 digits: a number
        (10**38, '"' + str(10**38) + '"'),  # 39 digits: boto3 would refuse it
        (1e300, '"1E+300"'),
        (1e-200, '"1E-200"'),
        (1.5e125, '"1.5E+125"'),  # integral, 126 digits written out
        (2.5, "2.5"),
    ],
)
def test_numbers_dynamodb_cannot_store_are_kept_as_text(value: Any, canonical: str) -> None:
    from quotagov.governance.canonical import canonical_json

    assert canonical_json({"n": value}) == '{"n":' + canonical + "}"
