"""The JobsTable repository against moto DynamoDB: conditional writes, GSI, round trips."""

from __future__ import annotations

from typing import Any

import pytest

from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository
from quotagov.clock import ManualClock
from quotagov.governance.model.job import JobRecord, SubmissionState, client_token_for
from quotagov.governance.ports import (
    JobRecordConflictError,
    JobRecordExistsError,
    JobRecordNotFoundError,
)

from .conftest import JOBS_TABLE


def _record(pk: str = "sub-1", **extra: Any) -> JobRecord:
    fields: dict[str, Any] = dict(
        pk=pk,
        state=SubmissionState.QUEUED,
        team="research",
        workloadClass="exploratory",
        priorityLevel="standard",
        jobName="resnet-sweep-017",
        principal="arn:aws:sts::111122223333:assumed-role/researcher/alice",
        ownerSlackUserId="U0ALICE",
        quotaShareName="background",
        schedulingPriority=10,
        preemptionRetriesBeforeTermination=1,
        checkpointIntervalSeconds=600,
        serviceRequestPayload='{"TrainingJobName": "resnet-sweep-017"}',
        instanceType="ml.g5.xlarge",
        instanceCount=1,
        clientToken=client_token_for(pk),
    )
    return JobRecord(**{**fields, **extra})


def test_create_then_get_round_trips_every_field(
    jobs_repo: DynamoDBJobsRepository, dynamodb: Any, clock: ManualClock
) -> None:
    stored = jobs_repo.create_if_absent(_record())
    assert stored.version == 1
    assert stored.createdAt == stored.updatedAt == 1_796_083_200

    again = jobs_repo.get("sub-1")
    assert again == stored
    raw = dynamodb.get_item(TableName=JOBS_TABLE, Key={"pk": {"S": "sub-1"}})["Item"]
    assert raw["state"] == {"S": "QUEUED"}
    assert raw["schedulingPriority"] == {"N": "10"}
    assert raw["clientToken"]["S"].startswith("qg-") and len(raw["clientToken"]["S"]) == 43
    assert "batchJobId" not in raw  # None is not stored: the GSI stays sparse


def test_create_refuses_an_existing_id(jobs_repo: DynamoDBJobsRepository) -> None:
    jobs_repo.create_if_absent(_record())
    with pytest.raises(JobRecordExistsError, match="sub-1"):
        jobs_repo.create_if_absent(_record(team="applied"))
    got = jobs_repo.get("sub-1")
    assert got is not None and got.team == "research"


def test_get_of_unknown_id_is_none(jobs_repo: DynamoDBJobsRepository) -> None:
    assert jobs_repo.get("nope") is None
    assert jobs_repo.get_by_batch_job_id("nope") is None


def test_update_sets_removes_and_bumps_version(
    jobs_repo: DynamoDBJobsRepository, dynamodb: Any, clock: ManualClock
) -> None:
    jobs_repo.create_if_absent(_record())
    clock.advance(30)
    after = jobs_repo.update_if_expected(
        "sub-1",
        {
            "state": SubmissionState.SUBMITTED,
            "batchJobId": "job-1",
            "batchJobArn": "arn:aws:batch:eu-west-1:111122223333:service-job/job-1",
            "checkpointIntervalSeconds": None,
        },
        expected_version=1,
        expected_states=[SubmissionState.QUEUED],
    )
    assert after.state is SubmissionState.SUBMITTED
    assert after.version == 2
    assert after.updatedAt == 1_796_083_230 and after.createdAt == 1_796_083_200
    assert after.checkpointIntervalSeconds is None
    raw = dynamodb.get_item(TableName=JOBS_TABLE, Key={"pk": {"S": "sub-1"}})["Item"]
    assert "checkpointIntervalSeconds" not in raw
    assert jobs_repo.get_by_batch_job_id("job-1") == after


def test_update_with_stale_version_loses_and_shows_the_winner(
    jobs_repo: DynamoDBJobsRepository,
) -> None:
    jobs_repo.create_if_absent(_record())
    jobs_repo.update_if_expected("sub-1", {"reasons": ["first writer"]}, expected_version=1)
    with pytest.raises(JobRecordConflictError) as caught:
        jobs_repo.update_if_expected("sub-1", {"reasons": ["second writer"]}, expected_version=1)
    assert caught.value.current is not None
    assert caught.value.current.reasons == ["first writer"]
    assert caught.value.current.version == 2
    got = jobs_repo.get("sub-1")
    assert got is not None and got.reasons == ["first writer"] and got.version == 2


def test_update_with_wrong_state_loses(jobs_repo: DynamoDBJobsRepository) -> None:
    jobs_repo.create_if_absent(_record())
    jobs_repo.update_if_expected(
        "sub-1", {"state": SubmissionState.SUBMITTED, "batchJobId": "job-1"}
    )
    with pytest.raises(JobRecordConflictError, match="state SUBMITTED"):
        jobs_repo.update_if_expected(
            "sub-1",
            {"state": SubmissionState.FAILED, "reasons": ["late"]},
            expected_states=[SubmissionState.QUEUED],
        )
    got = jobs_repo.get("sub-1")
    assert got is not None and got.state is SubmissionState.SUBMITTED and got.reasons == []


def test_update_of_missing_record_is_not_found(jobs_repo: DynamoDBJobsRepository) -> None:
    with pytest.raises(JobRecordNotFoundError, match="ghost"):
        jobs_repo.update_if_expected("ghost", {"reasons": ["x"]})


def test_update_refuses_managed_attributes(jobs_repo: DynamoDBJobsRepository) -> None:
    jobs_repo.create_if_absent(_record())
    with pytest.raises(ValueError, match="version"):
        jobs_repo.update_if_expected("sub-1", {"version": 7})


def test_unknown_attributes_are_ignored_on_read_and_kept_in_the_item(
    jobs_repo: DynamoDBJobsRepository, dynamodb: Any
) -> None:
    """Attributes a newer version writes (a rolling deploy) do not break a read, and a
    partial write of this version leaves them in the stored item."""
    jobs_repo.create_if_absent(_record())
    dynamodb.update_item(
        TableName=JOBS_TABLE,
        Key={"pk": {"S": "sub-1"}},
        UpdateExpression="SET futureAttribute = :f",
        ExpressionAttributeValues={":f": {"M": {"attempts": {"N": "2"}}}},
    )
    jobs_repo.update_if_expected("sub-1", {"reasons": ["x"]}, expected_version=1)
    got = jobs_repo.get("sub-1")
    assert got is not None and got.reasons == ["x"] and got.version == 2
    assert "futureAttribute" not in got.to_item()
    item = dynamodb.get_item(TableName=JOBS_TABLE, Key={"pk": {"S": "sub-1"}})["Item"]
    assert item["futureAttribute"] == {"M": {"attempts": {"N": "2"}}}


def test_client_token_is_deterministic_and_fits_batch() -> None:
    assert client_token_for("sub-1") == client_token_for("sub-1")
    assert client_token_for("sub-1") != client_token_for("sub-2")
    assert client_token_for("sub-1", 1) != client_token_for("sub-1", 0)
    assert len(client_token_for("x" * 500)) <= 64


def test_in_state_since_pages_oldest_first_and_stops_at_the_limit(
    jobs_repo: DynamoDBJobsRepository, clock: ManualClock
) -> None:
    """The reconciler's query (GSI byState): only the state asked, only old enough."""
    for i in range(7):
        jobs_repo.create_if_absent(_record(f"q-{i}"))
        clock.advance(10)
    submitted = jobs_repo.create_if_absent(_record("s-1"))
    jobs_repo.update_if_expected(submitted.pk, {"state": SubmissionState.SUBMITTED})
    cutoff = int(clock.now()) - 25  # q-0 .. q-4 were last written at or before it

    found = jobs_repo.in_state_since(SubmissionState.QUEUED, cutoff, limit=3)
    assert [r.pk for r in found] == ["q-0", "q-1", "q-2"]
    everything = jobs_repo.in_state_since(SubmissionState.QUEUED, cutoff, limit=100)
    assert [r.pk for r in everything] == [f"q-{i}" for i in range(5)]
    assert jobs_repo.in_state_since(SubmissionState.SUBMITTED, cutoff, limit=10) == []
    now = int(clock.now())
    assert [r.pk for r in jobs_repo.in_state_since(SubmissionState.SUBMITTED, now, limit=10)] == [
        "s-1"
    ]
    assert len(jobs_repo.in_state_since(SubmissionState.QUEUED, now, limit=10)) == 7
