"""Fixtures: a moto JobsTable, the example policy, a manual clock, wiring overrides."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from moto import mock_aws

from quotagov import composition
from quotagov.adapters.dynamodb_jobs import (
    DynamoDBJobsRepository,
    deserialize_item,
    jobs_table_definition,
)
from quotagov.clock import ManualClock
from quotagov.governance.dispositions import DispositionDeps
from quotagov.governance.job_state.updates import JobStateDeps
from quotagov.governance.model.job import JobRecord, SubmissionState, client_token_for
from quotagov.governance.ports import NullAuditSink
from quotagov.governance.submission import service_job_request
from quotagov.handlers import job_state
from quotagov.policy import Policy
from quotagov.settings import Settings
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.simbatch.payload import CHECKPOINT_INTERVAL_HINT, RUN_SECONDS_HINT
from support.agreeing_batch import AgreeingBatch
from support.aws import QUEUE_ARN, fake_aws_env, powertools_env
from support.compose import wire
from support.lambda_context import LambdaContext
from support.payloads import training_job_request
from support.policies import example_policy, simulated_batch
from support.principals import ALICE, FRANK

from .envelopes import preempted_twice

TABLE = "JobsTable"
START = 1_777_885_000.0  # epoch seconds of the scenario's start


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    _set_env(monkeypatch)


def _set_env(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_aws_env(monkeypatch, **powertools_env("job-state", metrics_namespace="quotagov"))


@pytest.fixture
def policy() -> Policy:
    return example_policy()


class StoredItems:
    """The ``JobsTable`` items exactly as stored (plain attributes, numbers as int/float),
    read consistently: what the tests check, job records and ``FOREIGN#`` items alike."""

    def __init__(self, table: str) -> None:
        self._client = boto3.client("dynamodb")
        self._table = table

    def get(self, pk: str) -> dict[str, Any] | None:
        """The stored item with ``pk``, None when there is none."""
        item = self._client.get_item(
            TableName=self._table, Key={"pk": {"S": pk}}, ConsistentRead=True
        ).get("Item")
        return deserialize_item(item) if item else None


@dataclass
class World:
    """Everything a job-state test touches."""

    clock: ManualClock
    policy: Policy
    jobs: DynamoDBJobsRepository
    store: StoredItems
    audit: NullAuditSink
    batch: SimulatedBatch
    chat: Any = None
    fed: int = 0
    retries: list[tuple[dict[str, Any], float]] = field(default_factory=list)

    def deps(self) -> JobStateDeps:
        return JobStateDeps(store=self.jobs, dispositions=self.disposition_deps())

    @property
    def agreeing_batch(self) -> AgreeingBatch:
        """:attr:`batch`, confirming hand-fed events of jobs it never ran."""
        return AgreeingBatch(self.batch, self.jobs)

    def disposition_deps(self) -> DispositionDeps:
        return DispositionDeps(
            store=self.jobs,
            batch=self.agreeing_batch,
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
        instance_count: int = 1,
        principal: str = ALICE,
    ) -> JobRecord:
        payload = training_payload(submission_id, instance_count, checkpoint_interval)
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
            serviceRequestPayload=payload,
            instanceType="ml.g5.xlarge",
            instanceCount=instance_count,
            clientToken=client_token_for(submission_id),
            createdAt=int(self.clock.now()),
        )
        created = self.jobs.create_if_absent(record)
        if batch_job_id is None:
            return created
        return self.jobs.update_if_expected(
            submission_id,
            {"batchJobId": batch_job_id, "state": SubmissionState.SUBMITTED.value},
        )

    def submit(self, submission_id: str, **kwargs: Any) -> JobRecord:
        """Create the record and send it to the simulated Batch, as the submit worker does."""
        record = self.record(submission_id, batch_job_id=None, **kwargs)
        response = self.batch.submit_service_job(**service_job_request(record, QUEUE_ARN))
        return self.jobs.update_if_expected(
            submission_id,
            {
                "batchJobId": response["jobId"],
                "batchJobArn": response["jobArn"],
                "state": SubmissionState.SUBMITTED.value,
            },
        )

    def other_job(self, name: str, share: str, run_seconds: int, count: int = 1) -> str:
        """A job submitted straight to Batch (not through quotagov): the preemptors."""
        response = self.batch.submit_service_job(
            jobName=name,
            jobQueue=QUEUE_ARN,
            serviceJobType="SAGEMAKER_TRAINING",
            quotaShareName=share,
            schedulingPriority=10,
            serviceRequestPayload=training_payload(name, count, None, run_seconds=run_seconds),
        )
        return str(response["jobId"])

    def pump(self) -> list[dict[str, Any]]:
        """Deliver every event not delivered yet to the handler, until none is left
        (events caused by the handler's own Batch calls included). An invocation that
        raises is retried 60 clock seconds later, as Lambda retries an asynchronous
        EventBridge invocation. Returns the handler's results."""
        results = []
        while True:
            due = [e for e, t in self.retries if t <= self.clock.now()]
            self.retries = [(e, t) for e, t in self.retries if t > self.clock.now()]
            if self.fed < len(self.batch.events):
                due.append(self.batch.events[self.fed])
                self.fed += 1
            if not due:
                return results
            for event in due:
                try:
                    results.append(job_state.handler(event, LambdaContext()))
                except Exception:
                    self.retries.append((event, self.clock.now() + 60))

    def advance(self, seconds: float) -> None:
        """Move the clock (the simulated Batch runs) and deliver the events."""
        self.batch.advance(seconds)
        self.pump()


def training_payload(
    name: str,
    instance_count: int,
    checkpoint_interval: int | None,
    *,
    run_seconds: int | None = None,
) -> str:
    """A ``CreateTrainingJob`` request (JSON); simulation hints ride in its ``Tags``."""
    tags = {}
    if checkpoint_interval is not None:
        tags[CHECKPOINT_INTERVAL_HINT] = str(checkpoint_interval)
    if run_seconds is not None:
        tags[RUN_SECONDS_HINT] = str(run_seconds)
    payload = training_job_request(
        f"train-{name}",
        instance_count=instance_count,
        volume_gb=50,
        image="img:1",
        output_path="s3://bucket/out/",
        checkpoint_uri=None if checkpoint_interval is None else f"s3://bucket/ckpt/{name}/",
        tags=tags,
    )
    return json.dumps(payload, sort_keys=True)


@contextmanager
def build_world(policy: Policy, seed: int = 7) -> Iterator[World]:
    """A fresh moto JobsTable, simulated Batch and wiring (usable inside hypothesis)."""
    with mock_aws():
        boto3.client("dynamodb").create_table(**jobs_table_definition(TABLE))
        clock = ManualClock(START)
        world = World(
            clock=clock,
            policy=policy,
            jobs=DynamoDBJobsRepository(TABLE, clock),
            store=StoredItems(TABLE),
            audit=NullAuditSink(),
            batch=simulated_batch(policy, clock, seed),
        )
        wire(
            Settings(jobs_table=TABLE, job_queue=QUEUE_ARN, platform_channel="C0PLATFORM"),
            clock=clock,
            policy=policy,
            batch=world.agreeing_batch,
            audit=world.audit,
            chat=None,
            jobs=world.jobs,
        )
        try:
            yield world
        finally:
            composition.reset()


@pytest.fixture
def world(policy: Policy) -> Iterator[World]:
    with build_world(policy) as w:
        yield w


def submitted(batch: SimulatedBatch) -> list[dict[str, Any]]:
    """``SubmitServiceJob`` requests quotagov's dispositions sent (successors)."""
    return [r for op, r in batch.requests if op == "SubmitServiceJob" and "-r" in r["jobName"]]


def terminated(batch: SimulatedBatch) -> list[dict[str, Any]]:
    return [r for op, r in batch.requests if op == "TerminateServiceJob"]


def exhausted_release_job(world: World, submission_id: str) -> None:
    """Frank's release job ``submission_id`` (one preemption retry, no checkpoints)
    preempted twice, through the handler: its retries run out, and the release class
    asks the owner what to do (``ask-owner``)."""
    world.clock.set(START + 4000)
    batch_job_id = f"batch-{submission_id}"
    world.record(
        submission_id,
        batch_job_id=batch_job_id,
        workload_class="release",
        team="release",
        share="reserved",
        retries=1,
        checkpoint_interval=None,
        principal=FRANK,
    )
    for event in preempted_twice(batch_job_id, int(START * 1000)):
        job_state.handler(event, LambdaContext())


@pytest.fixture(scope="module")
def recorded() -> Iterator[tuple[str, list[dict[str, Any]], dict[str, Any]]]:
    """explore-1's events from the simulated scenario and the records an in-order replay
    produces (computed once per module)."""
    from .test_simulated_scenario import _replay, run_scenario

    policy = example_policy()
    with pytest.MonkeyPatch.context() as patch:
        _set_env(patch)
        with build_world(policy) as world:
            batch_job_id, events = run_scenario(world)
        yield batch_job_id, events, _replay(policy, batch_job_id, events)
