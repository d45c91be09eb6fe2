"""A submission Batch refuses: FAILED with its reason, and one DM to its owner, in AWS too.

In the template the submit worker holds no Slack secret, so it cannot tell the owner
itself; it sends ``{"kind": "submission-failed"}`` to ``OwnerNoticeQueue`` and
``ApplyDecisionsFunction`` (which holds the secret) DMs the owner from the stored
record. The embedded runtime plays it with the template's queues in moto, the simulated
Batch and the loopback fake Slack; the submission's message is delivered to the worker
twice, and the notice is delivered twice to the apply function.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from quotagov_tools.local.demo_driver import training_request
from quotagov_tools.local.lambda_events import sqs_record
from quotagov_tools.local.runtime import LocalRuntime
from quotagov_tools.local.stack import ACCOUNT_ID

ALICE = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/researcher/alice"
REFUSAL = "Quota share background is DISABLED"
REASON = f"Batch refused SubmitServiceJob: ClientException: {REFUSAL}"


@pytest.fixture
def runtime() -> Iterator[LocalRuntime]:
    with LocalRuntime() as started:
        yield started


def _receive(rt: LocalRuntime, queue: str) -> list[dict[str, Any]]:
    """Every message now on ``queue`` (received and left invisible, as a poller would)."""
    found: list[dict[str, Any]] = []
    while True:
        batch = rt.sqs.receive_message(
            QueueUrl=rt.stack.ref(queue),
            MaxNumberOfMessages=10,
            VisibilityTimeout=600,
            AttributeNames=["All"],
        ).get("Messages", [])
        if not batch:
            return found
        found.extend(batch)


def _dms(rt: LocalRuntime, user: str = "U0ALICE") -> list[Any]:
    return [m for m in rt.slack.messages if m.channel == user]


@pytest.mark.slow  # a whole local runtime (moto, fake Slack server)
def test_a_submission_batch_refuses_fails_with_its_reason_and_one_dm(
    runtime: LocalRuntime,
) -> None:
    rt = runtime
    rt.batch.fail_next("SubmitServiceJob", code="ClientException", message=REFUSAL)
    body = {
        "team": "research",
        "workloadClass": "exploratory",
        "priorityLevel": "standard",
        "jobName": "ablation-7",
        "quotaShareName": "background",
        "checkpointIntervalSeconds": 600,
        "clientRequestId": "ablation-7",
        "serviceRequestPayload": training_request("ablation-7", 3600, 600, team="research"),
    }
    accepted = rt.api("POST", "/jobs", principal=ALICE, body=body, pump=False)
    assert accepted.status == 202, accepted.json()
    submission_id = accepted.json()["submissionId"]

    # The worker gets the submission's message, then the same message again (SQS
    # delivers at least once): Batch refuses it once, the record says why.
    [message] = _receive(rt, "SubmissionQueue")
    arn = rt.stack.get_att("SubmissionQueue", "Arn")
    first = rt.invoke("SubmitWorkerFunction", {"Records": [sqs_record(message, arn)]}, "sqs")
    again = dict(message, Attributes={**message["Attributes"], "ApproximateReceiveCount": "2"})
    second = rt.invoke("SubmitWorkerFunction", {"Records": [sqs_record(again, arn)]}, "sqs")
    assert (first.result, second.result) == ({"batchItemFailures": []},) * 2
    submit_calls = [r for op, r in rt.batch.requests if op == "SubmitServiceJob"]
    assert len(submit_calls) == 1

    view = rt.api("GET", f"/jobs/{submission_id}", principal=ALICE, pump=False).json()
    assert (view["state"], view["reasons"]) == ("FAILED", [REASON])

    # The worker told nobody itself (it has no Slack): one notice waits for the
    # function that has; a duplicate of it is delivered too.
    assert _dms(rt) == []
    [notice] = _receive(rt, "OwnerNoticeQueue")
    sealed = json.loads(notice["Body"])  # sealed by the worker (proof of sender)
    assert sealed["sender"] == "SubmitWorkerFunction"
    assert json.loads(sealed["body"]) == {
        "kind": "submission-failed",
        "submissionId": submission_id,
    }
    queue_url = rt.stack.ref("OwnerNoticeQueue")
    rt.sqs.change_message_visibility(
        QueueUrl=queue_url, ReceiptHandle=notice["ReceiptHandle"], VisibilityTimeout=0
    )
    rt.sqs.send_message(QueueUrl=queue_url, MessageBody=notice["Body"])
    rt.pump()

    told = [
        i
        for i in rt.invocations
        if i.function == "ApplyDecisionsFunction" and i.trigger == "sqs OwnerNoticeQueue"
    ]
    handled = sum(len(i.event["Records"]) for i in told)
    assert handled == 2 and all(i.result == {"batchItemFailures": []} for i in told)
    [dm] = _dms(rt)
    assert dm.text == f"Your submission ablation-7 was refused by Batch or the policy: {REASON}"
    [entry] = [n for n in rt.notifications() if n["submissionId"] == submission_id]
    assert (entry["kind"], entry["delivery"], entry["recipient"]) == (
        "refused",
        "posted",
        "U0ALICE",
    )
    assert _receive(rt, "OwnerNoticeQueue") == []
    assert _receive(rt, "OwnerNoticeDeadLetterQueue") == []
