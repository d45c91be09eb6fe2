"""``GET /jobs?team=&state=``: members list their team's jobs page by page; nobody
else learns anything, and a page token cannot be turned into another team's listing."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository, jobs_table_definition
from quotagov.clock import ManualClock
from quotagov.governance.errors import ForbiddenError, InvalidRequestError
from quotagov.governance.jobs.listing import list_jobs
from quotagov.governance.model.job import JobRecord, SubmissionState
from support.aws import fake_aws_env
from support.policies import example_policy
from support.principals import ALICE, BOB, DAVE, FRANK

POLICY = example_policy()


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> Iterator[DynamoDBJobsRepository]:
    fake_aws_env(monkeypatch)
    with mock_aws():
        boto3.client("dynamodb").create_table(**jobs_table_definition("jobs"))
        repo = DynamoDBJobsRepository("jobs", ManualClock(1_777_885_200.0))
        for i in range(7):
            repo.create_if_absent(
                JobRecord(
                    pk=f"r-{i}",
                    state=SubmissionState.SUBMITTED if i % 2 else SubmissionState.QUEUED,
                    team="research",
                    jobName=f"r-{i}",
                    principal=ALICE if i % 3 else BOB,
                    createdAt=1_777_885_200 + i,
                    jobState={"status": "RUNNING" if i == 5 else "RUNNABLE"},
                )
            )
        repo.create_if_absent(
            JobRecord(pk="a-0", state=SubmissionState.QUEUED, team="applied", jobName="secret")
        )
        repo.create_if_absent(JobRecord(pk="malformed", state=SubmissionState.FAILED, team=""))
        yield repo


def _page(jobs: DynamoDBJobsRepository, caller: str = ALICE, **query: object) -> dict:  # type: ignore[type-arg]
    args = {"team": "research", "state": None, "limit": None, "next_token": None} | query
    return list_jobs(caller, jobs=jobs, policy=POLICY, **args)  # type: ignore[arg-type]


def test_a_member_pages_through_the_team_newest_first(jobs: DynamoDBJobsRepository) -> None:
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = _page(jobs, BOB, limit=3, next_token=token)
        seen += [j["submissionId"] for j in page["jobs"]]
        pages += 1
        token = page["nextToken"]
        if token is None:
            break
    assert seen == [f"r-{i}" for i in range(6, -1, -1)]
    assert pages == 3
    assert "secret" not in json.dumps(seen)


def test_state_filters_on_submission_state_or_batch_status(jobs: DynamoDBJobsRepository) -> None:
    queued = _page(jobs, state="QUEUED")["jobs"]
    assert [j["submissionId"] for j in queued] == ["r-6", "r-4", "r-2", "r-0"]
    running = _page(jobs, state="RUNNING", limit=1)
    assert [j["submissionId"] for j in running["jobs"]] == ["r-5"]
    assert running["jobs"][0]["batchStatus"] == "RUNNING"


def test_outsiders_are_refused_before_anything_is_read(jobs: DynamoDBJobsRepository) -> None:
    for caller in (DAVE, FRANK, ""):
        with pytest.raises(ForbiddenError):
            _page(jobs, caller)
    with pytest.raises(ForbiddenError):  # even for a team that does not exist
        _page(jobs, ALICE, team="no-such-team")


def test_bad_queries_name_every_fault(jobs: DynamoDBJobsRepository) -> None:
    with pytest.raises(InvalidRequestError) as missing:
        _page(jobs, team=None)
    assert [f for f, _ in missing.value.faults] == ["query.team"]
    with pytest.raises(InvalidRequestError) as bad:
        _page(jobs, state="PAUSED", limit=500, next_token="%%%")
    assert [f for f, _ in bad.value.faults] == ["query.state", "query.limit", "query.nextToken"]


def test_a_token_cannot_open_another_teams_listing(jobs: DynamoDBJobsRepository) -> None:
    """A research member forges tokens to walk the applied team's index: 400, and not a
    single record of the other team comes back."""
    token = _page(jobs, limit=2)["nextToken"]
    assert token
    # the research token replayed for team applied (the caller is not a member: 403 first)
    with pytest.raises(ForbiddenError):
        _page(jobs, DAVE, team="research", next_token=token)
    forged = [
        {"team": "research", "key": {"pk": "a-0", "teamKey": "applied", "createdAt": 0}},
        {"team": "research", "key": {"pk": "r-1", "teamKey": "research"}},
        {"team": "applied", "key": {"pk": "r-1", "teamKey": "research", "createdAt": 1}},
        {"team": "research", "key": {"pk": ["x"], "teamKey": "research", "createdAt": 1}},
    ]
    for body in forged:
        raw = base64.urlsafe_b64encode(json.dumps(body).encode()).decode()
        with pytest.raises(InvalidRequestError) as refused:
            _page(jobs, next_token=raw)
        assert [f for f, _ in refused.value.faults] == ["query.nextToken"]
