"""The KMS MAC adapter asks KMS once per valid (message, MAC) pair, and every time for a
MAC that does not verify: a forger gains nothing from the memory (moto KMS)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from quotagov.adapters import kms_audit
from quotagov.adapters.kms_audit import KmsRecordSealer
from support.aws import REGION


@pytest.fixture
def kms(aws_credentials: None) -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("kms", region_name=REGION)


def counting(client: Any) -> list[str]:
    """The KMS operations ``client`` sends, in order."""
    sent: list[str] = []
    client.meta.events.register("before-call.kms", lambda model, **_: sent.append(model.name))
    return sent


def sealer_on(kms: Any) -> KmsRecordSealer:
    key = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]
    return KmsRecordSealer(key["KeyId"], kms)


def test_a_valid_pair_is_verified_by_kms_once_and_a_forged_mac_every_time(kms: Any) -> None:
    sealer = sealer_on(kms)
    sent = counting(kms)
    mac = sealer.seal(b"queued-submission sub-1")
    assert sealer.check(b"queued-submission sub-1", mac)
    assert sealer.check(b"queued-submission sub-1", mac)  # remembered
    assert sent == ["GenerateMac", "VerifyMac"]

    forged = base64.b64encode(b"\x00" * 32).decode()
    assert not sealer.check(b"queued-submission sub-1", forged)
    assert not sealer.check(b"queued-submission sub-1", forged)
    # the valid MAC on other bytes (an edited record) is no remembered pair either
    assert not sealer.check(b"queued-submission sub-2", mac)
    assert sent == ["GenerateMac", "VerifyMac", "VerifyMac", "VerifyMac", "VerifyMac"]


def test_the_memory_keeps_the_most_recent_pairs_only(
    kms: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kms_audit, "VERIFIED_MEMORY", 3)
    sealer = sealer_on(kms)
    macs = [sealer.seal(f"m{i}".encode()) for i in range(4)]
    for i, mac in enumerate(macs):
        assert sealer.check(f"m{i}".encode(), mac)
    sent = counting(kms)
    assert sealer.check(b"m3", macs[-1])  # still held
    assert sent == []
    assert sealer.check(b"m0", macs[0])  # the oldest was let go: KMS is asked again
    assert sent == ["VerifyMac"]
