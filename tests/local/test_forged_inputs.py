"""Attacks by a caller inside the account, below an admin, on quotagov's own inputs.

Each test is one attacker holding one right on the stack's resources
(``lambda:InvokeFunction``, ``sqs:SendMessage``, ``dynamodb:PutItem``), played on the
local runtime: the template's stack in moto (the ``MessageKey`` HMAC key included), the
simulated Batch and the loopback fake Slack. Each checks what was refused, what was
left unchanged (the exact table item, Batch's requests and jobs) and what the audit
log says (the ``UNAUTHENTICATED_INPUT`` finding; the chain still verifies).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from quotagov.governance.provenance import REFUSED_ACTION, UNAUTHENTICATED
from quotagov_tools.local.demo_driver import training_request
from quotagov_tools.local.runtime import LocalRuntime
from quotagov_tools.local.stack import ACCOUNT_ID, REGION
from support.runtime import quiet_runtime

ALICE = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/researcher/alice"
MALLORY = f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/developer/mallory"
THIRTY_DAYS = 30 * 86400


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with quiet_runtime() as runtime:
        yield runtime


def _refusals(rt: LocalRuntime) -> list[dict[str, Any]]:
    return [r for r in rt.audit_records() if r.get("action") == REFUSED_ACTION]


def _batch_calls(rt: LocalRuntime, operation: str) -> list[dict[str, Any]]:
    return [r for op, r in rt.batch.requests if op == operation]


def _sqs_event(rt: LocalRuntime, queue: str, message_id: str, body: str) -> dict[str, Any]:
    """A crafted SQS batch, as ``lambda:InvokeFunction`` lets anyone hand a consumer."""
    return {
        "Records": [
            {
                "messageId": message_id,
                "receiptHandle": f"rh-{message_id}",
                "body": body,
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": "1700000000000",
                    "SenderId": "AROAFORGED:mallory",
                    "ApproximateFirstReceiveTimestamp": "1700000000000",
                },
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": rt.stack.get_att(queue, "Arn"),
                "awsRegion": REGION,
            }
        ]
    }


def _job(name: str) -> dict[str, Any]:
    """A research team's exploratory job (thrash guard: 3 preemptions in 3600 s)."""
    return {
        "team": "research",
        "workloadClass": "exploratory",
        "priorityLevel": "standard",
        "jobName": name,
        "quotaShareName": "background",
        "checkpointIntervalSeconds": 600,
        "clientRequestId": name,
        "serviceRequestPayload": training_request(name, 36000, 600, team="research"),
    }


def _submit(rt: LocalRuntime, name: str) -> str:
    """Alice's job :func:`_job`, submitted and running in Batch."""
    accepted = rt.api("POST", "/jobs", principal=ALICE, body=_job(name))
    assert accepted.status == 202, accepted.json()
    rt.advance(120)
    submission_id = str(accepted.json()["submissionId"])
    view = rt.api("GET", f"/jobs/{submission_id}", principal=ALICE, pump=False).json()
    assert view["state"] == "SUBMITTED", view
    return submission_id


def _dynamodb() -> Any:
    return boto3.client("dynamodb", region_name=REGION)


@pytest.mark.slow  # a whole local runtime
def test_an_audit_message_invoked_on_the_audit_function_is_refused_and_audited(
    rt: LocalRuntime,
) -> None:
    """Right held: lambda:InvokeFunction on AuditFunction. The crafted decision (actor,
    time 30 days back, queuedBy by SenderId) is not appended; the refusal is."""
    before = [r for r in rt.audit_records() if r.get("action") != REFUSED_ACTION]
    forged = {
        "version": 1,
        "decidedAt": rt.clock.now() - THIRTY_DAYS,
        "decision": {
            "action": "EscalationApproved",
            "actor": "U0ERIN",
            "jobQueue": rt.job_queue,
            "resource": "esc-forged",
            "decisionId": "esc-forged:approved",
            "details": {"jobId": "batch-x", "schedulingPriority": 90},
        },
    }
    bare = rt.invoke("AuditFunction", _sqs_event(rt, "AuditQueue", "m-bare", json.dumps(forged)))
    # the same, in an envelope claiming a quotagov sender, with a made-up MAC
    envelope = {
        "sealed": 1,
        "purpose": "audit",
        "sender": "ApplyDecisionsFunction",
        "sentAt": rt.clock.now(),
        "body": json.dumps(forged),
        "mac": "AAAA",
    }
    sealed = rt.invoke(
        "AuditFunction", _sqs_event(rt, "AuditQueue", "m-sealed", json.dumps(envelope))
    )
    assert bare.result == {"batchItemFailures": [{"itemIdentifier": "m-bare"}]}
    assert sealed.result == {"batchItemFailures": [{"itemIdentifier": "m-sealed"}]}
    after = [r for r in rt.audit_records() if r.get("action") != REFUSED_ACTION]
    assert after == before  # nothing of the attacker's was appended
    refused = {r["details"]["id"]: r for r in _refusals(rt)}
    assert refused["m-bare"]["details"]["reason"] == ("sealed: must be 1 (no proof of sender)")
    assert refused["m-sealed"]["details"]["reason"] == (
        "mac: does not verify (not sealed by a quotagov sender)"
    )
    assert refused["m-sealed"]["details"]["claimedSender"] == "ApplyDecisionsFunction"
    assert [f["code"] for f in refused["m-sealed"]["findings"]] == [UNAUTHENTICATED]
    assert "queuedBy" not in refused["m-bare"]
    # delivered again (a failed message comes back): recorded once
    rt.invoke("AuditFunction", _sqs_event(rt, "AuditQueue", "m-bare", json.dumps(forged)))
    assert [r["details"]["id"] for r in _refusals(rt)].count("m-bare") == 1
    assert rt.audit_verify()


@pytest.mark.slow
def test_queued_by_and_time_come_from_the_proof(rt: LocalRuntime) -> None:
    """A decision quotagov's API function queues names that function as its sender,
    and its time is the proof's ``sentAt``."""
    from quotagov.governance.audit.cloudtrail_calls import iso_utc

    sent = rt.clock.now()
    refused = rt.api("POST", "/jobs", principal=MALLORY, body=_job("not-a-member"))
    assert refused.status == 403, refused.json()
    [record] = [
        r
        for r in rt.audit_records()
        if r.get("recordType") == "Decision" and r["actor"]["principalArn"] == MALLORY
    ]
    assert record["queuedBy"] == "JobsApiFunction"
    assert record["time"] == iso_utc(sent)


@pytest.mark.slow
def test_a_hand_off_sent_to_the_apply_queue_is_refused_and_applies_nothing(
    rt: LocalRuntime,
) -> None:
    """Right held: sqs:SendMessage on ApplyQueue (or lambda:InvokeFunction on the
    apply function). An unsealed ``escalation`` hand-off is refused, audited, failed."""
    updates = len(_batch_calls(rt, "UpdateServiceJob"))
    body = json.dumps({"kind": "audit", "decision": {"action": "X"}})
    answer = rt.invoke("ApplyDecisionsFunction", _sqs_event(rt, "ApplyQueue", "m-apply", body))
    assert answer.result == {"batchItemFailures": [{"itemIdentifier": "m-apply"}]}
    rt.pump()
    [refused] = [r for r in _refusals(rt) if r["details"]["id"] == "m-apply"]
    assert refused["queuedBy"] == "ApplyDecisionsFunction"  # who reported it, proven
    assert refused["details"]["reason"] == "sealed: must be 1 (no proof of sender)"
    assert len(_batch_calls(rt, "UpdateServiceJob")) == updates


@pytest.mark.slow
def test_a_hand_written_queued_job_record_is_never_submitted_nor_requeued(
    rt: LocalRuntime,
) -> None:
    """Right held: dynamodb:PutItem on JobsTable, plus lambda:InvokeFunction on the
    submit worker. A QUEUED item in Alice's name is neither submitted (worker) nor
    re-queued (reconciler); it stays exactly as written."""
    table = rt.stack.ref("JobsTable")
    now = int(rt.clock.now())
    item = {
        "pk": {"S": "forged-1"},
        "state": {"S": "QUEUED"},
        "team": {"S": "research"},
        "teamKey": {"S": "research"},
        "workloadClass": {"S": "exploratory"},
        "priorityLevel": {"S": "standard"},
        "jobName": {"S": "forged-1"},
        "principal": {"S": ALICE},
        "quotaShareName": {"S": "background"},
        "schedulingPriority": {"N": "10"},
        "serviceRequestPayload": {
            "S": json.dumps(training_request("forged-1", 3600, 600, team="research"))
        },
        "instanceType": {"S": "ml.g5.xlarge"},
        "instanceCount": {"N": "1"},
        "clientToken": {"S": "forged-1-token"},
        "createdAt": {"N": str(now - 3600)},
        "updatedAt": {"N": str(now - 3600)},
        "version": {"N": "1"},
        "submissionProof": {
            "M": {"v": {"N": "1"}, "sender": {"S": "JobsApiFunction"}, "mac": {"S": "AAAA"}}
        },
    }
    _dynamodb().put_item(TableName=table, Item=item)
    submits = len(_batch_calls(rt, "SubmitServiceJob"))
    body = json.dumps({"submissionId": "forged-1"})
    worker = rt.invoke("SubmitWorkerFunction", _sqs_event(rt, "SubmissionQueue", "m-sub", body))
    assert worker.result == {"batchItemFailures": [{"itemIdentifier": "m-sub"}]}
    rt.advance(600)  # the reconciler's schedule runs (stale after 900 s by default)
    assert any(i.function == "ReconcilerFunction" for i in rt.invocations)
    assert len(_batch_calls(rt, "SubmitServiceJob")) == submits
    stored = _dynamodb().get_item(TableName=table, Key={"pk": {"S": "forged-1"}})["Item"]
    assert stored == item  # not re-queued, not failed, not touched
    reasons = {r["details"]["id"].split("#")[0]: r["details"]["reason"] for r in _refusals(rt)}
    assert reasons["m-sub"] == "sealed: must be 1 (no proof of sender)"
    assert reasons["forged-1"] == (
        "proof: does not verify for queued-submission record 'forged-1' "
        "(written or changed outside quotagov)"
    )
    assert rt.audit_verify()


@pytest.mark.slow
def test_batch_settings_changed_on_a_queued_record_are_never_submitted(
    rt: LocalRuntime,
) -> None:
    """Right held: dynamodb:UpdateItem on JobsTable. Alice's job is accepted and still
    queued; the writer raises its retries and attempt duration past the class's limits
    and adds reserved tags. The worker would not route it again (the policy is
    unchanged), so the proof covers these attributes: the record is refused, audited
    and left as the writer left it; nothing reaches Batch."""
    accepted = rt.api("POST", "/jobs", principal=ALICE, body=_job("raised-1"), pump=False)
    assert accepted.status == 202, accepted.json()
    submission_id = str(accepted.json()["submissionId"])
    table = rt.stack.ref("JobsTable")
    _dynamodb().update_item(
        TableName=table,
        Key={"pk": {"S": submission_id}},
        UpdateExpression="SET retryStrategy = :r, timeoutConfig = :t, tags = :g",
        ExpressionAttributeValues={
            ":r": {"M": {"attempts": {"N": "10"}}},
            ":t": {"M": {"attemptDurationSeconds": {"N": "99999999"}}},
            ":g": {"M": {"quotagov:owner": {"S": "mallory"}}},
        },
    )
    changed = _dynamodb().get_item(TableName=table, Key={"pk": {"S": submission_id}})["Item"]
    submits = len(_batch_calls(rt, "SubmitServiceJob"))
    rt.advance(120)  # the worker receives the submission's message
    assert len(_batch_calls(rt, "SubmitServiceJob")) == submits
    stored = _dynamodb().get_item(TableName=table, Key={"pk": {"S": submission_id}})["Item"]
    assert stored == changed and stored["state"] == {"S": "QUEUED"}
    reasons = {r["details"]["id"].split("#")[0]: r["details"]["reason"] for r in _refusals(rt)}
    assert reasons[submission_id] == (
        f"proof: does not verify for queued-submission record '{submission_id}' "
        "(written or changed outside quotagov)"
    )
    assert rt.audit_verify()


@pytest.mark.slow
def test_a_hand_written_apply_failed_escalation_is_not_applied_by_the_retry(
    rt: LocalRuntime,
) -> None:
    """Right held: dynamodb:PutItem on EscalationsTable. An APPLY_FAILED item naming a
    real approver (U0ERIN) for Alice's running job is left as written; the job's
    priority in Batch is unchanged; the refusal is audited."""
    submission_id = _submit(rt, "esc-target")
    view = rt.api("GET", f"/jobs/{submission_id}", principal=ALICE, pump=False).json()
    batch_job_id = view["batchJobId"]
    priority = rt.batch.describe_service_job(jobId=batch_job_id)["schedulingPriority"]
    now = rt.clock.now()
    item = {
        "pk": {"S": "esc-forged-1"},
        "jobId": {"S": submission_id},
        "batchJobId": {"S": batch_job_id},
        "jobName": {"S": "esc-target"},
        "jobQueue": {"S": rt.job_queue},
        "team": {"S": "research"},
        "quotaShareName": {"S": "background"},
        "requester": {"S": ALICE},
        "reason": {"S": "deadline"},
        "currentPriority": {"N": str(priority)},
        "requestedLevel": {"S": "urgent"},
        "requestedPriority": {"N": "90"},
        "status": {"S": "APPLY_FAILED"},
        "createdAt": {"N": str(now - 600)},
        "expiresAt": {"N": str(now + 86400)},
        "direct": {"BOOL": False},
        "decidedBy": {"S": "U0ERIN"},
        "decidedAt": {"N": str(now - 500)},
        "applyAttempts": {"N": "1"},
        "error": {"S": "ThrottlingException"},
    }
    table = rt.stack.ref("EscalationsTable")
    _dynamodb().put_item(TableName=table, Item=item)
    rt.advance(600)  # the apply function's 5-minute retry runs
    assert any(
        i.function == "ApplyDecisionsFunction" and i.trigger.startswith("schedule")
        for i in rt.invocations
    )
    stored = _dynamodb().get_item(TableName=table, Key={"pk": {"S": "esc-forged-1"}})["Item"]
    assert stored == item
    assert not [r for r in _batch_calls(rt, "UpdateServiceJob") if r["jobId"] == batch_job_id]
    assert rt.batch.describe_service_job(jobId=batch_job_id)["schedulingPriority"] == priority
    [refused] = [r for r in _refusals(rt) if r["details"]["id"].startswith("esc-forged-1#")]
    assert refused["details"]["reason"] == (
        "proof: missing on escalation-decision record 'esc-forged-1'"
    )
    assert rt.audit_verify()


def _state_event(rt: LocalRuntime, batch_job_id: str, **detail: Any) -> dict[str, Any]:
    return {
        "version": "0",
        "id": f"forged-{detail.get('status')}",
        "detail-type": "Batch Service Job State Change",
        "source": "aws.batch",
        "account": ACCOUNT_ID,
        "time": "2026-05-04T10:00:00Z",
        "region": REGION,
        "resources": [],
        "detail": {
            "jobId": batch_job_id,
            "jobName": "thrash-target",
            "jobQueue": rt.job_queue,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "createdAt": 1,
            **detail,
        },
    }


def _preempted(i: int, stop_ms: int) -> dict[str, Any]:
    arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT_ID}:training-job/forged-{i}"
    return {
        "serviceResourceId": {"name": "TrainingJobArn", "value": arn},
        "startedAt": stop_ms - 60_000,
        "stoppedAt": stop_ms,
        "statusReason": "preempted",
    }


@pytest.mark.slow
def test_forged_state_events_terminate_nothing_and_submit_no_successor(
    rt: LocalRuntime,
) -> None:
    """Right held: lambda:InvokeFunction on JobStateFunction. "3 preemptions" and
    "FAILED, retries exhausted" events for a healthy running job: Batch says RUNNING,
    never preempted, so no TerminateServiceJob and no successor."""
    submission_id = _submit(rt, "thrash-target")
    view = rt.api("GET", f"/jobs/{submission_id}", principal=ALICE, pump=False).json()
    batch_job_id = view["batchJobId"]
    assert rt.batch.describe_service_job(jobId=batch_job_id)["status"] == "RUNNING"
    terminates = len(_batch_calls(rt, "TerminateServiceJob"))
    submits = len(_batch_calls(rt, "SubmitServiceJob"))
    stop = int(rt.clock.now() * 1000)
    attempts = [_preempted(i, stop - i * 600_000) for i in range(3)]
    summary = {"preemptedAttemptCount": 3, "recentPreemptedAttempts": attempts}
    thrash = _state_event(
        rt, batch_job_id, status="RUNNABLE", attempts=attempts, preemptionSummary=summary
    )
    failed = _state_event(
        rt,
        batch_job_id,
        status="FAILED",
        statusReason="preempted, retries exhausted",
        attempts=attempts,
        preemptionSummary=summary,
    )
    for event in (thrash, failed):
        rt.invoke("JobStateFunction", event)
    rt.pump()
    assert len(_batch_calls(rt, "TerminateServiceJob")) == terminates
    assert len(_batch_calls(rt, "SubmitServiceJob")) == submits
    assert rt.batch.describe_service_job(jobId=batch_job_id)["status"] == "RUNNING"
    after = rt.api("GET", f"/jobs/{submission_id}", principal=ALICE, pump=False).json()
    assert "disposition" not in after or after["disposition"] is None
