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
