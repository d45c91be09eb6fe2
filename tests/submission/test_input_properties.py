"""Property: mutated ``POST /jobs`` requests never give a 5xx or an unhandled
exception, and never leave a half-written record.

After every example the store is checked whole: each item of the jobs table reads back
as a :class:`~quotagov.governance.model.job.JobRecord`; an accepted (``QUEUED``) record is
routed (share, priority, client token) and its id is on the submission queue; a
``REFUSED`` one carries its reasons.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from quotagov.adapters.dynamodb_notifications import NOTIFY_PREFIX
from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.provenance import SUBMISSION_QUEUE
from support.compose import opened
from support.mutations import bodies

from .api import post_jobs
from .conftest import Stack, submission

BASE = submission(clientRequestId="prop-1", quotaShareName="background")
CONTENT_TYPES = st.sampled_from(
    ["application/json"] * 6
    + ["application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", ""]
)


@st.composite
def policy_variants(draw: st.DrawFn) -> str:
    """Well-formed submissions the policy answers differently: other teams, classes,
    levels, shares, counts, and reused or new ``clientRequestId`` values."""
    body = submission(
        team=draw(st.sampled_from(["research", "research", "applied", "release", "nosuch"])),
        workloadClass=draw(st.sampled_from(["exploratory", "exploratory", "scheduled", "release"])),
        priorityLevel=draw(st.sampled_from(["standard", "standard", "high", "urgent", "low"])),
        quotaShareName=draw(st.sampled_from([None, "background", "medium", "reserved", "gpu"])),
        clientRequestId=draw(st.sampled_from([None, "prop-1", "prop-2", "prop-3"])),
    )
    payload = body["serviceRequestPayload"]
    payload["ResourceConfig"]["InstanceCount"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        del payload["CheckpointConfig"]
    return json.dumps(body)


ANSWERS = {202, 400, 403, 409, 415, 422}


def _queued_ids(stack: Stack) -> list[str]:
    ids = []
    while True:
        got = stack.sqs.receive_message(
            QueueUrl=stack.queue_url, MaxNumberOfMessages=10, VisibilityTimeout=0
        ).get("Messages", [])
        if not got:
            return ids
        for message in got:
            ids.append(opened(message["Body"], SUBMISSION_QUEUE)["submissionId"])
            stack.sqs.delete_message(
                QueueUrl=stack.queue_url, ReceiptHandle=message["ReceiptHandle"]
            )


def _check_store(stack: Stack, queued: dict[str, int]) -> None:
    for submission_id in _queued_ids(stack):
        queued[submission_id] = queued.get(submission_id, 0) + 1
    scanned = stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]
    # the owner's refusal DM leaves its once-per-event marker beside the record
    items = [i for i in scanned if not i["pk"]["S"].startswith(NOTIFY_PREFIX)]
    assert all(i["pk"]["S"][len(NOTIFY_PREFIX) :] in {j["pk"]["S"] for j in items}
               for i in scanned if i["pk"]["S"].startswith(NOTIFY_PREFIX))  # fmt: skip
    for item in items:
        record = stack.jobs.get(item["pk"]["S"])
        assert isinstance(record, JobRecord)
        if record.state is SubmissionState.QUEUED:
            assert record.quotaShareName and record.schedulingPriority is not None
            assert record.clientToken and record.serviceRequestPayload
            # a retry of the same request sends it again (a crash between store and
            # send); the worker submits it once (clientToken, Idempotency)
            assert queued.get(record.pk, 0) >= 1, record.pk
        elif record.state is SubmissionState.REFUSED:
            assert record.reasons
        else:  # nothing else comes from the API without a queue fault
            raise AssertionError(f"{record.pk} is {record.state}")
    assert set(queued) <= {i["pk"]["S"] for i in items}


@pytest.mark.slow
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=st.one_of(policy_variants(), policy_variants(), bodies(BASE)), content_type=CONTENT_TYPES
)
def test_mutated_submissions_are_answered_and_leave_whole_records(
    stack: Stack, body: str, content_type: str
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    status, reply = post_jobs(None, raw=body, headers=headers)
    assert status in ANSWERS, (status, reply)
    event(f"status {status}")
    assert isinstance(reply, dict)
    if status in (400, 415):
        assert reply["faults"] and all(set(f) == {"path", "fault"} for f in reply["faults"])
    queued: dict[str, int] = stack.extra.setdefault("queued", {})
    _check_store(stack, queued)
