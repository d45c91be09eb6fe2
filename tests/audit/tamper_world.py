"""The audit as deployed, and an attacker of its table, for the tamper tests.

:class:`World`: moto DynamoDB, KMS (an HMAC_256 key and an ECC_NIST_P256 key) and S3
with Object Lock; the real adapters; the one writer (:class:`DecisionLog` over a
:class:`ChainWriter` with the KMS sealer), the digest function's publisher, and a
read-only verifier. Every KMS MAC call is counted (:class:`CountingSealer`).

:class:`Attacker`: ``dynamodb:PutItem`` and ``DeleteItem`` on the audit table with full
knowledge of the record format (the project's own :func:`record_hash`, the ``prevHash``
links, the dedup markers); no use of the KMS keys, no S3 deletion.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import boto3

from audit.support import TABLE, create_audit_table
from quotagov.adapters.dynamodb_audit import (
    DynamoDBChainStore,
    from_item,
    marker_key,
    record_key,
    to_item,
)
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.adapters.kms_audit import KmsDigestSigner, KmsRecordSealer, PublicKeyChecker
from quotagov.adapters.s3_digests import S3DigestStore
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import GENESIS_HASH, ChainWriter, record_hash
from quotagov.governance.audit.decisions import DecisionLog, QueuedEntry
from quotagov.governance.audit.digests import DigestPublisher
from quotagov.governance.audit.review import ChainReport, DigestSource, verify
from quotagov.governance.ports import ControllerDecision
from support.aws import QUEUE_ARN, REGION

CHAIN = "ml-gov-queue"
BUCKET = "quotagov-audit-digests-test"


class CountingSealer:
    """The KMS record sealer, counting ``GenerateMac`` (``seal``) and ``VerifyMac``
    (``check``) calls."""

    def __init__(self, inner: KmsRecordSealer) -> None:
        self.inner = inner
        self.key_id = inner.key_id
        self.generated = 0
        self.verified = 0

    def seal(self, message: bytes) -> str:
        self.generated += 1
        return self.inner.seal(message)

    def check(self, message: bytes, seal: str) -> bool:
        self.verified += 1
        return self.inner.check(message, seal)


def decision(n: int) -> ControllerDecision:
    """Decision ``n`` of the tests' chain: a refused submission."""
    return ControllerDecision(
        action="SubmissionRefused",
        actor="arn:aws:sts::111122223333:assumed-role/researcher/dave",
        job_queue=QUEUE_ARN,
        resource=f"sub-{n}",
        decision_id=f"refused:sub-{n}",
        details={"reasons": [f"reason {n}"]},
    )


class World:
    """The audit as deployed: writer, digest function, and a read-only verifier."""

    def __init__(self) -> None:
        self.dynamodb = boto3.client("dynamodb", region_name=REGION)
        create_audit_table(self.dynamodb)
        self.kms = boto3.client("kms", region_name=REGION)
        self.s3 = boto3.client("s3", region_name=REGION)
        self.seal_key = self.kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")[
            "KeyMetadata"
        ]["KeyId"]
        self.digest_key = self.kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")[
            "KeyMetadata"
        ]["KeyId"]
        self.s3.create_bucket(
            Bucket=BUCKET,
            CreateBucketConfiguration={"LocationConstraint": REGION},
            ObjectLockEnabledForBucket=True,
        )
        self.s3.put_object_lock_configuration(
            Bucket=BUCKET,
            ObjectLockConfiguration={
                "ObjectLockEnabled": "Enabled",
                "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 365}},
            },
        )
        self.clock = ManualClock(start=1777888800.0)
        self.chains = DynamoDBChainStore(TABLE, self.dynamodb)
        self.sealer = CountingSealer(KmsRecordSealer(self.seal_key, self.kms))
        self.writer = ChainWriter(self.chains, sealer=self.sealer)
        self.versions = DynamoDBVersionStore(TABLE, self.dynamodb)
        self.log = DecisionLog(self.writer, self.versions, self.clock)
        self.digests = S3DigestStore(BUCKET, self.s3)
        self.publisher = DigestPublisher(
            chains=self.chains,
            store=self.digests,
            signer=KmsDigestSigner(self.digest_key, self.kms),
            clock=self.clock,
            sealer=self.sealer,
        )
        self.checker = PublicKeyChecker.from_kms(self.digest_key, self.kms)

    def decide(self, n: int) -> None:
        """Decision ``n`` on its own (a run of one record, sealed)."""
        self.clock.advance(60)
        self.log.record_decision(decision(n))

    def decide_batch(self, numbers: Sequence[int]) -> list[Exception | None]:
        """Decisions ``numbers`` as one audit queue batch (one sealed run)."""
        self.clock.advance(60)
        return self.log.record_decisions([QueuedEntry(decision(n)) for n in numbers])

    def report(self) -> ChainReport:
        reports = verify(
            self.chains, digests=DigestSource(self.digests, self.checker), sealer=self.sealer
        )
        [report] = [r for r in reports if r.chain == CHAIN]
        return report

    def digest_keys(self) -> list[str]:
        listed = self.s3.list_object_versions(Bucket=BUCKET).get("Versions", [])
        return sorted(f"{v['Key']}@{v['VersionId']}" for v in listed)


class Attacker:
    """PutItem/DeleteItem on the audit table with full knowledge of the format; no keys."""

    def __init__(self, dynamodb: Any) -> None:
        self.db = dynamodb

    def record(self, seq: int) -> dict[str, Any]:
        item = self.db.get_item(TableName=TABLE, Key=to_item(record_key(CHAIN, seq)))["Item"]
        return {k: v for k, v in from_item(item).items() if k not in ("pk", "sk")}

    def put_record(self, record: dict[str, Any]) -> None:
        seq = int(record["seq"])
        self.db.put_item(TableName=TABLE, Item=to_item({**record_key(CHAIN, seq), **record}))
        marker = {"seq": seq, "chain": CHAIN, "hash": record["hash"]}
        self.db.put_item(
            TableName=TABLE,
            Item=to_item({**marker_key(CHAIN, str(record["dedupKey"])), **marker}),
        )

    def delete_record(self, seq: int) -> None:
        record = self.record(seq)
        self.db.delete_item(TableName=TABLE, Key=to_item(record_key(CHAIN, seq)))
        self.db.delete_item(
            TableName=TABLE, Key=to_item(marker_key(CHAIN, str(record["dedupKey"])))
        )

    def rehash_from(self, seq: int, last: int, first: dict[str, Any] | None = None) -> None:
        """Rewrite records ``seq..last``: ``first`` replaces record ``seq`` (else it is
        kept), each one is re-linked and re-hashed; old seals are kept (the best an
        attacker without the key can do)."""
        prev = self.record(seq - 1)["hash"] if seq > 1 else GENESIS_HASH
        for n in range(seq, last + 1):
            record = first if (n == seq and first is not None) else self.record(n)
            record = {**record, "seq": n, "prevHash": prev}
            record["hash"] = record_hash(record)
            self.put_record(record)
            prev = record["hash"]
