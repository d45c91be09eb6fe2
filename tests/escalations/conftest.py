"""Shared helpers of the escalation tests: Slack request signing and DynamoDB tables."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from quotagov.adapters.dynamodb_escalations import EscalationsTable, create_escalations_table

REGION = "eu-west-1"


def slack_signature(secret: str, timestamp: int | str, body: bytes) -> str:
    """``X-Slack-Signature`` exactly as Slack computes it (reference §7.1)."""
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and region, so nothing can reach a real account."""
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "quotagov-tests")


@pytest.fixture
def escalations_table(aws_env: None) -> Iterator[EscalationsTable]:
    """A moto-backed ``EscalationsTable``."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        create_escalations_table(client, "escalations")
        yield EscalationsTable(client, "escalations")
