"""The local stack uses its own resources whatever quotagov settings the calling
process holds.

Root cause of the flaky demo check "audit verify: every hash chain intact" (it failed
under ``make test``'s parallel workers, with "signature does not verify with the digest
public key (forged)"): a test ran ``quotagov audit verify --public-key <its own key>``
in-process, the command left ``AUDIT_DIGEST_PUBLIC_KEY`` in the worker's environment,
and when the same worker later ran ``quotagov demo`` as a subprocess, the demo's runtime
inherited it and checked its digests with that other key. Which worker ran which test
first depended on timing, hence "under load". Both halves are fixed: commands undo their
options (``tests/audit/test_audit_tamper.py``), and the runtime blanks every setting
its template does not define (here).
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

pytestmark = pytest.mark.slow  # starts the whole local stack

GRACE = "arn:aws:sts::111122223333:assumed-role/ml-admins/grace"


def test_inherited_audit_and_policy_settings_do_not_reach_the_local_stack(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    other_key = ec.generate_private_key(ec.SECP256R1()).public_key()
    pem = tmp_path / "another-stacks-digest-key.pem"
    pem.write_bytes(
        other_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    monkeypatch.setenv("AUDIT_DIGEST_PUBLIC_KEY", str(pem))
    monkeypatch.setenv("POLICY_FILE", str(tmp_path / "no-such-policy.yaml"))
    with contextlib.redirect_stdout(io.StringIO()):
        runtime = LocalRuntime(RuntimeOptions()).start()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runtime.admin_batch(
                GRACE,
                "UpdateQuotaShare",
                {
                    "quotaShareArn": f"{runtime.job_queue}/quota-share/medium",
                    "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
                },
            )
            runtime.advance(360)  # past the audit's settling window: the change is written
            published = runtime.publish_digests(force=True)["digests"]
        [report] = runtime.audit_reports()
    finally:
        runtime.stop()

    assert [d["status"] for d in published] == ["published"]
    assert report.first_break is None and report.intact
    assert (report.records, report.digests, report.digested_to) == (1, 1, 1)
    # The caller's environment is as it was once the runtime stops.
    assert os.environ["AUDIT_DIGEST_PUBLIC_KEY"] == str(pem)
