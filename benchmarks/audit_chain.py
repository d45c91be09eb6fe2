"""Audit chain figures: the cost of sealing records and of verifying a 10,000-record
chain, before and after, in one run.

Run: ``.venv/bin/python benchmarks/audit_chain.py [--records 10000] [--digest-every 1000]
[--appends 1000] [--batch 10] [--base OLD_CHECKOUT/src] [--moto-records 400]``.

Each side is measured in its own interpreter whose ``PYTHONPATH`` starts with that
checkout's ``src`` (this one's, and ``--base``'s), with this very file as the
measuring code, so before and after share the machine state of one run. Per side:

1. **Sealing**: ``--appends`` records through that checkout's ``ChainWriter`` with the
   KMS sealer, in audit queue batches of ``--batch`` when the writer has ``append_run``
   (after), else one ``append`` per record (before: that is how ca25167's writer is
   fed). Figures per record: KMS ``GenerateMac`` and ``VerifyMac`` calls, DynamoDB
   ``TransactWriteItems`` calls, CPU ms (``time.process_time``: user+sys of the process,
   which load disturbs less than wall time). After, also two writer instances taking
   batches in turn (each checks the head the other sealed: one ``VerifyMac`` per batch).
2. **A chain for verify**: ``--records`` records written the same way, a signed digest
   (KMS ``Sign``, S3 Object Lock) every ``--digest-every`` records.
3. **Verify** (``quotagov audit verify``'s use case, with digests and seals): CPU
   seconds and records per CPU second, KMS calls, S3 reads, DynamoDB ``Query`` pages.

KMS and S3 are moto in-process. DynamoDB is :class:`WireTable`, an in-memory table
answering the low-level client calls the adapter makes in DynamoDB's wire format (typed
attributes, 1 MB ``Query`` pages, conditional transactions): so the adapter's own
(de)serialisation is measured, but not moto's. Why: the first run of this benchmark
on moto timed out at 20 minutes for 10,000 records because moto's DynamoDB response
serialiser costs tens of ms per record read (part 4 measures it), and its
``TransactWriteItems`` deep-copies the whole table on each call (so appending one by
one is quadratic); neither is DynamoDB's cost. 4. **moto DynamoDB** (``--moto-records``,
0 to skip): the same verify of a short chain copied into moto's DynamoDB, ms per record.

moto's latencies are not AWS's: what carries over is calls per record (KMS, DynamoDB)
and reads per verify, and the CPU of quotagov's own code. Prints figures; asserts only
that every chain verifies intact.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REGION = "eu-west-1"
TABLE = "bench-audit"
BUCKET = "bench-audit-digests"
PAGE_BYTES = 1024 * 1024  # DynamoDB Query returns at most 1 MB per page

SAMPLE = {
    "recordType": "Decision",
    "kind": "DECISION",
    "time": "2026-05-04T10:02:09Z",
    "recordedAt": "2026-05-04T10:02:10Z",
    "actor": {"principalArn": "arn:aws:sts::111122223333:assumed-role/ml-admins/alice"},
    "action": "EscalationApproved",
    "resource": {"type": "decision-subject", "name": "esc-0001"},
    "jobQueue": "q",
    "details": {"level": "high", "schedulingPriority": {"before": 10, "after": 50}},
    "before": None,
    "after": None,
    "difference": [],
    "findings": [{"code": "PRIORITY_RAISED", "severity": "low", "message": "x" * 200}],
}


class WireTable:
    """An in-memory DynamoDB table behind the low-level client calls the audit adapter
    makes (``query``, ``get_item``, ``transact_write_items``, ``scan``,
    ``batch_write_item``), items kept in the wire format (typed attributes)."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}
        self.sizes: dict[tuple[str, str], int] = {}
        self.keys: dict[str, list[str]] = {}
        self.calls: Counter[str] = Counter()

    @staticmethod
    def _key(item: dict[str, Any]) -> tuple[str, str]:
        return str(item["pk"]["S"]), str(item["sk"]["S"])

    def _put(self, item: dict[str, Any]) -> None:
        pk, sk = self._key(item)
        if (pk, sk) not in self.items:
            bisect.insort(self.keys.setdefault(pk, []), sk)
        self.items[(pk, sk)] = item
        self.sizes[(pk, sk)] = len(json.dumps(item))

    def query(self, **request: Any) -> dict[str, Any]:
        self.calls["Query"] += 1
        values = request["ExpressionAttributeValues"]
        pk = values[":pk"]["S"]
        sks = self.keys.get(pk, [])
        low, high = 0, len(sks)
        if ":after" in values:
            low = bisect.bisect_right(sks, values[":after"]["S"])
        elif ":low" in values:
            low = bisect.bisect_left(sks, values[":low"]["S"])
            high = bisect.bisect_right(sks, values[":high"]["S"])
        forward = request.get("ScanIndexForward", True)
        start = request.get("ExclusiveStartKey")
        if start is not None and forward:
            low = max(low, bisect.bisect_right(sks, start["sk"]["S"]))
        elif start is not None:
            high = min(high, bisect.bisect_left(sks, start["sk"]["S"]))
        order = range(low, high) if forward else range(high - 1, low - 1, -1)
        limit = request.get("Limit")
        page: list[dict[str, Any]] = []
        size = 0
        for index in order:
            size += self.sizes[(pk, sks[index])]
            if page and (size > PAGE_BYTES or (limit is not None and len(page) >= limit)):
                return {"Items": page, "LastEvaluatedKey": {k: page[-1][k] for k in ("pk", "sk")}}
            page.append(self.items[(pk, sks[index])])
        return {"Items": page}

    def get_item(self, **request: Any) -> dict[str, Any]:
        self.calls["GetItem"] += 1
        key = request["Key"]
        item = self.items.get((key["pk"]["S"], key["sk"]["S"]))
        return {} if item is None else {"Item": item}

    def put_item(self, **request: Any) -> dict[str, Any]:
        self.calls["PutItem"] += 1
        from botocore.exceptions import ClientError

        item = request["Item"]
        if "ConditionExpression" in request and self._key(item) in self.items:
            error = {"Error": {"Code": "ConditionalCheckFailedException", "Message": "exists"}}
            raise ClientError(error, "PutItem")  # type: ignore[arg-type]
        self._put(item)
        return {}

    def transact_write_items(self, **request: Any) -> dict[str, Any]:
        self.calls["TransactWriteItems"] += 1
        from botocore.exceptions import ClientError

        puts = [entry["Put"] for entry in request["TransactItems"]]
        reasons: list[dict[str, Any]] = []
        for put in puts:
            held = self.items.get(self._key(put["Item"]))
            if held is None:
                reasons.append({"Code": "None"})
            elif put.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD":
                reasons.append({"Code": "ConditionalCheckFailed", "Item": held})
            else:
                reasons.append({"Code": "ConditionalCheckFailed"})
        if any(r["Code"] != "None" for r in reasons):
            error = {
                "Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
                "CancellationReasons": reasons,
            }
            raise ClientError(error, "TransactWriteItems")  # type: ignore[arg-type]
        for put in puts:
            self._put(put["Item"])
        return {}

    def scan(self, **request: Any) -> dict[str, Any]:
        self.calls["Scan"] += 1
        prefixes = ("CHAIN#", "DEDUP#")
        return {"Items": [{"pk": {"S": pk}} for (pk, _sk) in self.items if pk.startswith(prefixes)]}


class CountingSealer:
    """The KMS record sealer, counting ``GenerateMac`` and ``VerifyMac`` calls."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.key_id = inner.key_id
        self.generated = 0
        self.verified = 0

    def seal(self, message: bytes) -> str:
        self.generated += 1
        return str(self.inner.seal(message))

    def check(self, message: bytes, seal_text: str) -> bool:
        self.verified += 1
        return bool(self.inner.check(message, seal_text))


def _counted(client: Any, counts: Counter[str]) -> Any:
    """``client`` counting its API calls by operation name in ``counts``."""

    def count(event_name: str, **_kwargs: Any) -> None:
        counts[event_name.rsplit(".", 1)[-1]] += 1

    client.meta.events.register("before-call", count)
    return client


def _appender(writer: Any, batch: int) -> Any:
    """Append bodies the way that checkout's writer is fed: audit queue batches as one
    run (``append_run``) where it exists, else one record at a time."""
    runs = hasattr(writer, "append_run")

    def append(chain: str, first: int, count: int) -> None:
        entries = [(f"e:{k}", {**SAMPLE, "k": k}) for k in range(first, first + count)]
        if runs:
            for n in range(0, len(entries), batch):
                writer.append_run(chain, entries[n : n + batch])
        else:
            for key, body in entries:
                writer.append(chain, key, body)

    return append


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every figure of this interpreter's ``quotagov`` (see the module doc)."""
    import boto3
    from moto import mock_aws

    from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
    from quotagov.adapters.kms_audit import KmsDigestSigner, KmsRecordSealer, PublicKeyChecker
    from quotagov.adapters.s3_digests import S3DigestStore
    from quotagov.clock import ManualClock
    from quotagov.governance.audit.chain import ChainWriter
    from quotagov.governance.audit.digests import DigestPublisher
    from quotagov.governance.audit.review import DigestSource, verify

    figures: dict[str, Any] = {"runs": None}
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench")
    os.environ["AWS_DEFAULT_REGION"] = REGION
    with mock_aws():
        aws: Counter[str] = Counter()
        kms = _counted(boto3.client("kms", region_name=REGION), aws)
        s3 = _counted(boto3.client("s3", region_name=REGION), aws)
        mac_key = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")
        sign_key = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")
        s3.create_bucket(
            Bucket=BUCKET,
            CreateBucketConfiguration={"LocationConstraint": REGION},
            ObjectLockEnabledForBucket=True,
        )
        s3.put_object_lock_configuration(
            Bucket=BUCKET,
            ObjectLockConfiguration={
                "ObjectLockEnabled": "Enabled",
                "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 1}},
            },
        )
        sealer = CountingSealer(KmsRecordSealer(mac_key["KeyMetadata"]["KeyId"], kms))

        # 1. sealing
        table = WireTable()
        writer = ChainWriter(DynamoDBChainStore(TABLE, table), sealer=sealer)
        figures["runs"] = hasattr(writer, "append_run")
        _appender(writer, args.batch)("warm", 1, args.batch)  # imports, first head
        sealer.generated = sealer.verified = 0
        table.calls.clear()
        cpu = time.process_time()
        _appender(writer, args.batch)("seal", 1, args.appends)
        cpu = time.process_time() - cpu
        figures["seal"] = {
            "GenerateMac": sealer.generated / args.appends,
            "VerifyMac": sealer.verified / args.appends,
            "TransactWriteItems": table.calls["TransactWriteItems"] / args.appends,
            "cpu_ms": cpu / args.appends * 1000,
        }
        if figures["runs"]:
            other = ChainWriter(DynamoDBChainStore(TABLE, table), sealer=sealer)
            sealer.generated = sealer.verified = 0
            for n in range(args.appends // args.batch):
                turn = writer if n % 2 else other
                _appender(turn, args.batch)("alternate", 1 + n * args.batch, args.batch)
            appended = args.appends // args.batch * args.batch
            figures["alternating"] = {
                "GenerateMac": sealer.generated / appended,
                "VerifyMac": sealer.verified / appended,
            }

        # 2. a chain for verify, a digest every --digest-every records
        clock = ManualClock(start=1777888800.0)
        digests = S3DigestStore(BUCKET, s3)
        table = WireTable()  # chain q alone in its table
        store = DynamoDBChainStore(TABLE, table)
        publisher = DigestPublisher(
            chains=store,
            store=digests,
            signer=KmsDigestSigner(sign_key["KeyMetadata"]["KeyId"], kms),
            clock=clock,
            sealer=sealer,
        )
        append = _appender(ChainWriter(store, sealer=sealer), args.batch)
        sealer.generated = sealer.verified = 0
        aws.clear()
        cpu = time.process_time()
        for first in range(1, args.records + 1, args.digest_every):
            append("q", first, min(args.digest_every, args.records - first + 1))
            clock.advance(900)
            [outcome] = publisher.publish(only=["q"])
            assert outcome.status == "published", outcome
        figures["build"] = {
            "cpu_s": time.process_time() - cpu,
            "GenerateMac": sealer.generated,
            "VerifyMac (digest function)": sealer.verified,
            "Sign": aws["Sign"],
        }

        # 3. verify
        checker = PublicKeyChecker.from_kms(sign_key["KeyMetadata"]["KeyId"], kms)
        sealer.generated = sealer.verified = 0
        aws.clear()
        table.calls.clear()
        cpu = time.process_time()
        wall = time.perf_counter()
        reports = verify(store, digests=DigestSource(digests, checker), sealer=sealer)
        cpu = time.process_time() - cpu
        wall = time.perf_counter() - wall
        [report] = [r for r in reports if r.chain == "q"]
        assert report.intact and report.records == args.records, report
        figures["verify"] = {
            "cpu_s": cpu,
            "wall_s": wall,
            "records_per_cpu_s": args.records / cpu,
            "VerifyMac": sealer.verified,
            "S3 GetObject": aws["GetObject"],
            "S3 List": aws["ListObjectVersions"] + aws["ListObjectsV2"],
            "DynamoDB Query": table.calls["Query"],
            "DynamoDB Scan": table.calls["Scan"],
            "digests": report.digests,
        }

        # 4. the same verify on moto's DynamoDB, for a short chain
        if args.moto_records:
            figures["moto"] = _on_moto(args.moto_records, table, checker, digests, sealer)
    return figures


def _on_moto(
    records: int, table: WireTable, checker: Any, digests: Any, sealer: CountingSealer
) -> dict[str, float]:
    """Records ``1..records`` of chain ``q`` copied into moto's DynamoDB (with their
    markers and the registry item), then verified there (links, markers, seals)."""
    import boto3

    from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
    from quotagov.governance.audit.review import verify

    db = boto3.client("dynamodb", region_name=REGION)
    db.create_table(
        TableName=TABLE,
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
    items = [table.items[("CHAINS", "q")]]
    for (pk, _sk), item in table.items.items():
        if pk in ("CHAIN#q", "DEDUP#q") and int(item["seq"]["N"]) <= records:
            items.append(item)
    for n in range(0, len(items), 25):
        db.batch_write_item(
            RequestItems={TABLE: [{"PutRequest": {"Item": i}} for i in items[n : n + 25]]}
        )
    store = DynamoDBChainStore(TABLE, db)
    cpu = time.process_time()
    [report] = [r for r in verify(store, chains=["q"], sealer=sealer)]
    cpu = time.process_time() - cpu
    assert report.intact and report.records == records, report
    return {"records": records, "cpu_ms_per_record": cpu / records * 1000}


def _side(src: Path, args: argparse.Namespace) -> dict[str, Any]:
    """:func:`measure` in a fresh interpreter importing ``quotagov`` from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = [
        sys.executable, str(Path(__file__).resolve()), "--measure",
        "--records", str(args.records), "--digest-every", str(args.digest_every),
        "--appends", str(args.appends), "--batch", str(args.batch),
        "--moto-records", str(args.moto_records),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measuring {src} failed:\n{done.stderr[-4000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _label(src: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or str(src)


def report(args: argparse.Namespace) -> None:
    """Measure each side and print them next to each other."""
    sides: list[tuple[str, dict[str, Any]]] = []
    if args.base:
        base = Path(args.base)
        sides.append((f"before ({_label(base)})", _side(base, args)))
    here = ROOT / "src"
    sides.append((f"after ({_label(here)})", _side(here, args)))
    width = 46
    print(
        f"audit chain: sealing over {args.appends} records (audit queue batches of "
        f"{args.batch} where the writer takes runs), verify of a {args.records:,}-record "
        f"chain with a digest every {args.digest_every}; CPU = user+sys of the process"
    )
    print(" " * width + "".join(f"{name:>24}" for name, _ in sides))

    def row(label: str, value: Any) -> None:
        cells = []
        for _name, figures in sides:
            try:
                cells.append(f"{value(figures):>24}")
            except KeyError:
                cells.append(f"{'-':>24}")
        print(f"{label:<{width}}" + "".join(cells))

    row("seal: KMS GenerateMac per record", lambda f: f"{f['seal']['GenerateMac']:.2f}")
    row("seal: KMS VerifyMac per record", lambda f: f"{f['seal']['VerifyMac']:.2f}")
    row(
        "seal: DynamoDB TransactWriteItems per record",
        lambda f: f"{f['seal']['TransactWriteItems']:.2f}",
    )
    row("seal: CPU ms per record", lambda f: f"{f['seal']['cpu_ms']:.2f}")
    row(
        "seal, 2 writers taking turns: KMS per record",
        lambda f: f"{f['alternating']['GenerateMac'] + f['alternating']['VerifyMac']:.2f}",
    )
    row("build: KMS GenerateMac", lambda f: f"{f['build']['GenerateMac']:,}")
    row("build: digests signed (KMS Sign)", lambda f: f"{f['build']['Sign']}")
    row(
        "build: VerifyMac by the digest function",
        lambda f: f"{f['build']['VerifyMac (digest function)']}",
    )
    row("build: CPU s", lambda f: f"{f['build']['cpu_s']:.1f}")
    row(f"verify {args.records:,}: CPU s", lambda f: f"{f['verify']['cpu_s']:.2f}")
    row("verify: records per CPU s", lambda f: f"{f['verify']['records_per_cpu_s']:,.0f}")
    row("verify: KMS VerifyMac calls", lambda f: f"{f['verify']['VerifyMac']}")
    row(
        "verify: S3 reads (GetObject + List)",
        lambda f: f"{f['verify']['S3 GetObject']} + {f['verify']['S3 List']}",
    )
    row(
        "verify: DynamoDB Query pages (+ Scan)",
        lambda f: f"{f['verify']['DynamoDB Query']} (+{f['verify']['DynamoDB Scan']})",
    )
    if args.moto_records:
        row(
            f"verify on moto DynamoDB ({args.moto_records}): CPU ms/record",
            lambda f: f"{f['moto']['cpu_ms_per_record']:.1f}",
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=10000, help="records of the chain verified")
    parser.add_argument("--digest-every", type=int, default=1000)
    parser.add_argument("--appends", type=int, default=1000, help="records of the sealing figures")
    parser.add_argument("--batch", type=int, default=10, help="audit queue batch size")
    parser.add_argument(
        "--base", help="another checkout's src directory (before), e.g. OLD_CHECKOUT/src"
    )
    parser.add_argument(
        "--moto-records", type=int, default=400, help="0: skip the moto DynamoDB part"
    )
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args)))
    else:
        report(args)


if __name__ == "__main__":
    main()
