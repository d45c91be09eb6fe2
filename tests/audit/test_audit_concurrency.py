"""Twenty concurrent writers leave one unbroken chain; a redelivered CloudTrail event,
even racing its first delivery, stores one record.

The writers are real threads with their own boto3 clients talking HTTP to a moto
server on loopback. The server handles one request at a time: DynamoDB applies each
request atomically, and moto's in-memory backend is only atomic per request when
requests do not overlap (its transactions restore a table snapshot on failure), so
serializing requests on the server gives DynamoDB's semantics while the clients race
for real: each reads the head, then tries to claim the next slot.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import boto3
import pytest

from audit.support import (
    CONTROLLER_ROLE,
    POLICY_DOCUMENT,
    TABLE,
    create_audit_table,
    load_call,
    simulated_batch,
)
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import ChainWriter, verify_chain
from quotagov.governance.audit.decisions import DecisionLog
from quotagov.governance.audit.trail import AuditTrail
from quotagov.governance.ports import AppendAttempt, AppendOutcome, ControllerDecision
from quotagov.policy import parse_policy
from support.aws import REGION
from support.moto_server import moto_server, reset_moto


class CountingChainStore(DynamoDBChainStore):
    """The DynamoDB chain store, counting lost slot races (to show the writers raced)."""

    lost: ClassVar[list[int]] = []

    def try_append_run(self, records: Sequence[Mapping[str, Any]]) -> AppendAttempt:
        attempt = super().try_append_run(records)
        if attempt.outcome is AppendOutcome.SLOT_TAKEN:
            self.lost.append(int(records[0]["seq"]))
        return attempt


WRITERS = 20
PER_WRITER = 1
CHAIN = "ml-gov-queue"


@pytest.fixture
def endpoint() -> Iterator[str]:
    """A moto server on 127.0.0.1 with a free port, stopped after the test."""
    with moto_server() as url:
        reset_moto(url)
        create_audit_table(boto3.client("dynamodb", region_name=REGION, endpoint_url=url))
        try:
            yield url
        finally:
            reset_moto(url)


_SESSION = boto3.session.Session()


def _client(url: str) -> Any:
    """A client of its own (clients made from one session share the loaded model)."""
    return _SESSION.client("dynamodb", region_name=REGION, endpoint_url=url)


def _run(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)


def test_twenty_concurrent_writers_leave_one_unbroken_chain(endpoint: str) -> None:
    start = threading.Barrier(WRITERS)
    CountingChainStore.lost.clear()
    failures: list[BaseException] = []

    clients = [_client(endpoint) for _ in range(WRITERS)]

    def writer(n: int) -> None:
        client = clients[n]
        log = DecisionLog(
            ChainWriter(CountingChainStore(TABLE, client)),
            DynamoDBVersionStore(TABLE, client),
            ManualClock(1777888800.0 + n),
        )
        start.wait()
        try:
            for k in range(PER_WRITER):
                log.record_decision(
                    ControllerDecision(
                        action="EscalationApproved",
                        actor=f"U0APPROVER{n:02d}",
                        job_queue=CHAIN,
                        resource=f"esc-{n:02d}-{k}",
                        decision_id=f"esc-{n:02d}-{k}-approved",
                        details={"writer": n, "k": k},
                    )
                )
        except BaseException as exc:  # reported below
            failures.append(exc)

    _run([threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)])

    assert failures == []
    assert len(CountingChainStore.lost) >= WRITERS - 1  # they did race for slots
    store = DynamoDBChainStore(TABLE, _client(endpoint))
    records = list(store.records(CHAIN))
    assert verify_chain(CHAIN, records, store.markers(CHAIN)) == (WRITERS * PER_WRITER, None)
    assert [r["seq"] for r in records] == list(range(1, WRITERS * PER_WRITER + 1))
    assert sorted(r["decisionId"] for r in records) == sorted(
        f"esc-{n:02d}-{k}-approved" for n in range(WRITERS) for k in range(PER_WRITER)
    )


def test_redelivered_event_racing_its_first_delivery_stores_one_record(endpoint: str) -> None:
    policy = parse_policy(POLICY_DOCUMENT)
    call = load_call("update-quota-share-borrow")
    deliveries = 6
    start = threading.Barrier(deliveries)
    results: list[tuple[int, bool]] = []
    lock = threading.Lock()

    clients = [_client(endpoint) for _ in range(deliveries)]
    batch = simulated_batch(policy, ManualClock(call.event_ms / 1000))

    def deliver(client: Any) -> None:
        trail = AuditTrail(
            chains=DynamoDBChainStore(TABLE, client),
            versions=DynamoDBVersionStore(TABLE, client),
            batch=batch,
            policy=policy,
            clock=ManualClock(call.event_ms / 1000 + 30),
            controller_principals=[CONTROLLER_ROLE],
        )
        start.wait()
        result = trail.record_call(call)
        with lock:
            results.append((int(result.record["seq"]), result.created))

    _run([threading.Thread(target=deliver, args=(client,)) for client in clients])

    assert sorted(results) == [(1, False)] * (deliveries - 1) + [(1, True)]
    store = DynamoDBChainStore(TABLE, _client(endpoint))
    records = list(store.records(CHAIN))
    assert len(records) == 1 and records[0]["eventId"] == call.eventID
    assert store.markers(CHAIN) == {f"event:{call.eventID}": (1, records[0]["hash"])}
    assert verify_chain(CHAIN, records, store.markers(CHAIN)) == (1, None)


def test_sequential_redelivery_stores_one_record(endpoint: str) -> None:
    client = _client(endpoint)
    policy = parse_policy(POLICY_DOCUMENT)
    clock = ManualClock(1777888900.0)
    trail = AuditTrail(
        chains=DynamoDBChainStore(TABLE, client),
        versions=DynamoDBVersionStore(TABLE, client),
        batch=simulated_batch(policy, clock),
        policy=policy,
        clock=clock,
    )
    first = trail.record_call(load_call("update-quota-share-preemption"))
    again = trail.record_call(load_call("update-quota-share-preemption"))

    assert first.created and not again.created
    assert again.record == first.record
    assert len(list(DynamoDBChainStore(TABLE, client).records(CHAIN))) == 1


def test_sealed_writers_racing_with_batches_leave_one_chain_every_seal_proving_it(
    endpoint: str,
) -> None:
    """Six writer instances (six AuditFunction containers), each with its own KMS and
    DynamoDB clients, append batches of three at once. Each seals its run only on top of
    a head it proved (its own, or one it checked with VerifyMac after losing a race),
    so the chain's last seal proves every record."""
    from quotagov.adapters.kms_audit import KmsRecordSealer
    from quotagov.governance.audit.seals import first_unsealed

    writers, batches, size = 6, 2, 3
    kms = [
        _SESSION.client("kms", region_name=REGION, endpoint_url=endpoint) for _ in range(writers)
    ]
    key = kms[0].create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]
    start = threading.Barrier(writers)
    failures: list[BaseException] = []

    def writer(n: int) -> None:
        chain_writer = ChainWriter(
            DynamoDBChainStore(TABLE, _client(endpoint)),
            sealer=KmsRecordSealer(key["KeyId"], kms[n]),
        )
        start.wait()
        try:
            for b in range(batches):
                chain_writer.append_run(
                    CHAIN,
                    [(f"w{n}-b{b}-{k}", {"writer": n, "batch": b, "k": k}) for k in range(size)],
                )
        except BaseException as exc:  # reported below
            failures.append(exc)

    _run([threading.Thread(target=writer, args=(n,)) for n in range(writers)])

    assert failures == []
    store = DynamoDBChainStore(TABLE, _client(endpoint))
    records = list(store.records(CHAIN))
    total = writers * batches * size
    assert verify_chain(CHAIN, records, store.markers(CHAIN)) == (total, None)
    # Every run is whole and sealed on its last record: a batch's records are consecutive.
    runs = [(r["writer"], r["batch"]) for r in records]
    assert all(runs[i] == runs[i - i % size] for i in range(total))
    assert [int(r["seq"]) for r in records if "seal" in r] == list(range(size, total + 1, size))
    check = first_unsealed(records, KmsRecordSealer(key["KeyId"], kms[0]))
    assert (check.bad_seq, check.checks) == (None, 1)
