"""Shared fixtures of the escalation tests: AWS environment, DynamoDB tables, the world."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from quotagov.adapters.dynamodb_escalations import EscalationsTable, create_escalations_table
from support.aws import REGION, fake_aws_env, powertools_env
from support.moto_server import moto_server as loopback_moto_server


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and region, so nothing can reach a real account."""
    fake_aws_env(monkeypatch, **powertools_env("quotagov-tests"))


@pytest.fixture
def escalations_table(aws_env: None) -> Iterator[EscalationsTable]:
    """A moto-backed ``EscalationsTable``."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        create_escalations_table(client, "escalations")
        yield EscalationsTable(client, "escalations")


@pytest.fixture(scope="module")
def dynamodb_endpoint() -> Iterator[str]:
    """One loopback moto server per test module; every test makes its own tables."""
    with pytest.MonkeyPatch.context() as env:
        fake_aws_env(env)
        with loopback_moto_server() as url:
            yield url


@pytest.fixture
def moto_server(aws_env: None) -> Iterator[str]:
    """A loopback moto server of the test's own."""
    with loopback_moto_server() as url:
        yield url


@pytest.fixture
def world(dynamodb_endpoint: str, aws_env: None) -> Iterator[Any]:
    """The walkthrough at t=900 (see ``world.py``), wired into ``quotagov.wiring``."""
    from quotagov import composition

    from .world import build_world, walkthrough_policy

    built = build_world(walkthrough_policy(), dynamodb_endpoint)
    try:
        yield built
    finally:
        built.slack.stop()
        composition.reset()
