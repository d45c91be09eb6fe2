"""audit verify reports edited dedup markers and stray items as breaks, never crashes."""

from __future__ import annotations

from typing import Any

import pytest

from audit.support import TABLE, load_call
from quotagov import composition
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.governance.audit.trail import AuditTrail
from quotagov_tools.cli import main


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch, trail: AuditTrail, chains: DynamoDBChainStore) -> Any:
    trail.record_call(load_call("update-quota-share-strategy"))
    trail.record_call(load_call("update-quota-share-borrow"))
    monkeypatch.setenv("AUDIT_TABLE", TABLE)  # the CLI reads its table as Lambda would
    yield
    composition.reset()


@pytest.fixture
def empty(monkeypatch: pytest.MonkeyPatch, chains: DynamoDBChainStore) -> Any:
    monkeypatch.setenv("AUDIT_TABLE", TABLE)  # the CLI reads its table as Lambda would
    yield
    composition.reset()


@pytest.mark.usefixtures("empty")
def test_empty_table(capsys: Any) -> None:
    assert main(["audit", "verify"]) == 0


def _markers(dynamodb: Any) -> list[dict[str, Any]]:
    items = dynamodb.scan(TableName=TABLE)["Items"]
    return [i for i in items if i["pk"]["S"].startswith("DEDUP#")]


@pytest.mark.usefixtures("recorded")
@pytest.mark.parametrize(
    "update",
    [
        ("REMOVE seq", {}),
        ("SET seq = :v", {":v": {"S": "two"}}),
        ("SET seq = :v", {":v": {"NULL": True}}),
        ("SET seq = :v", {":v": {"L": []}}),
    ],
)
def test_tampered_marker_is_reported_not_crash(
    dynamodb: Any, capsys: Any, update: tuple[str, dict[str, Any]]
) -> None:
    m = _markers(dynamodb)[0]
    kw: dict[str, Any] = {"ExpressionAttributeValues": update[1]} if update[1] else {}
    dynamodb.update_item(
        TableName=TABLE, Key={"pk": m["pk"], "sk": m["sk"]}, UpdateExpression=update[0], **kw
    )
    code = main(["audit", "verify"])
    out = capsys.readouterr().out
    assert code == 1 and "BROKEN" in out, out


@pytest.mark.usefixtures("recorded")
def test_stray_items(dynamodb: Any, capsys: Any) -> None:
    dynamodb.put_item(TableName=TABLE, Item={"pk": {"S": "CHAIN#"}, "sk": {"S": "x"}})
    dynamodb.put_item(TableName=TABLE, Item={"pk": {"S": "DEDUP#other"}, "sk": {"S": "k"}})
    code = main(["audit", "verify"])
    out = capsys.readouterr().out
    assert code == 1 and "BROKEN" in out, out


@pytest.mark.usefixtures("recorded")
@pytest.mark.parametrize(
    "anchor",
    [
        "ml-gov-queue=3:" + "a" * 64,
        "ml-gov-queue=99999999999999999999999:" + "a" * 64,
        "nochain=1:" + "b" * 64,
    ],
)
def test_anchor(capsys: Any, anchor: str) -> None:
    assert main(["audit", "verify", "--anchor", anchor]) == 1, capsys.readouterr()
