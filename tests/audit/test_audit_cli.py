"""``quotagov audit verify`` and ``quotagov audit show`` against the (moto) audit table."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from audit.support import TABLE, load_call
from quotagov import composition
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.clock import ManualClock
from quotagov.governance.audit.decisions import DecisionLog
from quotagov.governance.audit.trail import AuditTrail
from quotagov.governance.ports import ControllerDecision
from quotagov_tools.cli import main


@pytest.fixture
def history(
    monkeypatch: pytest.MonkeyPatch,
    trail: AuditTrail,
    decisions: DecisionLog,
    clock: ManualClock,
    chains: DynamoDBChainStore,
) -> Iterator[None]:
    trail.record_call(load_call("update-quota-share-strategy"))  # 10:05:41 release
    trail.record_call(load_call("update-quota-share-borrow"))  # 10:11:03 research
    clock.set(1777890600.0)  # 10:30:00
    decisions.record_decision(
        ControllerDecision(
            action="SubmissionRefused",
            actor="quotagov",
            job_queue="ml-gov-queue",
            resource="sub-0009",
            decision_id="refuse-sub-0009",
            details={"reason": "class scheduled may not use share research"},
        )
    )
    trail.record_call(load_call("update-quota-share-denied"))  # 11:30:00 research
    monkeypatch.setenv("AUDIT_TABLE", TABLE)  # the CLI reads its table as Lambda would
    yield
    composition.reset()


@pytest.mark.usefixtures("history")
def test_verify_exits_zero_on_an_intact_chain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "verify"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(
        r"chain ml-gov-queue: 4 records, intact; anchor ml-gov-queue=4:[0-9a-f]{64}\n", out
    )


@pytest.mark.usefixtures("history")
def test_verify_exits_non_zero_naming_the_first_broken_record(
    dynamodb: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "CHAIN#ml-gov-queue"}, "sk": {"S": "SEQ#000000000002"}},
        UpdateExpression="SET findings = :none",
        ExpressionAttributeValues={":none": {"L": []}},
    )

    assert main(["audit", "verify", "--queue", "ml-gov-queue"]) == 1
    assert capsys.readouterr().out == (
        "BROKEN chain ml-gov-queue: record 2: hash does not match its content (changed)\n"
    )


@pytest.mark.usefixtures("history")
def test_show_prints_a_shares_history_with_differences(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["audit", "show", "--share", "release"]) == 0

    assert capsys.readouterr().out.splitlines() == [
        "#1 2026-05-04T10:05:41Z CHANGE UpdateQuotaShare quota-share release",
        "    by arn:aws:sts::111122223333:assumed-role/ml-admins/carol",
        "    resourceSharingConfiguration.borrowLimit: (none) -> -1",
        "    resourceSharingConfiguration.strategy: RESERVE -> LEND_AND_BORROW",
        "    (before taken from: policy)",
        "    ! STRATEGY_AWAY_FROM_RESERVE [high] quota share release: strategy changed from "
        "RESERVE to LEND_AND_BORROW; its idle capacity is now lent and taken back by "
        "cross-share preemption",
        "    ! BORROW_LIMIT_RAISED [medium] quota share release: borrow limit raised from 0% "
        "to unlimited (-1)",
        "    ! POLICY_DRIFT [medium] quota share release: resourceSharingConfiguration."
        "borrowLimit is -1, policy says None; resourceSharingConfiguration.strategy is "
        "'LEND_AND_BORROW', policy says 'RESERVE'",
    ]


@pytest.mark.usefixtures("history")
def test_show_since_a_time(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "show", "--since", "2026-05-04T10:30:00Z"]) == 0

    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("#")] == [
        "#3 2026-05-04T10:30:00Z DECISION SubmissionRefused decision-subject sub-0009",
        "#4 2026-05-04T11:30:00Z ATTEMPT UpdateQuotaShare quota-share research",
    ]
    assert "    details: reason=class scheduled may not use share research" in out
    assert any(line.startswith("    failed: AccessDeniedException: User: ") for line in out)


@pytest.mark.usefixtures("history")
def test_show_rejects_a_bad_since(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "show", "--since", "last tuesday"]) == 2
    assert "--since: 'last tuesday' is neither ISO-8601" in capsys.readouterr().err


def test_verify_with_an_empty_table(
    monkeypatch: pytest.MonkeyPatch, chains: DynamoDBChainStore, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUDIT_TABLE", TABLE)  # the CLI reads its table as Lambda would
    try:
        assert main(["audit", "verify"]) == 0
    finally:
        composition.reset()
    assert capsys.readouterr().out == "no audit chains found\n"


def test_no_table_named_is_exit_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AUDIT_TABLE", raising=False)
    composition.reset()
    try:
        assert main(["audit", "verify"]) == 2
    finally:
        composition.reset()
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["quotagov audit verify: setting AUDIT_TABLE is not set in the environment"]


def test_a_missing_table_is_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], chains: DynamoDBChainStore
) -> None:
    for name in ("AUDIT_TABLE", "AWS_REGION", "AWS_DEFAULT_REGION"):  # restored after the test
        monkeypatch.setenv(name, os.environ.get(name, ""))
    composition.reset()
    try:
        assert main(["audit", "show", "--table", "no-such-table", "--region", "eu-west-1"]) == 2
    finally:
        composition.reset()
    err = capsys.readouterr().err
    assert err.startswith("quotagov audit show: ") and "ResourceNotFoundException" in err


def _delete(dynamodb: Any, pk: str, sk: str) -> None:
    dynamodb.delete_item(TableName=TABLE, Key={"pk": {"S": pk}, "sk": {"S": sk}})


@pytest.mark.usefixtures("history")
def test_verify_finds_a_tampered_chain_whose_registry_item_was_deleted(
    dynamodb: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "CHAIN#ml-gov-queue"}, "sk": {"S": "SEQ#000000000002"}},
        UpdateExpression="SET findings = :none",
        ExpressionAttributeValues={":none": {"L": []}},
    )
    _delete(dynamodb, "CHAINS", "ml-gov-queue")

    assert main(["audit", "verify"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "BROKEN chain ml-gov-queue: record 2: hash does not match its content (changed)",
        "BROKEN chain ml-gov-queue: not in the chain registry (item pk=CHAINS, "
        "sk=ml-gov-queue deleted) but its items are in the table",
    ]


@pytest.mark.usefixtures("history")
def test_verify_reports_an_intact_chain_missing_from_the_registry(
    dynamodb: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _delete(dynamodb, "CHAINS", "ml-gov-queue")

    assert main(["audit", "verify", "--queue", "ml-gov-queue"]) == 1
    assert capsys.readouterr().out == (
        "BROKEN chain ml-gov-queue: not in the chain registry (item pk=CHAINS, "
        "sk=ml-gov-queue deleted) but its items are in the table\n"
    )


@pytest.mark.usefixtures("history")
def test_verify_finds_a_chain_left_only_as_dedup_markers(
    dynamodb: Any, chains: DynamoDBChainStore, capsys: pytest.CaptureFixture[str]
) -> None:
    for seq in range(1, 5):
        _delete(dynamodb, "CHAIN#ml-gov-queue", f"SEQ#{seq:012d}")
    _delete(dynamodb, "CHAINS", "ml-gov-queue")
    assert chains.chains() == []
    assert chains.stored_chains() == ["ml-gov-queue"]

    assert main(["audit", "verify"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("BROKEN chain ml-gov-queue: record 1: missing: dedup marker ")
    assert out[1].startswith("BROKEN chain ml-gov-queue: not in the chain registry")


@pytest.mark.usefixtures("history")
def test_verify_flags_a_registered_chain_whose_items_were_all_deleted(
    dynamodb: Any, chains: DynamoDBChainStore, capsys: pytest.CaptureFixture[str]
) -> None:
    for item in dynamodb.scan(TableName=TABLE)["Items"]:
        if item["pk"]["S"].startswith(("CHAIN#", "DEDUP#")):
            _delete(dynamodb, item["pk"]["S"], item["sk"]["S"])

    assert main(["audit", "verify"]) == 1
    assert capsys.readouterr().out == (
        "BROKEN chain ml-gov-queue: record 1: missing: the chain is registered but holds "
        "no records (deleted)\n"
    )


@pytest.mark.usefixtures("history")
def test_verify_cannot_see_the_newest_record_deleted_with_its_dedup_marker(
    dynamodb: Any, chains: DynamoDBChainStore, capsys: pytest.CaptureFixture[str]
) -> None:
    # The documented limit (audit_review module doc): a truncated tail is a shorter,
    # self-consistent chain; only an anchor kept outside the table would reveal it.
    newest = chains.head("ml-gov-queue")
    assert newest is not None and newest.seq == 4
    record = next(r for r in chains.records("ml-gov-queue") if r["seq"] == 4)
    _delete(dynamodb, "CHAIN#ml-gov-queue", "SEQ#000000000004")
    _delete(dynamodb, "DEDUP#ml-gov-queue", str(record["dedupKey"]))

    assert main(["audit", "verify"]) == 0
    assert capsys.readouterr().out.startswith("chain ml-gov-queue: 3 records, intact; ")


@pytest.mark.usefixtures("history")
def test_an_anchor_from_an_earlier_verify_reveals_a_truncated_tail(
    dynamodb: Any, chains: DynamoDBChainStore, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", "verify"]) == 0
    anchor = capsys.readouterr().out.strip().rsplit("; anchor ", 1)[1]
    assert main(["audit", "verify", "--anchor", anchor]) == 0
    capsys.readouterr()
    record = next(r for r in chains.records("ml-gov-queue") if r["seq"] == 4)
    _delete(dynamodb, "CHAIN#ml-gov-queue", "SEQ#000000000004")
    _delete(dynamodb, "DEDUP#ml-gov-queue", str(record["dedupKey"]))

    assert main(["audit", "verify", "--anchor", anchor]) == 1
    assert capsys.readouterr().out == (
        "BROKEN chain ml-gov-queue: record 4: missing: the anchor names record 4 but the "
        "chain ends at record 3 (its tail was deleted)\n"
    )


@pytest.mark.usefixtures("history")
def test_an_anchor_reveals_a_chain_deleted_with_everything_it_wrote(
    dynamodb: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", "verify"]) == 0
    anchor = capsys.readouterr().out.strip().rsplit("; anchor ", 1)[1]
    for item in dynamodb.scan(TableName=TABLE)["Items"]:
        if item["pk"]["S"].startswith(("CHAIN#", "DEDUP#", "CHAINS")):
            _delete(dynamodb, item["pk"]["S"], item["sk"]["S"])

    assert main(["audit", "verify", "--anchor", anchor]) == 1
    assert "record 4: missing: the anchor names record 4 but the chain ends at record 0" in (
        capsys.readouterr().out
    )


@pytest.mark.usefixtures("history")
def test_an_anchor_with_another_hash_is_a_break(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "verify", "--anchor", "ml-gov-queue=2:" + "ab" * 32]) == 1
    assert capsys.readouterr().out == (
        "BROKEN chain ml-gov-queue: record 2: hash differs from the anchor ababababab"
        "ab... (chain rewritten)\n"
    )


@pytest.mark.usefixtures("history")
def test_a_malformed_anchor_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "verify", "--anchor", "ml-gov-queue=4"]) == 2
    assert capsys.readouterr().err == (
        "quotagov audit verify: --anchor: 'ml-gov-queue=4' is not CHAIN=SEQ:HASH "
        "(HASH: 64 hex digits)\n"
    )


def test_stored_chains_pages_through_the_scan(
    dynamodb: Any, chains: DynamoDBChainStore, decisions: DecisionLog
) -> None:
    for n, queue in enumerate(["queue-a", "queue-b", "queue-c"]):
        decisions.record_decision(
            ControllerDecision(
                action="SubmissionRefused",
                actor="quotagov",
                job_queue=queue,
                resource=f"sub-{n}",
                decision_id=f"refuse-sub-{n}",
                details={},
            )
        )
    calls: list[dict[str, Any]] = []
    real_scan = dynamodb.scan

    def scan(**request: Any) -> Any:
        calls.append(request)
        return real_scan(**{**request, "Limit": 2})

    paged = DynamoDBChainStore(TABLE, type("Client", (), {"scan": staticmethod(scan)})())

    assert paged.stored_chains() == ["queue-a", "queue-b", "queue-c"]
    assert len(calls) > 2 and all(c["ProjectionExpression"] == "pk" for c in calls)
    assert chains.chains() == ["queue-a", "queue-b", "queue-c"]
