"""Fixtures for the submission path: moto DynamoDB/SQS/SSM, the policy, a manual clock."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from moto import mock_aws

from quotagov import composition
from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository, jobs_table_definition
from quotagov.clock import ManualClock
from quotagov.governance.ports import NullAuditSink
from quotagov.settings import Settings
from support.aws import QUEUE_ARN, REGION, fake_aws_env, powertools_env
from support.compose import LocalMac, RecordingChat, wire
from support.events import load_event
from support.lambda_context import LambdaContext as LambdaContext  # tests import it here
from support.policies import example_policy, example_policy_text, simulated_batch

JOBS_TABLE = "quotagov-jobs"
IDEMPOTENCY_TABLE = "quotagov-idempotency"
POLICY_PARAMETER = "/quotagov/policy"
#: Visibility timeout and redrive of the submission queue, as the template sets them.
VISIBILITY_TIMEOUT = 360
MAX_RECEIVE_COUNT = 5


def policy_text() -> str:
    """The example walkthrough policy."""
    return example_policy_text()


def training_payload(name: str = "resnet-sweep-017", **changes: Any) -> dict[str, Any]:
    """A CreateTrainingJob request on one ml.g5.xlarge, with checkpoints, naming the
    shared ``sm-exec`` role (bound to every class of the example policy)."""
    payload = copy.deepcopy(load_event("jobs_api-submit"))
    body: dict[str, Any] = json.loads(payload["body"])["serviceRequestPayload"]
    body["TrainingJobName"] = name
    # the shared execution role the example policy binds to every workload class
    body["RoleArn"] = "arn:aws:iam::111122223333:role/sm-exec"
    body["CheckpointConfig"]["S3Uri"] = (
        f"s3://example-ml-artifacts-euw1/research/checkpoints/{name}/"
    )
    body.update(changes)
    return body


def submission(**changes: Any) -> dict[str, Any]:
    """A valid submission body for team research (alice, bob); ``changes`` override keys."""
    body: dict[str, Any] = {
        "team": "research",
        "workloadClass": "exploratory",
        "priorityLevel": "standard",
        "checkpointIntervalSeconds": 600,
        "serviceRequestPayload": training_payload(),
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not None}


@dataclass
class Stack:
    """The moto resources of one test and the services wired to them."""

    clock: ManualClock
    settings: Settings
    dynamodb: Any
    sqs: Any
    ssm: Any
    queue_url: str
    dlq_url: str
    audit: NullAuditSink
    jobs: DynamoDBJobsRepository
    extra: dict[str, Any] = field(default_factory=dict)

    def put_policy(self, text: str) -> None:
        """Replace the policy parameter and drop cached copies (as after max_age)."""
        self.ssm.put_parameter(Name=POLICY_PARAMETER, Value=text, Type="String", Overwrite=True)
        for built in composition.built():
            built.policy_source.current(force_fetch=True)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto for every AWS call, fake credentials in eu-west-1, Powertools settings."""
    fake_aws_env(monkeypatch, **powertools_env("quotagov", metrics_namespace="quotagov"))
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


@pytest.fixture
def stack(jobs_repo: DynamoDBJobsRepository, dynamodb: Any, clock: ManualClock) -> Iterator[Stack]:
    """JobsTable, IdempotencyTable, the submission queue with its DLQ, the policy in SSM."""
    dynamodb.create_table(
        TableName=IDEMPOTENCY_TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )
    sqs = boto3.client("sqs", region_name=REGION)
    dlq_url = sqs.create_queue(QueueName="quotagov-submissions-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue_url = sqs.create_queue(
        QueueName="quotagov-submissions",
        Attributes={
            "VisibilityTimeout": str(VISIBILITY_TIMEOUT),
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(MAX_RECEIVE_COUNT)}
            ),
        },
    )["QueueUrl"]
    notices_url = sqs.create_queue(QueueName="quotagov-owner-notices")["QueueUrl"]
    ssm = boto3.client("ssm", region_name=REGION)
    ssm.put_parameter(Name=POLICY_PARAMETER, Value=policy_text(), Type="String", Tier="Advanced")
    settings = Settings(
        job_queue=QUEUE_ARN,
        jobs_table=JOBS_TABLE,
        idempotency_table=IDEMPOTENCY_TABLE,
        submission_queue_url=queue_url,
        owner_notice_queue_url=notices_url,
        policy_parameter=POLICY_PARAMETER,
    )
    audit = NullAuditSink()
    wire(settings, clock=clock, audit=audit, chat=RecordingChat(), message_mac=LocalMac())
    yield Stack(clock, settings, dynamodb, sqs, ssm, queue_url, dlq_url, audit, jobs_repo)
    composition.reset()


@pytest.fixture
def batch(stack: Stack) -> Any:
    """The simulated Batch with the policy's three shares (3 x ml.g5.xlarge), on the clock."""
    sim = simulated_batch(example_policy(), stack.clock)
    composition.provide(batch=sim)
    return sim
