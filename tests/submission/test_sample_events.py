"""The sample events under events/ run through the handlers (as `sam local invoke` would)."""

from __future__ import annotations

import json
from typing import Any

from quotagov.governance.model.job import SubmissionState
from quotagov.handlers import jobs_api, submit_worker
from support.lambda_context import LambdaContext
from support.principals import ALICE, BOB

from .conftest import Stack, load_event


def test_submit_sample_is_accepted_and_get_sample_shape_resolves(stack: Stack) -> None:
    reply = jobs_api.handler(load_event("jobs_api-submit"), LambdaContext())
    assert reply["statusCode"] == 202
    body = json.loads(reply["body"])
    record = stack.jobs.get(body["submissionId"])
    assert record is not None and record.principal == ALICE

    event = load_event("jobs_api-get")
    event["path"] = f"/jobs/{record.pk}"
    event["pathParameters"] = {"jobId": record.pk}
    reply = jobs_api.handler(event, LambdaContext())
    assert reply["statusCode"] == 200
    assert json.loads(reply["body"])["state"] == "QUEUED"


def test_worker_batch_sample(stack: Stack, batch: Any) -> None:
    """A reference to no stored submission and a whole submission sent straight to the
    queue claiming bob. As the sample has them (no proof of sender): both refused by the
    proof check, audited ``UnauthenticatedInputRefused``, left for the DLQ, nothing
    stored. Sealed by a quotagov sender: both REFUSED and audited, nothing sent to Batch."""
    from quotagov.governance.provenance import REFUSED_ACTION, SUBMISSION_QUEUE
    from quotagov.handlers.submission_messages import DIRECT_SUBMISSION_FAULT
    from support.compose import seal

    event = load_event("submit_worker-batch")
    ids = [r["messageId"] for r in event["Records"]]
    reply = submit_worker.handler(event, LambdaContext())
    assert reply == {"batchItemFailures": [{"itemIdentifier": i} for i in ids]}
    assert stack.dynamodb.scan(TableName="quotagov-jobs")["Items"] == []
    assert [(a.action, a.details["id"]) for a in stack.audit.decisions] == [
        (REFUSED_ACTION, i) for i in ids
    ]
    assert [a.details["reason"] for a in stack.audit.decisions] == [
        "sealed: must be 1 (no proof of sender)"
    ] * 2
    stack.audit.decisions.clear()

    for record in event["Records"]:
        record["body"] = seal(record["body"], SUBMISSION_QUEUE)
    reply = submit_worker.handler(event, LambdaContext())
    assert reply == {"batchItemFailures": []}
    records = [
        stack.jobs.get(i["pk"]["S"])
        for i in stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]
    ]
    assert sorted(r.reasons[0] for r in records if r is not None) == sorted(
        [
            "submissionId: no stored submission 8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f; "
            "nothing was submitted",
            DIRECT_SUBMISSION_FAULT,
        ]
    )
    assert all(r is not None and r.state is SubmissionState.REFUSED for r in records)
    direct = next(r for r in records if r is not None and r.team)
    assert direct.principal == "" and direct.claimedPrincipal == BOB
    assert [op for op, _ in batch.requests if op == "SubmitServiceJob"] == []
    assert [a.action for a in stack.audit.decisions] == ["SubmissionRefused"] * 2
