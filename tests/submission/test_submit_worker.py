"""The submit worker through its handler: moto DynamoDB/SQS/SSM and the simulated Batch."""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotagov.governance.model.job import FailureKind, SubmissionState
from quotagov.governance.provenance import NOTICE_QUEUE, SUBMISSION_QUEUE
from quotagov.governance.submission import submission_id_for
from quotagov.handlers.submission_messages import DIRECT_SUBMISSION_FAULT
from support.compose import opened, seal
from support.principals import ALICE, BOB, DAVE, FRANK

from .api import post_jobs
from .conftest import Stack, submission, training_payload
from .sqs_driver import drain, queue_depth, send_direct


def _service_jobs(batch: Any) -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = []
    for status in ("SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"):
        page = batch.list_service_jobs(jobQueue="ml-gov-queue", jobStatus=status, maxResults=100)
        jobs += page["jobSummaryList"]
        while page.get("nextToken"):
            page = batch.list_service_jobs(
                jobQueue="ml-gov-queue",
                jobStatus=status,
                maxResults=100,
                nextToken=page["nextToken"],
            )
            jobs += page["jobSummaryList"]
    return jobs


def _submits(batch: Any) -> list[dict[str, Any]]:
    return [request for op, request in batch.requests if op == "SubmitServiceJob"]


def _metric(emf: list[dict[str, Any]], name: str) -> float:
    """Sum of a metric over CloudWatch EMF blobs (values are a number or a list)."""
    total = 0.0
    for blob in emf:
        value = blob.get(name, 0)
        total += sum(value) if isinstance(value, list) else value
    return total


def _release_job() -> dict[str, Any]:
    body = submission(
        team="release",
        workloadClass="release",
        priorityLevel="standard",
        checkpointIntervalSeconds=None,
        serviceRequestPayload=training_payload("release-build-3"),
    )
    del body["serviceRequestPayload"]["CheckpointConfig"]
    return body


def _disable_share_in_batch(batch: Any, name: str) -> None:
    shares = batch.list_quota_shares(jobQueue="ml-gov-queue")["quotaShares"]
    arn = next(s["quotaShareArn"] for s in shares if s["quotaShareName"] == name)
    batch.update_quota_share(quotaShareArn=arn, state="DISABLED")


def test_valid_submission_becomes_a_service_job_in_the_routed_share(
    stack: Stack, batch: Any
) -> None:
    status, reply = post_jobs(submission(clientRequestId="sweep-17"))
    assert status == 202
    report = drain(stack)
    assert report.failures == []

    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.state is SubmissionState.SUBMITTED
    job = batch.describe_service_job(jobId=record.batchJobId)
    assert job["quotaShareName"] == "background"
    assert job["schedulingPriority"] == 10
    assert job["preemptionConfiguration"] == {"preemptionRetriesBeforeTermination": 1}
    assert job["jobName"] == "resnet-sweep-017"
    assert job["tags"]["quotagov:submissionId"] == record.pk
    assert json.loads(job["serviceRequestPayload"]) == json.loads(record.serviceRequestPayload)
    assert record.batchJobArn == job["jobArn"]
    assert record.quotaShareName == "background" and record.schedulingPriority == 10
    submits = [r for op, r in batch.requests if op == "SubmitServiceJob"]
    assert len(submits) == 1
    assert submits[0]["clientToken"] == record.clientToken


def test_scheduled_class_without_retry_limit_goes_to_medium(stack: Stack, batch: Any) -> None:
    body = submission(
        team="applied",
        workloadClass="scheduled",
        priorityLevel="low",
        checkpointIntervalSeconds=None,
        serviceRequestPayload=training_payload("nightly-7", CheckpointConfig=None),
    )
    body["serviceRequestPayload"].pop("CheckpointConfig")
    status, reply = post_jobs(body, DAVE)
    assert status == 202, reply
    drain(stack)
    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.batchJobId
    job = batch.describe_service_job(jobId=record.batchJobId)
    assert job["quotaShareName"] == "medium"
    assert job["schedulingPriority"] == 0
    assert "preemptionConfiguration" not in job or not job["preemptionConfiguration"]


def test_ten_messages_with_two_poison_ones(
    stack: Stack, batch: Any, capsys: Any, caplog: Any
) -> None:
    """Eight become service jobs; a direct (unreferenced) message is refused and a job
    Batch refuses ends FAILED; neither loops."""
    good = []
    for i in range(8):
        status, reply = post_jobs(
            submission(
                clientRequestId=f"run-{i}", serviceRequestPayload=training_payload(f"run-{i}")
            ),
            ALICE if i % 2 else BOB,
        )
        assert status == 202, reply
        good.append(reply["submissionId"])
    # sealed: the worker refuses a whole submission even from a quotagov sender
    malformed = send_direct(
        stack, {"team": "research", "workloadClass": "exploratory"}, ALICE, sealed=True
    )
    # Accepted by the policy, but someone disabled the share in Batch: ClientException.
    status, reply = post_jobs(_release_job(), FRANK)
    assert status == 202, reply
    _disable_share_in_batch(batch, "reserved")
    capsys.readouterr()

    report = drain(stack)

    assert report.invocations == 1 and report.replies == [{"batchItemFailures": []}]
    assert report.processed == 10
    assert queue_depth(stack) == (0, 0) and queue_depth(stack, stack.dlq_url) == (0, 0)
    items = stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]
    items = [i for i in items if not i["pk"]["S"].startswith("NOTIFY#")]  # owner DMs' log
    states = sorted(i["state"]["S"] for i in items)
    assert states == ["FAILED", "REFUSED"] + ["SUBMITTED"] * 8
    assert len(_service_jobs(batch)) == 8
    bad = stack.jobs.get(reply["submissionId"])
    assert bad is not None and bad.state is SubmissionState.FAILED
    assert bad.failure is not None and bad.failure.kind is FailureKind.NOT_SUBMITTABLE
    assert len(bad.reasons) == 1
    assert bad.reasons[0].startswith("Batch refused SubmitServiceJob: ClientException: ")
    assert "reserved" in bad.reasons[0]
    refused = next(
        stack.jobs.get(i["pk"]["S"]) for i in items if i.get("messageId", {}).get("S") == malformed
    )
    assert refused is not None and refused.state is SubmissionState.REFUSED
    assert refused.reasons == [DIRECT_SUBMISSION_FAULT]
    assert refused.principal == "" and refused.claimedPrincipal == ALICE
    out = capsys.readouterr().out
    emf = [json.loads(line) for line in out.splitlines() if '"_aws"' in line]
    assert _metric(emf, "SubmissionsFailed") == 1
    assert _metric(emf, "SubmissionsRefused") == 1
    assert _metric(emf, "SubmissionsSubmitted") == 8
    warned = [r for r in caplog.records if r.getMessage() == "submission not sent to Batch"]
    assert sorted(getattr(w, "submissionId", "") for w in warned) == sorted(
        [refused.pk, reply["submissionId"]]
    )
    assert sorted(a.action for a in stack.audit.decisions) == [
        "SubmissionFailed",
        "SubmissionRefused",
    ]


def test_deeply_nested_message_is_recorded_refused_and_acknowledged(
    stack: Stack, batch: Any
) -> None:
    """A 2 KB body nested 1000 levels deep is poison: REFUSED once, deleted, no DLQ.
    Sealed, so the decoder behind the proof check is what meets it."""
    body = '{"team":"research","x":' + "[" * 1000 + "]" * 1000 + "}"
    message_id = stack.sqs.send_message(
        QueueUrl=stack.queue_url,
        MessageBody=seal(body, SUBMISSION_QUEUE),
        MessageAttributes={"principal": {"DataType": "String", "StringValue": ALICE}},
    )["MessageId"]

    report = drain(stack)

    assert report.failures == [] and report.processed == 1 and report.invocations == 1
    assert queue_depth(stack) == (0, 0) and queue_depth(stack, stack.dlq_url) == (0, 0)
    items = stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]
    assert [(i["state"]["S"], i["messageId"]["S"]) for i in items] == [("REFUSED", message_id)]
    record = stack.jobs.get(items[0]["pk"]["S"])
    assert record is not None
    assert record.reasons == ["(body): nested too deeply to decode"]
    assert record.principal == "" and record.claimedPrincipal == ALICE
    assert _service_jobs(batch) == []
    assert [a.action for a in stack.audit.decisions] == ["SubmissionRefused"]


def test_same_message_delivered_three_times_makes_one_service_job(stack: Stack, batch: Any) -> None:
    from quotagov.handlers import submit_worker
    from support.lambda_context import LambdaContext

    from .sqs_driver import lambda_record

    assert post_jobs(submission())[0] == 202
    message = stack.sqs.receive_message(
        QueueUrl=stack.queue_url, AttributeNames=["All"], MessageAttributeNames=["All"]
    )["Messages"][0]
    record = lambda_record(message, "arn:aws:sqs:eu-west-1:123456789012:quotagov-submissions")
    replies = []
    for receive in (1, 2, 3):
        record["attributes"]["ApproximateReceiveCount"] = str(receive)
        replies.append(submit_worker.handler({"Records": [record]}, LambdaContext()))
    assert replies == [{"batchItemFailures": []}] * 3
    assert len(_service_jobs(batch)) == 1
    assert [op for op, _ in batch.requests].count("SubmitServiceJob") == 1
    items = stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]
    assert len(items) == 1 and items[0]["state"]["S"] == "SUBMITTED"
    assert items[0]["version"]["N"] == "2"


def test_redelivery_after_a_lost_reply_finds_the_job_instead_of_submitting_again(
    stack: Stack, batch: Any
) -> None:
    """Batch accepted the job but the worker died before recording it; SQS redelivers."""
    from quotagov.governance.submission import service_job_request

    status, reply = post_jobs(submission())
    record = stack.jobs.get(reply["submissionId"])
    assert status == 202 and record is not None
    first = stack.sqs.receive_message(QueueUrl=stack.queue_url)["Messages"][0]
    accepted = batch.submit_service_job(**service_job_request(record, "ml-gov-queue"))
    stack.sqs.change_message_visibility(
        QueueUrl=stack.queue_url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0
    )

    report = drain(stack)

    assert report.failures == []
    after = stack.jobs.get(reply["submissionId"])
    assert after is not None and after.state is SubmissionState.SUBMITTED
    assert after.batchJobId == accepted["jobId"]
    assert [op for op, _ in batch.requests].count("SubmitServiceJob") == 1
    assert len(_service_jobs(batch)) == 1


def test_throttled_submit_is_retried_and_succeeds(stack: Stack, batch: Any) -> None:
    status, reply = post_jobs(submission())
    assert status == 202
    batch.fail_next("SubmitServiceJob", code="TooManyRequestsException", message="Rate exceeded")

    report = drain(stack)

    assert len(report.failures) == 1  # the first delivery, reported for retry
    assert report.replies[0]["batchItemFailures"] == [{"itemIdentifier": report.failures[0]}]
    assert report.replies[1:] == [{"batchItemFailures": []}]
    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.state is SubmissionState.SUBMITTED
    assert len(_service_jobs(batch)) == 1
    assert queue_depth(stack, stack.dlq_url) == (0, 0)


def test_server_error_is_retried_then_succeeds(stack: Stack, batch: Any) -> None:
    status, reply = post_jobs(submission())
    assert status == 202
    batch.fail_next("SubmitServiceJob", code="ServerException", times=2)
    report = drain(stack)
    assert len(report.failures) == 2
    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.state is SubmissionState.SUBMITTED
    assert len(_service_jobs(batch)) == 1


def test_attacker_sending_straight_to_the_queue_as_alice_submits_nothing(
    stack: Stack, batch: Any
) -> None:
    """Fault 1: a caller who can send to the queue puts a whole submission there with
    ``principal`` = alice (who may submit for research). It carries no proof of
    sender: refused on every receive, parked in the DLQ after the queue's
    ``maxReceiveCount``; no service job, nothing stored, the refusal audited
    ``UnauthenticatedInputRefused`` (finding ``UNAUTHENTICATED_INPUT``) once."""
    import hashlib

    from quotagov.governance.provenance import REFUSED_ACTION, refusal_findings

    from .conftest import MAX_RECEIVE_COUNT

    body = submission(clientRequestId="forged-1")
    message_id = send_direct(stack, body, ALICE)

    report = drain(stack)

    assert report.failures == [message_id] * MAX_RECEIVE_COUNT
    assert queue_depth(stack) == (0, 0) and queue_depth(stack, stack.dlq_url) == (1, 0)
    assert _submits(batch) == [] and _service_jobs(batch) == []
    assert stack.dynamodb.scan(TableName="quotagov-jobs")["Items"] == []
    assert stack.jobs.get(submission_id_for(ALICE, "forged-1")) is None
    (decision,) = stack.audit.decisions
    text = json.dumps(body)
    assert (decision.action, decision.actor, decision.resource) == (
        REFUSED_ACTION,
        "quotagov",
        "arn:aws:sqs:eu-west-1:123456789012:quotagov-submissions",
    )
    assert dict(decision.details) == {
        "id": message_id,
        "reason": "sealed: must be 1 (no proof of sender)",
        "claimedSender": "",
        "bodySha256": hashlib.sha256(text.encode()).hexdigest(),
        "bodyChars": len(text),
    }
    assert [f["code"] for f in refusal_findings(decision)] == ["UNAUTHENTICATED_INPUT"]


def test_reference_to_no_stored_submission_is_refused_and_audited(stack: Stack, batch: Any) -> None:
    """A sealed ``{"submissionId"}`` naming nothing the API stored (a sender's bug, or
    a record deleted since): refused, audited."""
    message_id = stack.sqs.send_message(
        QueueUrl=stack.queue_url,
        MessageBody=seal(
            json.dumps({"submissionId": "11111111-2222-5333-8444-555555555555"}),
            SUBMISSION_QUEUE,
        ),
        MessageAttributes={"principal": {"DataType": "String", "StringValue": ALICE}},
    )["MessageId"]

    drain(stack)

    assert _submits(batch) == []
    (item,) = stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]
    assert item["state"]["S"] == "REFUSED" and item["messageId"]["S"] == message_id
    assert item["reasons"]["L"][0]["S"] == (
        "submissionId: no stored submission 11111111-2222-5333-8444-555555555555; "
        "nothing was submitted"
    )
    assert stack.jobs.get("11111111-2222-5333-8444-555555555555") is None
    assert [a.action for a in stack.audit.decisions] == ["SubmissionRefused"]


def test_the_worker_submits_as_the_stored_record_says_whatever_the_message_claims(
    stack: Stack, batch: Any
) -> None:
    """The API stored bob's submission; a copy of its reference with ``principal`` =
    alice changes nothing: one service job, bob's, tagged as his."""
    status, reply = post_jobs(submission(), BOB)
    assert status == 202
    stack.sqs.send_message(
        QueueUrl=stack.queue_url,
        MessageBody=json.dumps({"submissionId": reply["submissionId"]}),
        MessageAttributes={"principal": {"DataType": "String", "StringValue": ALICE}},
    )

    drain(stack)

    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.state is SubmissionState.SUBMITTED
    assert record.principal == BOB
    (request,) = _submits(batch)
    assert request["tags"]["quotagov:submissionId"] == reply["submissionId"]
    assert ALICE not in json.dumps(request)


def test_direct_submission_without_principal_attribute_is_refused(stack: Stack, batch: Any) -> None:
    send_direct(stack, submission(), None, sealed=True)  # past the proof: the worker's own rule
    drain(stack)
    items = stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]
    assert [i["state"]["S"] for i in items] == ["REFUSED"]
    assert items[0]["reasons"]["L"][0]["S"] == DIRECT_SUBMISSION_FAULT
    assert _submits(batch) == []


def test_policy_change_after_acceptance_fails_the_queued_submission(
    stack: Stack, batch: Any
) -> None:
    from .conftest import policy_text

    status, reply = post_jobs(submission())
    assert status == 202
    stack.put_policy(policy_text().replace("classes: [exploratory]", "classes: [scheduled]", 1))
    report = drain(stack)
    assert report.failures == []
    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.state is SubmissionState.FAILED
    assert record.failure is not None and record.failure.kind is FailureKind.NOT_SUBMITTABLE
    assert record.reasons == [
        "policy changed since the submission was accepted: workloadClass: team 'research' "
        "may not use class 'exploratory' (allowed: scheduled)"
    ]
    assert _submits(batch) == []


def test_priority_change_in_policy_applies_at_submission(stack: Stack, batch: Any) -> None:
    from .conftest import policy_text

    status, reply = post_jobs(submission())
    assert status == 202 and reply["schedulingPriority"] == 10
    stack.put_policy(
        policy_text().replace(
            "{name: standard, schedulingPriority: 10", "{name: standard, schedulingPriority: 15"
        )
    )
    drain(stack)
    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.schedulingPriority == 15
    assert batch.describe_service_job(jobId=record.batchJobId)["schedulingPriority"] == 15


def test_a_redelivery_does_not_adopt_an_impostor_carrying_the_submissions_tags(
    stack: Stack, batch: Any
) -> None:
    """Fault 3, submit side: before the worker's redelivery, someone submits straight to
    Batch a job with the submission's name and ``quotagov:*`` tags. The worker's
    recheck finds it by name and tag, sees another request, and submits its own."""
    status, reply = post_jobs(submission())
    record = stack.jobs.get(reply["submissionId"])
    assert status == 202 and record is not None
    first = stack.sqs.receive_message(QueueUrl=stack.queue_url)["Messages"][0]
    impostor = batch.submit_service_job(
        jobName=record.jobName,
        jobQueue="ml-gov-queue",
        serviceJobType="SAGEMAKER_TRAINING",
        serviceRequestPayload=json.dumps(training_payload("other-work")),
        quotaShareName="background",
        schedulingPriority=10,
        tags={"quotagov:submissionId": record.pk, "quotagov:team": "research"},
    )
    stack.sqs.change_message_visibility(
        QueueUrl=stack.queue_url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0
    )

    report = drain(stack)

    assert report.failures == []
    after = stack.jobs.get(reply["submissionId"])
    assert after is not None and after.state is SubmissionState.SUBMITTED
    assert after.batchJobId and after.batchJobId != impostor["jobId"]
    own = batch.describe_service_job(jobId=after.batchJobId)
    assert json.loads(own["serviceRequestPayload"]) == json.loads(record.serviceRequestPayload)
    tokens = [r.get("clientToken") for r in _submits(batch)]
    assert tokens == [None, record.clientToken]  # the impostor's, then the worker's own


@pytest.mark.parametrize(
    ("priority", "retries"), [(9999, None), (10, 50)], ids=["priority-9999", "retries-50"]
)
def test_a_redelivery_does_not_adopt_an_impostor_copying_the_request_at_another_routing(
    stack: Stack, batch: Any, priority: int, retries: int | None
) -> None:
    """An attacker with ``batch:SubmitServiceJob`` copies the submission's exact request
    (name, payload, share, ``quotagov:*`` tags) but at priority 9999, or with a higher
    preemption-retry limit, before the worker's redelivery. The recheck must not adopt
    it: the worker submits its own job at the policy's routing, and the record names
    that one."""
    status, reply = post_jobs(submission())
    record = stack.jobs.get(reply["submissionId"])
    assert status == 202 and record is not None
    assert (record.schedulingPriority, record.preemptionRetriesBeforeTermination) != (
        priority,
        retries,
    )
    first = stack.sqs.receive_message(QueueUrl=stack.queue_url)["Messages"][0]
    forged: dict[str, Any] = {
        "jobName": record.jobName,
        "jobQueue": "ml-gov-queue",
        "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": record.serviceRequestPayload,
        "quotaShareName": record.quotaShareName,
        "schedulingPriority": priority,
        "tags": {"quotagov:submissionId": record.pk, "quotagov:team": record.team},
    }
    if retries is not None:
        forged["preemptionConfiguration"] = {"preemptionRetriesBeforeTermination": retries}
    impostor = batch.submit_service_job(**forged)
    stack.sqs.change_message_visibility(
        QueueUrl=stack.queue_url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0
    )

    report = drain(stack)

    assert report.failures == []
    after = stack.jobs.get(reply["submissionId"])
    assert after is not None and after.state is SubmissionState.SUBMITTED
    assert after.batchJobId and after.batchJobId != impostor["jobId"]
    own = batch.describe_service_job(jobId=after.batchJobId)
    assert own["schedulingPriority"] == record.schedulingPriority == after.schedulingPriority
    assert batch.describe_service_job(jobId=impostor["jobId"])["schedulingPriority"] == priority
    tokens = [r.get("clientToken") for r in _submits(batch)]
    assert tokens == [None, record.clientToken]  # the impostor's, then the worker's own


def test_a_failure_is_announced_to_the_owner_notice_queue_once_even_after_a_failed_send(
    stack: Stack, batch: Any
) -> None:
    """The worker holds no Slack secret: a submission Batch refuses is handed to the
    owner notice queue. When SQS refuses that notice, the message is reported for retry
    (the record stays FAILED) and the redelivery sends the notice; the duplicate
    delivery after that is answered by Idempotency and sends nothing more."""
    import dataclasses

    from quotagov import composition
    from quotagov.handlers import submit_worker
    from support.lambda_context import LambdaContext

    from .sqs_driver import lambda_record

    name = "quotagov-owner-notices-late"  # created only after the first try: SendMessage fails
    url = f"https://sqs.eu-west-1.amazonaws.com/{_account(stack)}/{name}"
    given = composition.injected_settings()
    assert given is not None
    composition.provide(settings=dataclasses.replace(given, owner_notice_queue_url=url))
    status, reply = post_jobs(_release_job(), FRANK)
    assert status == 202, reply
    _disable_share_in_batch(batch, "reserved")
    [message] = stack.sqs.receive_message(
        QueueUrl=stack.queue_url, AttributeNames=["All"], MessageAttributeNames=["All"]
    )["Messages"]
    arn = stack.sqs.get_queue_attributes(QueueUrl=stack.queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    event = {"Records": [lambda_record(message, arn)]}

    def deliver() -> Any:
        return submit_worker.handler(event, LambdaContext())  # type: ignore[arg-type]

    assert deliver() == {"batchItemFailures": [{"itemIdentifier": message["MessageId"]}]}
    failed = stack.jobs.get(reply["submissionId"])
    assert failed is not None and failed.state is SubmissionState.FAILED
    assert failed.reasons[0].startswith("Batch refused SubmitServiceJob: ClientException: ")

    created = stack.sqs.create_queue(QueueName=name)["QueueUrl"]
    assert created == url
    assert deliver() == {"batchItemFailures": []}
    assert deliver() == {"batchItemFailures": []}

    notices = stack.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [opened(m["Body"], NOTICE_QUEUE) for m in notices] == [
        {"kind": "submission-failed", "submissionId": reply["submissionId"]}
    ]
    assert len(_submits(batch)) == 1
    assert [d.decision_id for d in stack.audit.decisions] == [
        f"SubmissionFailed#{reply['submissionId']}"
    ]


def _account(stack: Stack) -> str:
    """The moto account of the test's queues (from the submission queue's URL)."""
    return stack.queue_url.rstrip("/").rsplit("/", 2)[1]
