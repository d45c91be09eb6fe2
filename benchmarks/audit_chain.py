"""Figures for the audit hash chain: hashing and verification speed, and append cost
under contention (writers racing for slots against a loopback moto DynamoDB server).

Run: ``.venv/bin/python benchmarks/audit_chain.py [--records 2000] [--writers 20]``.
Prints figures; asserts nothing. moto's latency is not DynamoDB's: the contention
figure that carries over is attempts per record, not seconds.
"""

from __future__ import annotations

import argparse
import logging
import os
import threading
import time
from typing import Any

import boto3
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.governance.audit.chain import (
    GENESIS_HASH,
    ChainWriter,
    record_hash,
    seal,
    verify_chain,
)
from quotagov.governance.ports import AppendAttempt

SAMPLE = {
    "recordType": "CloudTrail",
    "kind": "CHANGE",
    "time": "2026-05-04T10:02:09Z",
    "actor": {"principalArn": "arn:aws:sts::111122223333:assumed-role/ml-admins/alice"},
    "action": "UpdateQuotaShare",
    "resource": {"type": "quota-share", "name": "release"},
    "before": {"capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}]},
    "after": {"capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}]},
    "difference": [{"path": "capacityLimits[ml.g5.xlarge].maxCapacity", "before": 2, "after": 1}],
    "findings": [{"code": "CAPACITY_LIMIT_BELOW_USE", "severity": "high", "message": "x" * 200}],
}


def in_memory(records: int) -> None:
    chain: list[dict[str, Any]] = []
    prev = GENESIS_HASH
    start = time.perf_counter()
    for seq in range(1, records + 1):
        record = seal(SAMPLE, chain="q", seq=seq, prev_hash=prev, dedup_key=f"event:{seq}")
        prev = record["hash"]
        chain.append(record)
    sealed = time.perf_counter() - start
    start = time.perf_counter()
    count, broken = verify_chain("q", chain)
    verified = time.perf_counter() - start
    assert broken is None and count == records
    print(f"seal:   {records / sealed:,.0f} records/s ({sealed / records * 1e6:.0f} us each)")
    print(f"verify: {records / verified:,.0f} records/s ({len(record_hash(SAMPLE))}-hex SHA-256)")


def contended(writers: int, per_writer: int) -> None:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    server = make_server(
        "127.0.0.1",
        0,
        DomainDispatcherApplication(create_backend_app),
        threaded=False,
        request_handler=MotoRequestHandler,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    session = boto3.session.Session()
    clients = [
        session.client("dynamodb", region_name="eu-west-1", endpoint_url=url)
        for _ in range(writers)
    ]
    clients[0].create_table(
        TableName="bench",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    attempts = [0]
    lock = threading.Lock()

    class Counting(DynamoDBChainStore):
        def try_append(self, record: Any) -> AppendAttempt:
            with lock:
                attempts[0] += 1
            return super().try_append(record)

    barrier = threading.Barrier(writers)

    def run(n: int) -> None:
        writer = ChainWriter(Counting("bench", clients[n]))
        barrier.wait()
        for k in range(per_writer):
            writer.append("q", f"w{n}-{k}", {**SAMPLE, "writer": n, "k": k})

    threads = [threading.Thread(target=run, args=(n,)) for n in range(writers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    store = Counting("bench", clients[0])
    count, broken = verify_chain("q", store.records("q"), store.markers("q"))
    total = writers * per_writer
    print(
        f"contended: {writers} writers x {per_writer} records: {elapsed:.1f} s, "
        f"{attempts[0] / total:.1f} attempts/record, chain {count} records, "
        f"{'intact' if broken is None else broken}"
    )
    start = time.perf_counter()
    for _ in range(20):
        Counting("bench", clients[0]).head("q")
    print(f"moto request latency (head query): {(time.perf_counter() - start) / 20 * 1000:.1f} ms")
    server.shutdown()


def main() -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=20)
    parser.add_argument("--per-writer", type=int, default=1)
    args = parser.parse_args()
    in_memory(args.records)
    contended(args.writers, args.per_writer)


if __name__ == "__main__":
    main()
