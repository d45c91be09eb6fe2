"""The tamper-evident audit, written as the attacker: every tamper below is caught at the
right record (or digest), with a clear reason.

The attacker holds ``dynamodb:PutItem`` and ``dynamodb:DeleteItem`` on the audit table
(what every function role had before the audit got one writer) and knows the record
format exactly:
they recompute SHA-256 hashes with the project's own :func:`record_hash`, rewrite the
``prevHash`` links and the dedup markers. They cannot use the KMS keys (no
``GenerateMac``, no ``Sign``: the key policies name the writer and the digest function
only), so the best they can do with a seal is copy one from another record; and they
cannot delete or overwrite a digest (Object Lock in COMPLIANCE mode, bucket policy).

Setting (:mod:`audit.tamper_world`): moto DynamoDB, KMS (an HMAC_256 key and an
ECC_NIST_P256 key) and S3 with Object Lock; the real adapters; a 9-record chain written
by the one writer, one decision at a time (nine runs of one record, each sealed), and
a signed digest of it. The rules for runs of several records sealed once are attacked
in ``test_audit_run_seals.py``.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from moto import mock_aws

from audit.support import TABLE
from audit.tamper_world import BUCKET, CHAIN, Attacker, World
from quotagov.adapters.dynamodb_audit import to_item
from quotagov.adapters.s3_digests import DIGEST_PREFIX
from quotagov.governance.audit.chain import record_hash
from quotagov.governance.audit.digests import records_sha256, signed_message
from support.aws import REGION


@pytest.fixture
def world(aws_credentials: None) -> Iterator[World]:
    with mock_aws():
        built = World()
        for n in range(1, 10):
            built.decide(n)
        [outcome] = built.publisher.publish()
        assert (outcome.status, outcome.head_seq) == ("published", 9)
        yield built


@pytest.fixture
def attacker(world: World) -> Attacker:
    return Attacker(world.dynamodb)


def test_the_untouched_chain_verifies_with_its_digest_and_seals(world: World) -> None:
    verified_before = world.sealer.verified
    report = world.report()

    assert report.intact and report.first_break is None
    assert (report.records, report.digests, report.digested_to) == (9, 1, 9)
    # The last seal holds, and the writer sealed each record only on top of a head it
    # had proven: one VerifyMac proves all nine.
    assert (report.seal_checks, report.sealed_runs) == (1, 9)
    assert world.sealer.verified - verified_before == 1
    stored = list(world.chains.records(CHAIN))
    assert all(isinstance(r.get("seal"), str) and r["seal"].startswith("v2:") for r in stored)
    # Nine runs of one record, one GenerateMac each; the writer checked no head it had
    # not sealed itself.
    assert world.sealer.generated == 9


def test_record_4_of_9_changed_and_records_4_to_9_rehashed(
    world: World, attacker: Attacker
) -> None:
    forged = {**attacker.record(4), "actor": {"principalArn": "someone-else"}}
    attacker.rehash_from(4, 9, first=forged)

    report = world.report()

    assert report.first_break is not None and report.first_break.seq == 4
    assert f"differs from digest {CHAIN}/000000000009-" in report.first_break.reason
    assert "changed after it was digested" in report.first_break.reason


def test_last_record_changed_and_rehashed(world: World, attacker: Attacker) -> None:
    forged = {**attacker.record(9), "details": {"reasons": ["nothing to see"]}}
    attacker.rehash_from(9, 9, first=forged)

    broken = world.report().first_break

    assert broken is not None and broken.seq == 9
    assert "changed after it was digested" in broken.reason


def test_forged_record_inserted_with_everything_after_it_rehashed(
    world: World, attacker: Attacker
) -> None:
    originals = [attacker.record(n) for n in range(5, 10)]
    forged = {
        **attacker.record(5),
        "decisionId": "forged",
        "dedupKey": "decision:forged",
        "resource": {"type": "decision-subject", "name": "sub-forged"},
    }
    attacker.put_record({**forged, "seq": 5, "hash": "x"})
    for offset, original in enumerate(originals, start=6):
        attacker.put_record({**original, "seq": offset})
    attacker.rehash_from(5, 10)

    broken = world.report().first_break

    assert broken is not None and broken.seq == 5
    assert "changed after it was digested" in broken.reason


def test_forged_sealed_append_after_the_digest(world: World, attacker: Attacker) -> None:
    """Record 10 with a correct hash and link, and the seal of record 9 copied onto it."""
    last = attacker.record(9)
    forged = {
        **last,
        "seq": 10,
        "prevHash": last["hash"],
        "decisionId": "forged",
        "dedupKey": "decision:forged",
    }
    forged["hash"] = record_hash(forged)
    forged["seal"] = last["seal"]
    attacker.put_record(forged)

    report = world.report()

    assert report.first_break is not None and report.first_break.seq == 10
    assert "seal does not verify with the audit key" in report.first_break.reason


def test_forged_append_without_a_seal(world: World, attacker: Attacker) -> None:
    last = attacker.record(9)
    forged = {
        **{k: v for k, v in last.items() if k != "seal"},
        "seq": 10,
        "prevHash": last["hash"],
        "dedupKey": "decision:forged",
    }
    forged["hash"] = record_hash(forged)
    attacker.put_record(forged)

    broken = world.report().first_break

    assert broken is not None and broken.seq == 10
    assert "has no seal" in broken.reason


def test_tail_truncated_with_its_marker(world: World, attacker: Attacker) -> None:
    attacker.delete_record(9)

    broken = world.report().first_break

    assert broken is not None and broken.seq == 9
    assert "covers it" in broken.reason and "no longer holds it (deleted)" in broken.reason


def test_whole_chain_wiped_with_its_registry_entry(world: World, attacker: Attacker) -> None:
    for seq in range(9, 0, -1):
        attacker.delete_record(seq)
    attacker.db.delete_item(TableName=TABLE, Key=to_item({"pk": "CHAINS", "sk": CHAIN}))
    assert list(world.chains.records(CHAIN)) == [] and world.chains.chains() == []

    report = world.report()  # the chain is found from its digests

    assert report.first_break is not None and report.first_break.seq == 1
    assert "no longer holds it (deleted)" in report.first_break.reason


def test_a_digest_cannot_be_deleted_and_a_forged_one_does_not_verify(world: World) -> None:
    before = world.digest_keys()
    [version] = world.s3.list_object_versions(Bucket=BUCKET)["Versions"]
    with pytest.raises(ClientError) as refused:
        world.s3.delete_object(Bucket=BUCKET, Key=version["Key"], VersionId=version["VersionId"])
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    assert world.digest_keys() == before

    # A digest signed with the attacker's own key (even if they could put objects).
    own = ec.generate_private_key(ec.SECP256R1())
    header = {
        "version": 1,
        "chain": CHAIN,
        "firstSeq": 10,
        "headSeq": 9,
        "headHash": "0" * 64,
        "recordsSha256": records_sha256([]),
        "previousDigest": version["Key"][len(DIGEST_PREFIX) :],
        "previousSignature": json.loads(
            world.s3.get_object(Bucket=BUCKET, Key=version["Key"])["Body"].read()
        )["signature"],
        "time": "2026-05-04T11:00:00Z",
        "keyId": "attacker",
        "signingAlgorithm": "ECDSA_SHA_256",
    }
    signature = base64.b64encode(
        own.sign(signed_message(header), ec.ECDSA(hashes.SHA256()))
    ).decode()
    body = json.dumps({"header": header, "records": [], "signature": signature})
    world.s3.put_object(
        Bucket=BUCKET, Key=f"{DIGEST_PREFIX}{CHAIN}/000000000009-000000000010-z.json", Body=body
    )

    broken = world.report().first_break

    assert broken is not None and broken.seq == 10
    assert "signature does not verify with the digest public key (forged)" in broken.reason


def test_an_overwritten_digest_is_named(world: World) -> None:
    [version] = world.s3.list_object_versions(Bucket=BUCKET)["Versions"]
    world.s3.put_object(Bucket=BUCKET, Key=version["Key"], Body=b"{}")

    broken = world.report().first_break

    assert broken is not None and broken.seq == 1
    assert "has 2 versions (overwritten after it was written)" in broken.reason


def test_the_digest_function_refuses_to_sign_a_tampered_window(
    world: World, attacker: Attacker
) -> None:
    """Records appended after the last digest and then re-hashed are never blessed."""
    world.decide(10)
    world.decide(11)
    forged = {**attacker.record(10), "details": {"reasons": ["rewritten"]}}
    attacker.rehash_from(10, 11, first=forged)
    before = world.digest_keys()

    [outcome] = world.publisher.publish()

    assert outcome.status == "refused" and outcome.head_seq == 9
    assert "record 10" in outcome.reason and "seal does not verify" in outcome.reason
    assert world.digest_keys() == before  # nothing signed, nothing written


def test_the_digest_function_refuses_a_chain_shorter_than_its_digest(
    world: World, attacker: Attacker
) -> None:
    attacker.delete_record(9)
    before = world.digest_keys()

    [outcome] = world.publisher.publish(force=True)

    assert outcome.status == "refused"
    assert "ends at record 8 but its last digest covers record 9" in outcome.reason
    assert world.digest_keys() == before


def test_digests_chain_to_each_other_and_cover_only_new_records(world: World) -> None:
    world.decide(10)
    [second] = world.publisher.publish()
    [unchanged] = world.publisher.publish()
    [forced] = world.publisher.publish(force=True)

    assert (second.status, second.head_seq, unchanged.status) == ("published", 10, "unchanged")
    assert forced.status == "published" and forced.head_seq == 10
    stored = world.digests.digests(CHAIN)
    documents = [json.loads(d.body) for d in stored]
    assert [(d["header"]["firstSeq"], d["header"]["headSeq"]) for d in documents] == [
        (1, 9),
        (10, 10),
        (11, 10),
    ]
    assert documents[1]["header"]["previousSignature"] == documents[0]["signature"]
    assert documents[2]["header"]["previousDigest"] == stored[1].key
    assert documents[1]["records"] == [world.chains.head(CHAIN).hash]  # type: ignore[union-attr]
    assert world.report().intact


def test_audit_verify_cli_with_read_only_inputs_names_the_first_differing_record(
    world: World,
    attacker: Attacker,
    tmp_path: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What an auditor in another account runs: the table, the bucket, the exported
    public key (no KMS call for digests) and VerifyMac on the seal key."""
    from quotagov import composition
    from quotagov_tools.cli import main

    pem = tmp_path / "digest-public-key.pem"
    pem.write_bytes(world.checker.pem())
    for name in ("AUDIT_TABLE", "AUDIT_DIGEST_BUCKET", "AUDIT_DIGEST_KEY", "AUDIT_SEAL_KEY"):
        monkeypatch.delenv(name, raising=False)
    argv = [
        "audit", "verify", "--table", TABLE, "--region", REGION,
        "--digest-bucket", BUCKET, "--public-key", str(pem), "--seal-key", world.seal_key,
    ]  # fmt: skip
    composition.reset()
    try:
        assert main(argv) == 0
        intact = capsys.readouterr()
        assert intact.err == ""
        assert intact.out.startswith(
            f"chain {CHAIN}: 9 records, intact; 1 signed digests verified, records 1-9 as "
            "digested; seals hold ("
        )

        forged = {**attacker.record(4), "action": "SubmissionAccepted"}
        attacker.rehash_from(4, 9, first=forged)
        composition.reset()
        assert main(argv) == 1
        out = capsys.readouterr().out
        assert out.startswith(f"BROKEN chain {CHAIN}: record 4: differs from digest {CHAIN}/")
    finally:
        composition.reset()


def test_audit_verify_options_do_not_outlive_the_command(
    world: World, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--table``, ``--region``, ``--digest-bucket``, ``--public-key`` and
    ``--seal-key`` apply to the command only. Left in the environment, they were
    inherited by whatever the process ran next: a pytest worker's ``quotagov demo``
    subprocess checked its digests with this test's public key (the flaky demo check,
    ``tests/local/test_local_environment.py``)."""
    from quotagov import composition
    from quotagov_tools.cli import main

    pem = tmp_path / "digest-public-key.pem"
    pem.write_bytes(world.checker.pem())
    for name in ("AUDIT_TABLE", "AUDIT_DIGEST_BUCKET", "AUDIT_DIGEST_PUBLIC_KEY", "AUDIT_SEAL_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_REGION", "us-east-2")
    before = dict(os.environ)
    argv = [
        "audit", "verify", "--table", TABLE, "--region", REGION,
        "--digest-bucket", BUCKET, "--public-key", str(pem), "--seal-key", world.seal_key,
    ]  # fmt: skip
    composition.reset()
    try:
        assert main(argv) == 0
        after = dict(os.environ)
    finally:
        composition.reset()
        os.environ.clear()  # never leave this test's settings to the next test
        os.environ.update(before)

    assert {k: v for k, v in after.items() if before.get(k) != v} == {}
    assert set(before) - set(after) == set()
