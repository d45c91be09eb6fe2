"""Figures for the audit hash chain: hashing and verification speed, append cost under
contention (writers racing for slots against a loopback moto DynamoDB server), and the
cost of issue 14's seals and digests (in-process moto DynamoDB, KMS and S3).

Run: ``.venv/bin/python benchmarks/audit_chain.py [--records 2000] [--writers 20]
[--sealed-records 10000]``. Prints figures; asserts nothing. moto's latency is not
DynamoDB's or KMS's: the figures that carry over are calls per record (attempts,
``GenerateMac``, ``VerifyMac``, ``Sign``, S3 reads), not seconds.

"Before" in the sealed section is ``verify`` without seals and digests, which is the
check main had (links, dedup markers, registry); "after" adds every digest and the seal
bisection. Both run in the same process on the same chain.
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


class _CountingSealer:
    """Counts the KMS MAC calls of the real sealer."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.key_id = inner.key_id
        self.generate = 0
        self.verify = 0

    def seal(self, message: bytes) -> str:
        self.generate += 1
        return str(self.inner.seal(message))

    def check(self, message: bytes, seal_text: str) -> bool:
        self.verify += 1
        return bool(self.inner.check(message, seal_text))


def sealed_chain(records: int, digest_every: int, appends: int) -> None:
    """Append ``records`` sealed records (a digest every ``digest_every``), then verify
    before (links + markers) and after (+ digests + seals)."""
    from moto import mock_aws

    from quotagov.adapters.dynamodb_audit import to_item
    from quotagov.adapters.kms_audit import KmsDigestSigner, KmsRecordSealer, PublicKeyChecker
    from quotagov.adapters.s3_digests import S3DigestStore
    from quotagov.clock import ManualClock
    from quotagov.governance.audit.digests import DigestPublisher
    from quotagov.governance.audit.review import DigestSource, verify
    from quotagov.governance.audit.seals import sealed

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    with mock_aws():
        region = "eu-west-1"
        db = boto3.client("dynamodb", region_name=region)
        kms = boto3.client("kms", region_name=region)
        s3 = boto3.client("s3", region_name=region)
        db.create_table(
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
        mac_key = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")
        sign_key = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")
        s3.create_bucket(
            Bucket="bench-digests",
            CreateBucketConfiguration={"LocationConstraint": region},  # type: ignore[typeddict-item]
            ObjectLockEnabledForBucket=True,
        )
        store = DynamoDBChainStore("bench", db)
        sealer = _CountingSealer(KmsRecordSealer(mac_key["KeyMetadata"]["KeyId"], kms))
        digests = S3DigestStore("bench-digests", s3)
        publisher = DigestPublisher(
            chains=store,
            store=digests,
            signer=KmsDigestSigner(sign_key["KeyMetadata"]["KeyId"], kms),
            clock=ManualClock(start=1777888800.0),
            sealer=sealer,
        )
        plain = ChainWriter(DynamoDBChainStore("bench", db))
        start = time.perf_counter()
        for k in range(appends):
            plain.append("unsealed", f"u{k}", {**SAMPLE, "k": k})
        unsealed = (time.perf_counter() - start) / appends
        writer = ChainWriter(store, sealer=sealer)
        start = time.perf_counter()
        for k in range(appends):
            writer.append("sealed", f"s{k}", {**SAMPLE, "k": k})
        sealed_each = (time.perf_counter() - start) / appends
        print(
            f"append (ChainWriter, moto): {sealed_each * 1000:.2f} ms/record sealed vs "
            f"{unsealed * 1000:.2f} ms unsealed; {sealer.generate / appends:.2f} GenerateMac "
            "per record",
            flush=True,
        )
        # The long chain is written straight to the table (moto's Query is linear in the
        # partition, so appending 10,000 records one by one through it takes too long),
        # sealed by the real KMS adapter, with a digest every ``digest_every`` records.
        prev, signatures, digest_seconds = GENESIS_HASH, 0, 0.0
        sealer.generate = 0
        seal_seconds = 0.0
        for first in range(1, records + 1, digest_every):
            items = []
            for seq in range(first, min(records, first + digest_every - 1) + 1):
                record = seal(
                    {**SAMPLE, "k": seq}, chain="q", seq=seq, prev_hash=prev, dedup_key=f"e:{seq}"
                )
                tick = time.perf_counter()
                record = sealed(record, sealer)
                seal_seconds += time.perf_counter() - tick
                prev = record["hash"]
                items.append({"pk": "CHAIN#q", "sk": f"SEQ#{seq:012d}", **record})
                items.append(
                    {"pk": "DEDUP#q", "sk": f"e:{seq}", "seq": seq, "chain": "q", "hash": prev}
                )
            if first == 1:
                items.append({"pk": "CHAINS", "sk": "q"})
            for n in range(0, len(items), 25):
                db.batch_write_item(
                    RequestItems={
                        "bench": [{"PutRequest": {"Item": to_item(i)}} for i in items[n : n + 25]]
                    }
                )
            publisher.clock.advance(900)  # type: ignore[attr-defined]
            tick = time.perf_counter()
            signatures += sum(o.status == "published" for o in publisher.publish(only=["q"]))
            digest_seconds += time.perf_counter() - tick
        print(
            f"seal: {seal_seconds / records * 1000:.2f} ms/record (one GenerateMac each, "
            f"{sealer.generate} for {records}); {signatures} digests = {signatures} Sign "
            f"calls, {digest_seconds / max(signatures, 1) * 1000:.0f} ms each incl. "
            "reading and checking their records",
            flush=True,
        )
        sealer.verify = 0
        start = time.perf_counter()
        [before] = [r for r in verify(store) if r.chain == "q"]
        old = time.perf_counter() - start
        checker = PublicKeyChecker.from_kms(sign_key["KeyMetadata"]["KeyId"], kms)
        start = time.perf_counter()
        [after] = [
            r
            for r in verify(store, digests=DigestSource(digests, checker), sealer=sealer)
            if r.chain == "q"
        ]
        new = time.perf_counter() - start
        assert before.intact and after.intact, (before, after)
        print(
            f"verify {records} records before (links, markers): {old:.2f} s, "
            f"{records / old:,.0f} records/s",
            flush=True,
        )
        print(
            f"verify {records} records after (+ {after.digests} digests, seals): {new:.2f} s, "
            f"{records / new:,.0f} records/s; {sealer.verify} VerifyMac calls (bisection), "
            f"1 GetPublicKey, {after.digests} digest objects read"
        )


def main() -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=20)
    parser.add_argument("--per-writer", type=int, default=1)
    parser.add_argument("--sealed-records", type=int, default=10000)
    parser.add_argument("--digest-every", type=int, default=1000)
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--only-sealed", action="store_true", help="skip the first two parts")
    args = parser.parse_args()
    if not args.only_sealed:
        in_memory(args.records)
        contended(args.writers, args.per_writer)
    sealed_chain(args.sealed_records, args.digest_every, args.appends)


if __name__ == "__main__":
    main()
