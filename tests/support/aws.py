"""The test account, region and job queue, and the environment that keeps boto3 on fakes."""

from __future__ import annotations

import pytest

ACCOUNT = "111122223333"
REGION = "eu-west-1"
QUEUE_NAME = "ml-gov-queue"
QUEUE_ARN = f"arn:aws:batch:{REGION}:{ACCOUNT}:job-queue/{QUEUE_NAME}"
#: The instance type of the example policy and of most test jobs.
GPU = "ml.g5.xlarge"

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}


def fake_aws_env(monkeypatch: pytest.MonkeyPatch, **variables: str) -> None:
    """Fake credentials in :data:`REGION` and no ``AWS_PROFILE``, so nothing can reach a
    real account; ``variables`` are set too (e.g. :func:`powertools_env`)."""
    for name, value in {**FAKE_CREDENTIALS, "AWS_DEFAULT_REGION": REGION, **variables}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def powertools_env(service: str, metrics_namespace: str | None = None) -> dict[str, str]:
    """The Powertools settings of a handler test: the service (and metrics namespace)
    named, X-Ray tracing off."""
    variables = {"POWERTOOLS_SERVICE_NAME": service, "POWERTOOLS_TRACE_DISABLED": "true"}
    if metrics_namespace is not None:
        variables["POWERTOOLS_METRICS_NAMESPACE"] = metrics_namespace
    return variables


def no_aws_credentials(monkeypatch: pytest.MonkeyPatch, *, region: str | None = None) -> None:
    """A machine with no AWS credentials (and no Region unless ``region``): botocore's
    provider chain finds nothing and never asks the instance metadata service, so a call
    fails with ``NoCredentialsError`` before anything is sent (a new user without
    ``aws configure``). A Region the command under test sets in ``os.environ`` is
    undone after the test."""
    for name in (
        *FAKE_CREDENTIALS,
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.setenv(name, "")  # recorded, so teardown removes what the test sets
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    if region is not None:
        monkeypatch.setenv("AWS_DEFAULT_REGION", region)
