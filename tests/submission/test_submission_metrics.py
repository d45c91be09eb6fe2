"""``POST /jobs`` metrics: accepted by team and quota share, refused by team (EMF)."""

from __future__ import annotations

from typing import Any

import pytest

from job_state.lambda_support import emf_metrics
from support.principals import ALICE

from .api import post_jobs
from .conftest import Stack, submission
from .sqs_driver import drain


def test_accepted_and_refused_submissions_are_counted_by_team_and_share(
    stack: Stack, batch: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _ = post_jobs(submission(clientRequestId="m-1"), ALICE)
    assert status == 202
    status, body = post_jobs(submission(clientRequestId="m-2", workloadClass="release"), ALICE)
    assert status == 422, body

    metrics = emf_metrics(capsys.readouterr().out)
    accepted = [(v, d) for n, v, d in metrics if n == "SubmissionsAccepted"]
    assert accepted == [
        (1.0, {"service": "quotagov", "team": "research", "quotaShareName": "background"})
    ]
    refused = [(v, d) for n, v, d in metrics if n == "SubmissionsRefusedByPolicy"]
    assert refused == [(1.0, {"service": "quotagov", "team": "research"})]

    drain(stack)  # the worker submits the accepted one

    by_team = [d for n, _, d in emf_metrics(capsys.readouterr().out) if n == "SubmissionsByTeam"]
    assert by_team == [
        {
            "service": "quotagov",
            "team": "research",
            "quotaShareName": "background",
            "state": "SUBMITTED",
        }
    ]
