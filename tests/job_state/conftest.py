"""Fixtures: a moto JobsTable, the example policy, a manual clock, wiring overrides."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

import boto3
import pytest
from moto import mock_aws

from quotagov import wiring
from quotagov.adapters.dynamodb_job_state import DynamoDBJobStateStore
from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository, jobs_table_definition
from quotagov.clock import ManualClock
from quotagov.governance.dispositions import DispositionDeps
from quotagov.governance.job_state_updates import JobStateDeps
from quotagov.governance.ports import NullAuditSink
from quotagov.governance.records import JobRecord, SubmissionState
from quotagov.policy import Policy, load_policy
from quotagov.settings import Settings

from .envelopes import QUEUE_ARN

TABLE = "JobsTable"
START = 1_777_885_000.0  # epoch seconds of the scenario's start


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "quotagov")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "job-state")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")


@pytest.fixture
def policy() -> Policy:
    text = resources.files("quotagov.examples").joinpath("policy.yaml").read_text()
    return load_policy(text)


@dataclass
class World:
    """Everything a job-state test touches."""

    clock: ManualClock
    policy: Policy
    jobs: DynamoDBJobsRepository
    store: DynamoDBJobStateStore
    audit: NullAuditSink
    batch: Any
    chat: Any = None

    def deps(self) -> JobStateDeps:
        return JobStateDeps(store=self.store, dispositions=self.disposition_deps())

    def disposition_deps(self) -> DispositionDeps:
        return DispositionDeps(
            store=self.store,
            batch=self.batch,
            policy=self.policy,
            audit=self.audit,
            clock=self.clock,
            chat=self.chat,
            job_queue=QUEUE_ARN,
            platform_channel="C0PLATFORM",
        )

    def record(
        self,
        submission_id: str,
        *,
        batch_job_id: str | None,
        workload_class: str = "exploratory",
        team: str = "research",
        share: str = "background",
        retries: int | None = 1,
        checkpoint_interval: int | None = 600,
        instance_count: int = 2,
        principal: str = "arn:aws:sts::111122223333:assumed-role/researcher/alice",
    ) -> JobRecord:
        payload: dict[str, Any] = {
            "TrainingJobName": f"train-{submission_id}",
            "RoleArn": "arn:aws:iam::111122223333:role/sm-exec",
            "AlgorithmSpecification": {"TrainingImage": "img:1", "TrainingInputMode": "File"},
            "ResourceConfig": {
                "InstanceType": "ml.g5.xlarge",
                "InstanceCount": instance_count,
                "VolumeSizeInGB": 50,
            },
            "OutputDataConfig": {"S3OutputPath": "s3://bucket/out/"},
            "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        }
        if checkpoint_interval is not None:
            payload["CheckpointConfig"] = {"S3Uri": f"s3://bucket/ckpt/{submission_id}/"}
        record = JobRecord(
            pk=submission_id,
            state=SubmissionState.QUEUED,
            team=team,
            workloadClass=workload_class,
            priorityLevel="standard",
            jobName=f"job-{submission_id}",
            principal=principal,
            ownerSlackUserId="U0ALICE" if "alice" in principal else None,
            quotaShareName=share,
            schedulingPriority=10,
            preemptionRetriesBeforeTermination=retries,
            checkpointIntervalSeconds=checkpoint_interval,
            serviceRequestPayload=json.dumps(payload, sort_keys=True),
            instanceType="ml.g5.xlarge",
            instanceCount=instance_count,
            createdAt=int(self.clock.now()),
        )
        created = self.jobs.create(record)
        if batch_job_id is None:
            return created
        return self.jobs.update(
            submission_id,
            {"batchJobId": batch_job_id, "state": SubmissionState.SUBMITTED.value},
        )


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        boto3.client("dynamodb").create_table(**jobs_table_definition(TABLE))
        yield


@pytest.fixture
def world(aws: None, policy: Policy, batch: Any) -> Iterator[World]:
    clock = ManualClock(START)
    w = World(
        clock=clock,
        policy=policy,
        jobs=DynamoDBJobsRepository(TABLE, clock),
        store=DynamoDBJobStateStore.from_name(TABLE),
        audit=NullAuditSink(),
        batch=batch,
    )
    wiring.override(
        Settings(jobs_table=TABLE, job_queue=QUEUE_ARN, platform_channel="C0PLATFORM"),
        clock=clock,
        policy=policy,
        batch=batch,
        audit=w.audit,
        job_state_store=w.store,
    )
    yield w
    wiring.reset()


class _InterimBatch:
    """Replaced by the simulated Batch once branch ``batch`` is merged."""

    def __init__(self) -> None:
        self.submitted: list[dict[str, Any]] = []
        self.terminated: list[dict[str, Any]] = []
        self._tokens: dict[str, str] = {}

    def submit_service_job(self, **request: Any) -> dict[str, Any]:
        token = request["clientToken"]
        if token not in self._tokens:
            self._tokens[token] = f"sim-{len(self._tokens) + 1}"
            self.submitted.append(request)
        job_id = self._tokens[token]
        return {"jobId": job_id, "jobName": request["jobName"], "jobArn": f"arn:{job_id}"}

    def terminate_service_job(self, *, jobId: str, reason: str) -> dict[str, Any]:
        self.terminated.append({"jobId": jobId, "reason": reason})
        return {}


@pytest.fixture
def batch() -> Any:
    return _InterimBatch()
