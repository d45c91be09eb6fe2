"""``quotagov report escalations``: counts per team and requester, budget used,
preemptions and lost GPU-hours per team, read from moto tables."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from quotagov import composition
from quotagov.adapters.dynamodb_escalations import EscalationsTable, create_escalations_table
from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository, jobs_table_definition
from quotagov.clock import ManualClock
from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.reports.escalations import escalation_report
from quotagov_tools.cli import main
from support.aws import fake_aws_env, no_aws_credentials
from support.policies import example_policy
from support.principals import ALICE, BOB, DAVE

ROOT = Path(__file__).resolve().parents[2]
POLICY_FILE = ROOT / "src" / "quotagov" / "examples" / "policy.yaml"
WEEK = 604800
NOW = 100 * WEEK + 3 * 86400  # inside a budget period aligned to the epoch
SINCE = NOW - 86400


def _escalation(
    n: int, who: str, team: str, status: EscalationStatus, at: float, **kw: Any
) -> Escalation:
    return Escalation(
        escalation_id=f"esc-{n}",
        job_id=f"sub-{n}",
        batch_job_id=f"b-{n}",
        job_name=f"job-{n}",
        job_queue="q",
        team=team,
        quota_share_name="background",
        requester=who,
        reason="r",
        current_priority=10,
        requested_level="high",
        requested_priority=50,
        status=status,
        created_at=at,
        expires_at=at + 3600,
        **kw,
    )


ESCALATIONS = [
    _escalation(1, ALICE, "research", EscalationStatus.APPLIED, NOW - 3600),
    _escalation(2, ALICE, "research", EscalationStatus.DENIED, NOW - 7200),
    _escalation(3, BOB, "research", EscalationStatus.EXPIRED, NOW - 60),
    _escalation(4, BOB, "research", EscalationStatus.APPLIED, NOW - 50, direct=True),
    _escalation(5, ALICE, "research", EscalationStatus.APPLIED, NOW - 2 * 86400),  # before
    _escalation(6, DAVE, "applied", EscalationStatus.PENDING, NOW - 10),
]


def _job(
    pk: str, team: str, instance_type: str, count: int, preemptions: list[dict[str, Any]]
) -> JobRecord:
    return JobRecord(
        pk=pk,
        state=SubmissionState.SUBMITTED,
        team=team,
        jobName=pk,
        instanceType=instance_type,
        instanceCount=count,
        createdAt=int(SINCE - 5000),
        jobState={"status": "RUNNING", "preemptions": preemptions},
    )


def _p(stopped: float, lost: float) -> dict[str, Any]:
    return {
        "stoppedAt": int(stopped * 1000),
        "lostWorkSeconds": lost / 2,
        "lostInstanceSeconds": lost,
    }


JOBS = [
    # 2 x ml.g5.12xlarge (4 GPUs each): 3600 instance-s lost in the window = 4 GPU-hours
    _job("r-1", "research", "ml.g5.12xlarge", 2, [_p(NOW - 100, 3600), _p(SINCE - 10, 7200)]),
    _job("a-1", "applied", "ml.trn1.32xlarge", 1, [_p(NOW - 100, 1800)]),
]


def test_the_report_counts_the_window_and_the_budget_period() -> None:
    report = escalation_report(ESCALATIONS, JOBS, example_policy(), since=SINCE, until=NOW)
    research = report["teams"]["research"]
    assert {k: research[k] for k in ("requests", "approvals", "denials", "expired")} == {
        "requests": 4,
        "approvals": 2,
        "denials": 1,
        "expired": 1,
    }
    # budget: this week's requests that needed approval (the direct one does not count;
    # the one two days ago is in the same week, so it does)
    assert (research["budgetUsed"], research["budget"]) == (4, 3)
    assert research["budgetPeriodStart"] == 100 * WEEK
    assert (research["preemptions"], research["lostInstanceHours"], research["lostGpuHours"]) == (
        1,
        1.0,
        4.0,
    )
    applied = report["teams"]["applied"]
    assert (applied["pending"], applied["preemptions"]) == (1, 1)
    assert applied["lostGpuHours"] is None and applied["unknownGpuTypes"] == ["ml.trn1.32xlarge"]
    assert report["requesters"][ALICE] == {
        "team": "research",
        "requests": 2,
        "approvals": 1,
        "denials": 1,
        "expired": 0,
        "pending": 0,
    }
    assert report["requesters"][BOB]["approvals"] == 1
    with pytest.raises(ValueError, match="--until"):
        escalation_report([], [], example_policy(), since=NOW, until=NOW)


@pytest.fixture
def tables(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    fake_aws_env(monkeypatch)
    with mock_aws():
        client = boto3.client("dynamodb")
        client.create_table(**jobs_table_definition("jobs"))
        create_escalations_table(client, "escalations")
        table = EscalationsTable(client, "escalations")
        for escalation in ESCALATIONS:
            table.put_new(escalation)
        repo = DynamoDBJobsRepository("jobs", ManualClock(NOW), client)
        for job in JOBS:
            repo.create_if_absent(job)
        try:
            yield
        finally:
            composition.reset()


def test_the_command_reads_the_tables(tables: None, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["report", "escalations", "--since", str(SINCE), "--until", str(NOW)]
    tables_args = ["--escalations-table", "escalations", "--jobs-table", "jobs"]
    code = main([*args, *tables_args, "--policy-file", str(POLICY_FILE), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads(
        json.dumps(escalation_report(ESCALATIONS, JOBS, example_policy(), since=SINCE, until=NOW))
    )
    assert main([*args, *tables_args, "--policy-file", str(POLICY_FILE)]) == 0
    text = capsys.readouterr().out
    assert "research" in text and ALICE in text


def test_unreadable_tables_or_bad_times_exit_2(
    tables: None, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["report", "escalations", "--policy-file", str(POLICY_FILE)]
    assert (
        main(
            [
                *base,
                "--since",
                "yesterday",
                "--escalations-table",
                "escalations",
                "--jobs-table",
                "jobs",
            ]
        )
        == 2
    )
    assert "--since" in capsys.readouterr().err
    assert (
        main([*base, "--since", str(SINCE), "--escalations-table", "nope", "--jobs-table", "jobs"])
        == 2
    )
    assert "ResourceNotFound" in capsys.readouterr().err


def test_the_readme_command_without_credentials_exits_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a new user's machine: no credentials, so SSM (read first, for the policy) fails
    no_aws_credentials(monkeypatch)
    try:
        code = main(
            [
                "report",
                "escalations",
                "--since",
                "2026-05-01",
                "--escalations-table",
                "E",
                "--jobs-table",
                "J",
                "--policy-parameter",
                "/quotagov/policy",
                "--region",
                "eu-west-1",
            ]
        )
    finally:
        composition.reset()
    assert code == 2
    err = capsys.readouterr().err
    assert err == (
        "quotagov report escalations: policy parameter /quotagov/policy: cannot read: "
        "Unable to locate credentials\n"
    )


def test_a_missing_policy_parameter_exits_2_naming_it(
    tables: None, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["report", "escalations", "--since", str(SINCE), "--escalations-table", "escalations"]
    code = main([*args, "--jobs-table", "jobs", "--policy-parameter", "/quotagov/nope"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("quotagov report escalations: policy parameter /quotagov/nope: ")
    assert "ParameterNotFound" in err and err.count("\n") == 1
