"""Policy loading: SSM through Powertools Parameters (cached), or POLICY_FILE locally."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from quotagov.policy import PolicyError
from quotagov.policy.loading import FilePolicySource, SsmPolicySource, policy_source
from quotagov.settings import Settings
from quotagov.wiring import Services
from support.policies import example_policy_text

PARAMETER = "/quotagov/policy"


@pytest.fixture
def ssm(aws_credentials: None) -> Iterator[object]:
    with mock_aws():
        client = boto3.client("ssm", region_name="eu-west-1")
        client.put_parameter(
            Name=PARAMETER, Value=example_policy_text(), Type="String", Tier="Advanced"
        )
        yield client


def test_ssm_policy_is_cached_until_max_age_or_force_fetch(ssm: object) -> None:
    source = SsmPolicySource(PARAMETER, max_age=300)
    first = source.current()
    assert first.level("standard").schedulingPriority == 10
    changed = example_policy_text().replace("schedulingPriority: 10,", "schedulingPriority: 20,")
    boto3.client("ssm", region_name="eu-west-1").put_parameter(
        Name=PARAMETER, Value=changed, Type="String", Overwrite=True
    )
    assert source.current() is first  # cached value, parsed once
    assert source.current(force_fetch=True).level("standard").schedulingPriority == 20


def test_invalid_ssm_policy_names_the_parameter(ssm: object) -> None:
    boto3.client("ssm", region_name="eu-west-1").put_parameter(
        Name=PARAMETER, Value="version: 1\njobQueue: q\n", Type="String", Overwrite=True
    )
    with pytest.raises(PolicyError) as caught:
        SsmPolicySource(PARAMETER).current()
    assert caught.value.faults[0].startswith(f"ssm:{PARAMETER}: quotaShares: Field required")


def test_wiring_policy_follows_settings(ssm: object, tmp_path: Path) -> None:
    svc = Services(Settings(policy_parameter=PARAMETER))
    assert svc.policy.jobQueue.endswith("job-queue/ml-gov-queue")
    assert svc.policy is svc.policy  # same parsed object while unchanged

    local = tmp_path / "policy.yaml"
    local.write_text(example_policy_text().replace("ml-gov-queue", "local-queue"))
    svc = Services(Settings(policy_parameter=PARAMETER, policy_file=str(local)))
    assert svc.policy.jobQueue.endswith("job-queue/local-queue")


def test_file_source_sees_edits_and_reports_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(example_policy_text())
    source = FilePolicySource(path)
    assert source.current().escalationExpirySeconds == 3600
    path.write_text(
        example_policy_text().replace(
            "escalationExpirySeconds: 3600", "escalationExpirySeconds: 600"
        )
    )
    assert source.current().escalationExpirySeconds == 600
    os.remove(path)
    with pytest.raises(PolicyError, match="cannot read the policy file"):
        source.current()


def test_no_policy_setting_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="POLICY_PARAMETER"):
        policy_source("", "")


def test_the_loaded_version_is_stamped_and_announced(
    ssm: object, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each function says which policy it runs: the SSM version on its log lines and
    one ``PolicyLoaded`` metric per version."""
    import hashlib
    import json

    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "JobsApiFunction")
    svc = Services(Settings(policy_parameter=PARAMETER))
    _ = svc.policy
    source = svc.policy_source
    assert isinstance(source, SsmPolicySource)
    digest = hashlib.sha256(example_policy_text().encode()).hexdigest()[:12]
    assert (source.stamp.version, source.stamp.digest) == (1, digest)  # type: ignore[union-attr]
    boto3.client("ssm", region_name="eu-west-1").put_parameter(
        Name=PARAMETER,
        Value=example_policy_text().replace(
            "escalationExpirySeconds: 3600", "escalationExpirySeconds: 1800"
        ),
        Type="String",
        Overwrite=True,
    )
    source.current(force_fetch=True)
    _ = svc.policy  # cached value (version 2 was fetched above)
    assert source.stamp.version == 2  # type: ignore[union-attr]
    _ = svc.policy  # unchanged: not announced again
    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "_aws" in line]
    loaded = [b["policyVersion"] for b in blobs if "PolicyLoaded" in b]
    assert loaded == ["1", "2"]
    from aws_lambda_powertools import Logger

    keys = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME") or "quotagov")
    assert keys.get_current_keys()["policyVersion"] == 2
    keys.remove_keys(["policyVersion", "policyDigest"])
