"""Fixtures of the audit tests: moto DynamoDB with the audit table, the use cases over it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from audit.support import (
    CONTROLLER_ROLE,
    PLATFORM_CHANNEL,
    POLICY_DOCUMENT,
    TABLE,
    create_audit_table,
    simulated_batch,
)
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.adapters.slack import SlackChatNotifier
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import ChainWriter
from quotagov.governance.audit.decisions import DecisionLog
from quotagov.governance.audit.trail import AuditTrail
from quotagov.policy import Policy, parse_policy
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.local.fake_slack import FakeSlack
from support.aws import REGION
from support.slack import chat_for


@pytest.fixture(autouse=True)
def _aws_credentials(aws_credentials: None) -> None:
    """Every audit test runs on fake credentials (the root ``aws_credentials``)."""


@pytest.fixture
def dynamodb() -> Iterator[Any]:
    """A boto3 DynamoDB client on moto (in process) with the audit table created."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        create_audit_table(client)
        yield client


@pytest.fixture
def policy() -> Policy:
    return parse_policy(POLICY_DOCUMENT)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=1777888800.0)  # 2026-05-04T10:00:00Z


@pytest.fixture
def batch(policy: Policy, clock: ManualClock) -> SimulatedBatch:
    return simulated_batch(policy, clock)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    """The loopback fake Slack Web API; the platform channel exists."""
    with FakeSlack(token="xoxb-audit-test", channels=[PLATFORM_CHANNEL]) as fake:
        yield fake


@pytest.fixture
def chat(slack: FakeSlack) -> SlackChatNotifier:
    """The real Slack adapter (slack_sdk WebClient) talking to the fake Slack."""
    return chat_for(slack)


@pytest.fixture
def chains(dynamodb: Any) -> DynamoDBChainStore:
    return DynamoDBChainStore(TABLE, dynamodb)


@pytest.fixture
def versions(dynamodb: Any) -> DynamoDBVersionStore:
    return DynamoDBVersionStore(TABLE, dynamodb)


@pytest.fixture
def decisions(
    chains: DynamoDBChainStore, versions: DynamoDBVersionStore, clock: ManualClock
) -> DecisionLog:
    return DecisionLog(ChainWriter(chains), versions, clock)


@pytest.fixture
def trail(
    chains: DynamoDBChainStore,
    versions: DynamoDBVersionStore,
    batch: SimulatedBatch,
    policy: Policy,
    clock: ManualClock,
    chat: SlackChatNotifier,
) -> AuditTrail:
    return AuditTrail(
        chains=chains,
        versions=versions,
        batch=batch,
        policy=policy,
        clock=clock,
        controller_principals=[CONTROLLER_ROLE],
        chat=chat,
        platform_channel=PLATFORM_CHANNEL,
    )
