"""The one job record: every stored shape reads and writes back, the old ``FAILED``
shape is read as its :class:`FailureKind`, and every conditional write of the
``JobsTable`` repository that is refused leaves the stored item byte-identical."""

from __future__ import annotations

from typing import Any

import pytest

from quotagov.adapters.dynamodb_jobs import FOREIGN_PREFIX, DynamoDBJobsRepository
from quotagov.clock import ManualClock
from quotagov.governance.model.job import (
    BatchState,
    Disposition,
    FailureKind,
    JobRecord,
    SubmissionState,
    failure_changes,
)
from quotagov.governance.ports import (
    JobRecordConflictError,
    JobRecordExistsError,
    JobRecordNotFoundError,
    StaleJobStateError,
)

from .conftest import JOBS_TABLE

#: A submission as ``POST /jobs`` stores it (QUEUED, routed).
QUEUED: dict[str, Any] = {
    "pk": "sub-1",
    "state": "QUEUED",
    "team": "research",
    "workloadClass": "exploratory",
    "priorityLevel": "standard",
    "jobName": "ablation-7",
    "principal": "arn:aws:sts::111122223333:assumed-role/researcher/alice",
    "ownerSlackUserId": "U0ALICE",
    "quotaShareName": "background",
    "schedulingPriority": 10,
    "preemptionRetriesBeforeTermination": 1,
    "checkpointIntervalSeconds": 600,
    "serviceRequestPayload": '{"ResourceConfig": {"InstanceCount": 2}}',
    "instanceType": "ml.g5.xlarge",
    "instanceCount": 2,
    "clientToken": "qg-" + "a" * 40,
    "reasons": [],
    "createdAt": 1_796_083_200,
    "updatedAt": 1_796_083_200,
    "version": 1,
    "source": "api",
    "clientRequestId": "run-7",
    "successorIds": [],
    "resubmitCount": 0,
    "tags": {"project": "ablation"},
    "submissionProof": {"v": 1, "sender": "JobsApiFunction", "mac": "bWFj"},
}

#: The same job once Batch ran it, preempted it twice and a disposition moved it on.
TRACKED: dict[str, Any] = {
    **QUEUED,
    "state": "SUBMITTED",
    "batchJobId": "job-1",
    "batchJobArn": "arn:aws:batch:eu-west-1:111122223333:service-job/job-1",
    "submittedAt": 1_796_083_210,
    "version": 2,
    "successorIds": ["sub-1-r1"],
    "jobStateVersion": 6,
    "jobStateFacts": {"batchJobId": "job-1", "status": "FAILED", "statusKey": [5, 0, 0, 0, 0, ""]},
    "jobState": {
        "status": "FAILED",
        "statusReason": "preempted",
        "attemptCount": 3,
        "preemptionCount": 2,
        "preemptions": [
            {
                "trainingJobArn": "arn:aws:sagemaker:eu-west-1:111122223333:training-job/t-1",
                "startedAt": 1_796_083_300_000,
                "stoppedAt": 1_796_084_800_000,
                "runSeconds": 1500,
                "lostWorkSeconds": 300,
                "lostInstanceSeconds": 600,
                "kind": "in-share",
            }
        ],
        "unattributedPreemptions": 1,
        "waitingSeconds": 300.5,
        "runningSeconds": 2400,
        "lostInstanceSeconds": 1200,
        "firstStartedAt": 1_796_083_300_000,
        "submissionToFirstStartSeconds": 100,
        "asOf": 1_796_086_000_000,
    },
    "disposition": {
        "status": "applied",
        "trigger": "retries-exhausted",
        "policyAction": "reclassify",
        "owner": "arn:aws:sts::111122223333:assumed-role/researcher/alice",
        "openedAt": 1_796_086_000,
        "preemptionCount": 2,
        "preemptionRetriesBeforeTermination": 1,
        "reason": "FAILED after 2 preemption(s)",
        "choices": ["resubmit", "abandon"],
        "choice": "reclassify",
        "decidedBy": "quotagov",
        "decidedAt": 1_796_086_000.25,
        "successorId": "sub-1-r1",
        "targetShare": "medium",
        "leaseUntil": 0,
        "message": {"channel": "C0GOVERN", "ts": "1796086000.000100"},
        "closedAt": 1_796_086_001,
        "successorBatchJobId": "job-2",
        "aKeyOfANewerVersion": "kept",
    },
    "dispositionToken": "0" * 32,
}

#: A queue message that was no reference to a stored submission (REFUSED).
REFUSED_MESSAGE: dict[str, Any] = {
    "pk": "sub-q",
    "state": "REFUSED",
    "team": "",
    "workloadClass": "",
    "priorityLevel": "",
    "jobName": "",
    "principal": "",
    "serviceRequestPayload": "",
    "instanceType": "",
    "instanceCount": 0,
    "clientToken": "",
    "successorIds": [],
    "resubmitCount": 0,
    "reasons": ["(body): not a reference to a stored submission"],
    "createdAt": 1_796_083_200,
    "updatedAt": 1_796_083_200,
    "version": 1,
    "source": "sqs",
    "messageId": "m-1",
    "claimedPrincipal": "arn:aws:sts::111122223333:assumed-role/researcher/alice",
}


def _failed(kind: FailureKind | None = None, **old: Any) -> dict[str, Any]:
    item = {
        **QUEUED,
        "state": "FAILED",
        "reasons": ["why"],
        "requeueCount": 3,
        "requeuedAt": 1_796_090_000,
        **old,
    }
    if kind is not None:
        item["failureKind"] = kind.value
    return item


@pytest.mark.parametrize(
    "item",
    [
        QUEUED,
        TRACKED,
        REFUSED_MESSAGE,
        _failed(FailureKind.NOT_SUBMITTABLE),
        _failed(FailureKind.ENQUEUE_REFUSED),
        _failed(FailureKind.STUCK_QUEUED),
    ],
    ids=["queued", "tracked", "refused-message", "not-submittable", "enqueue-refused", "stuck"],
)
def test_every_current_shape_round_trips_unchanged(item: dict[str, Any]) -> None:
    record = JobRecord.from_item(item)
    assert record.to_item() == item
    assert JobRecord.from_item(record.to_item()) == record


def test_the_tracked_shape_is_typed() -> None:
    record = JobRecord.from_item(TRACKED)
    assert isinstance(record.jobState, BatchState)
    assert record.jobState.preemptions[0].lostInstanceSeconds == 600
    assert record.jobState.waitingSeconds == 300.5
    assert isinstance(record.disposition, Disposition)
    assert record.disposition.message is not None
    assert record.disposition.message.channel == "C0GOVERN"
    # an unknown key of the map written whole is kept (a newer version's)
    assert record.disposition.to_item()["aKeyOfANewerVersion"] == "kept"
    assert record.job_state_version == 6 and record.failure is None


@pytest.mark.parametrize(
    ("old", "kind"),
    [
        ({"enqueueFailed": True}, FailureKind.ENQUEUE_REFUSED),
        ({"staleFailed": True}, FailureKind.STUCK_QUEUED),
        ({}, FailureKind.NOT_SUBMITTABLE),
    ],
    ids=["enqueueFailed", "staleFailed", "neither"],
)
def test_an_old_failed_item_reads_as_its_kind_and_writes_back_migrated(
    old: dict[str, Any], kind: FailureKind
) -> None:
    record = JobRecord.from_item(_failed(**old))
    assert record.failure is not None
    assert record.failure.kind is kind and record.failure.reasons == ("why",)
    assert record.to_item() == _failed(kind)
    assert record.requeues == 3


def test_failure_changes_replace_the_old_markers() -> None:
    assert failure_changes(FailureKind.STUCK_QUEUED) == {
        "failureKind": FailureKind.STUCK_QUEUED,
        "enqueueFailed": None,
        "staleFailed": None,
    }
    assert failure_changes(None)["failureKind"] is None


def test_an_old_item_in_the_table_reads_and_migrates_on_its_next_failure_write(
    jobs_repo: DynamoDBJobsRepository, dynamodb: Any
) -> None:
    """A deployed table holds items of the old shape: read as their kind; the next
    failure write leaves one answer (``failureKind``) and no old marker."""
    from quotagov.adapters.dynamodb_jobs import serialize_item

    old = {**QUEUED, "state": "FAILED", "reasons": ["queue down"], "enqueueFailed": True}
    dynamodb.put_item(TableName=JOBS_TABLE, Item=serialize_item(old))
    record = jobs_repo.get("sub-1")
    assert record is not None and record.failure is not None
    assert record.failure.kind is FailureKind.ENQUEUE_REFUSED
    jobs_repo.update_if_expected(
        "sub-1",
        {"reasons": ["gave up"], **failure_changes(FailureKind.STUCK_QUEUED)},
        expected_states=[SubmissionState.FAILED],
    )
    item = dynamodb.get_item(TableName=JOBS_TABLE, Key={"pk": {"S": "sub-1"}})["Item"]
    assert item["failureKind"] == {"S": "stuck-queued"}
    assert "enqueueFailed" not in item and "staleFailed" not in item


# -------------------------------------------------------------- refused writes


def _raw(dynamodb: Any, pk: str = "sub-1") -> dict[str, Any]:
    item: dict[str, Any] = dynamodb.get_item(
        TableName=JOBS_TABLE, Key={"pk": {"S": pk}}, ConsistentRead=True
    )["Item"]
    return item


@pytest.fixture
def tracked(jobs_repo: DynamoDBJobsRepository, dynamodb: Any) -> dict[str, Any]:
    """The tracked job stored as the repository writes it; its raw wire-format item."""
    from quotagov.adapters.dynamodb_jobs import serialize_item, with_index_keys

    dynamodb.put_item(TableName=JOBS_TABLE, Item=serialize_item(with_index_keys(TRACKED)))
    return _raw(dynamodb)


def test_create_if_absent_refused_leaves_the_item(
    jobs_repo: DynamoDBJobsRepository, dynamodb: Any, tracked: dict[str, Any]
) -> None:
    with pytest.raises(JobRecordExistsError):
        jobs_repo.create_if_absent(JobRecord.from_item({**QUEUED, "jobName": "forged"}))
    assert _raw(dynamodb) == tracked


@pytest.mark.parametrize(
    "expected",
    [{"expected_version": 1}, {"expected_states": [SubmissionState.QUEUED]}],
    ids=["version", "state"],
)
def test_update_if_expected_refused_leaves_the_item(
    jobs_repo: DynamoDBJobsRepository,
    dynamodb: Any,
    tracked: dict[str, Any],
    expected: dict[str, Any],
) -> None:
    with pytest.raises(JobRecordConflictError) as caught:
        jobs_repo.update_if_expected("sub-1", {"state": SubmissionState.FAILED}, **expected)
    assert caught.value.current == JobRecord.from_item(TRACKED)
    assert _raw(dynamodb) == tracked


def test_save_job_state_if_version_refused_leaves_the_item(
    jobs_repo: DynamoDBJobsRepository, dynamodb: Any, tracked: dict[str, Any]
) -> None:
    with pytest.raises(StaleJobStateError):
        jobs_repo.save_job_state_if_version(
            "sub-1", facts={"status": "RUNNING"}, summary={"status": "RUNNING"}, expected_version=5
        )
    with pytest.raises(StaleJobStateError):  # "never written" while it was
        jobs_repo.save_job_state_if_version(
            "sub-1", facts={"status": "RUNNING"}, summary={"status": "RUNNING"}, expected_version=0
        )
    assert _raw(dynamodb) == tracked
    with pytest.raises(JobRecordNotFoundError):
        jobs_repo.save_job_state_if_version("ghost", facts={}, summary={}, expected_version=0)


@pytest.mark.parametrize(
    ("status", "lease"),
    [(None, None), ("pending-owner", None), ("applied", 17.0)],
    ids=["expects-none", "wrong-status", "wrong-lease"],
)
def test_move_disposition_if_status_refused_leaves_the_item(
    jobs_repo: DynamoDBJobsRepository,
    dynamodb: Any,
    tracked: dict[str, Any],
    status: str | None,
    lease: float | None,
) -> None:
    ours = {**TRACKED["disposition"], "status": "abandoned"}
    moved = jobs_repo.move_disposition_if_status(
        "sub-1",
        expected_status=status,
        disposition=ours,
        successor_id="sub-1-r2",
        expected_lease=lease,
    )
    assert moved is False
    assert _raw(dynamodb) == tracked


def test_an_identical_twin_disposition_is_not_taken_for_ours(
    jobs_repo: DynamoDBJobsRepository, dynamodb: Any, tracked: dict[str, Any]
) -> None:
    """Two callers writing the same disposition at the same instant: the write token
    tells them apart, so only the one whose write took effect goes on."""
    twin = dict(TRACKED["disposition"])
    assert (
        jobs_repo.move_disposition_if_status(
            "sub-1", expected_status="pending-owner", disposition=twin
        )
        is False
    )
    assert _raw(dynamodb) == tracked


def test_mark_submitted_if_job_unset_refused_leaves_the_item(
    jobs_repo: DynamoDBJobsRepository, dynamodb: Any, tracked: dict[str, Any]
) -> None:
    with pytest.raises(JobRecordConflictError, match="job-1") as caught:
        jobs_repo.mark_submitted_if_job_unset("sub-1", "job-other")
    assert caught.value.current is not None and caught.value.current.batchJobId == "job-1"
    assert _raw(dynamodb) == tracked
    # the same job again is a no-op write that only bumps version and updatedAt
    jobs_repo.mark_submitted_if_job_unset("sub-1", "job-1")
    after = _raw(dynamodb)
    assert after["version"] == {"N": "3"}
    assert {k: v for k, v in after.items() if k not in ("version", "updatedAt")} == {
        k: v for k, v in tracked.items() if k not in ("version", "updatedAt")
    }


def test_find_submission_id_skips_foreign_items_and_remembers_hits(
    jobs_repo: DynamoDBJobsRepository, dynamodb: Any, tracked: dict[str, Any], clock: ManualClock
) -> None:
    jobs_repo.record_foreign(
        "job-9",
        status="RUNNABLE",
        event_time_ms=1,
        job_queue=None,
        job_name=None,
        quota_share_name=None,
    )
    assert jobs_repo.is_foreign("job-9") and not jobs_repo.is_foreign("job-1")
    assert _raw(dynamodb, f"{FOREIGN_PREFIX}job-9")["foreignJobId"] == {"S": "job-9"}
    assert jobs_repo.find_submission_id("job-9") is None
    assert jobs_repo.find_submission_id("job-1") == "sub-1"
    dynamodb.delete_item(TableName=JOBS_TABLE, Key={"pk": {"S": "sub-1"}})
    assert jobs_repo.find_submission_id("job-1") == "sub-1"  # a batchJobId never changes
