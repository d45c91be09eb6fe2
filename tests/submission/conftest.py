"""Fixtures for the submission path: moto AWS, the jobs table, a manual clock."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository, jobs_table_definition
from quotagov.clock import ManualClock

REGION = "eu-west-1"
JOBS_TABLE = "quotagov-jobs"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto for every AWS call, with fake credentials in eu-west-1."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    assert os.environ["AWS_DEFAULT_REGION"] == REGION
    with mock_aws():
        yield


@pytest.fixture
def clock() -> ManualClock:
    """A virtual clock starting at 2026-12-01T00:00:00Z."""
    return ManualClock(1_796_083_200.0)


@pytest.fixture
def dynamodb(aws: None) -> Any:
    """A moto DynamoDB client."""
    return boto3.client("dynamodb", region_name=REGION)


@pytest.fixture
def jobs_repo(dynamodb: Any, clock: ManualClock) -> DynamoDBJobsRepository:
    """``JobsTable`` created from the shared definition, behind the repository."""
    dynamodb.create_table(**jobs_table_definition(JOBS_TABLE))
    return DynamoDBJobsRepository(JOBS_TABLE, clock, dynamodb)
