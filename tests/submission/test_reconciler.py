"""The reconciler: submissions stuck QUEUED are queued again, then settled; none stays.

moto DynamoDB/SQS (the template's visibility timeout and redrive), the simulated Batch
on the virtual clock, the real submit worker and reconciler handlers.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from quotagov import composition
from quotagov.adapters.batch_pages import iter_service_jobs
from quotagov.clock import ManualClock
from quotagov.governance.model.job import FailureKind, SubmissionState
from quotagov.governance.ports import BatchThrottledError, ControllerDecision
from quotagov.governance.provenance import NOTICE_QUEUE, REFUSED_ACTION, SUBMISSION_QUEUE
from quotagov.governance.submission import SUBMISSION_TAG
from quotagov.governance.submission.reconcile import (
    DEFAULT_MAX_REQUEUES,
    DEFAULT_STALE_AFTER_SECONDS,
)
from support.compose import opened
from support.lambda_context import LambdaContext
from support.principals import ALICE, BOB

from .api import post_jobs
from .conftest import VISIBILITY_TIMEOUT, Stack, submission, training_payload
from .sqs_driver import lambda_record, queue_depth

SCHEDULE = {
    "version": "0",
    "id": "e-reconcile",
    "detail-type": "Scheduled Event",
    "source": "aws.events",
    "account": "111122223333",
    "time": "2026-12-01T00:00:00Z",
    "region": "eu-west-1",
    "resources": [],
    "detail": {},
}
RECONCILE_EVERY = 300  # the template's rate(5 minutes)


def reconcile() -> dict[str, list[str]]:
    """One scheduled invocation of ReconcilerFunction."""
    from quotagov.handlers import reconciler

    result: dict[str, list[str]] = reconciler.handler(SCHEDULE, LambdaContext())
    return result


class ThrottledUntil:
    """The simulated Batch, answering 429 to every SubmitServiceJob before ``until``."""

    def __init__(self, batch: Any, clock: ManualClock, until: float) -> None:
        self._batch = batch
        self._clock = clock
        self.until = until
        self.throttled = 0

    def submit_service_job(self, **request: Any) -> dict[str, Any]:
        if self._clock.now() < self.until:
            self.throttled += 1
            raise BatchThrottledError(
                "SubmitServiceJob", "TooManyRequestsException", "Rate exceeded"
            )
        result: dict[str, Any] = self._batch.submit_service_job(**request)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._batch, name)


def _items(stack: Stack) -> dict[str, dict[str, Any]]:
    return {r.pk: r.to_item() for r in (stack.jobs.get(pk) for pk in _pks(stack)) if r}


def _pks(stack: Stack) -> list[str]:
    return [i["pk"]["S"] for i in stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]]


def _service_jobs_by_submission(batch: Any) -> Counter[str]:
    """Service jobs of the queue in every status, counted by their submission tag."""
    jobs: Counter[str] = Counter()
    for status in ("SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"):
        for summary in iter_service_jobs(batch, jobQueue=batch.job_queue_arn, jobStatus=status):
            job = batch.describe_service_job(jobId=summary["jobId"])
            jobs[job["tags"][SUBMISSION_TAG]] += 1
    return jobs


def _run(stack: Stack, *, until: float, reconcile_every: int = RECONCILE_EVERY) -> int:
    """The event source mapping and the 5-minute schedule on the virtual clock.

    Each step receives what is visible (batches of 5, as the template's BatchSize),
    hands it to the worker, deletes what it processed and keeps the reported failures
    in flight for the visibility timeout; the reconciler runs every ``reconcile_every``
    virtual seconds. Stops at ``until`` or once nothing is queued, in flight or QUEUED.
    Returns the number of worker invocations.
    """
    from quotagov.handlers import submit_worker

    arn = stack.sqs.get_queue_attributes(QueueUrl=stack.queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    in_flight: list[tuple[float, str]] = []
    next_reconcile = stack.clock.now() + reconcile_every
    invocations = 0
    while stack.clock.now() < until:
        messages = stack.sqs.receive_message(
            QueueUrl=stack.queue_url,
            MaxNumberOfMessages=5,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if messages:
            event = {"Records": [lambda_record(m, arn) for m in messages]}
            reply = submit_worker.handler(event, LambdaContext())
            invocations += 1
            failed = {f["itemIdentifier"] for f in reply["batchItemFailures"]}
            done = []
            for m in messages:
                if m["MessageId"] in failed:
                    in_flight.append((stack.clock.now() + VISIBILITY_TIMEOUT, m["ReceiptHandle"]))
                else:
                    done.append({"Id": str(len(done)), "ReceiptHandle": m["ReceiptHandle"]})
            if done:
                stack.sqs.delete_message_batch(QueueUrl=stack.queue_url, Entries=done)
            continue
        queued = stack.jobs.in_state_since(SubmissionState.QUEUED, 2**40, limit=1)
        if not in_flight and not queued:
            break
        due = min([t for t, _ in in_flight] + [next_reconcile])
        stack.clock.advance(max(0.0, due - stack.clock.now()))
        if stack.clock.now() >= next_reconcile:
            reconcile()
            next_reconcile += reconcile_every
        still = []
        for visible_at, handle in in_flight:
            if visible_at <= stack.clock.now():
                stack.sqs.change_message_visibility(
                    QueueUrl=stack.queue_url, ReceiptHandle=handle, VisibilityTimeout=0
                )
            else:
                still.append((visible_at, handle))
        in_flight = still
    return invocations


def _send_submissions(stack: Stack, count: int) -> None:
    """``count`` submissions through POST /jobs (records + {"submissionId"} messages)."""
    for i in range(count):
        body = submission(
            clientRequestId=f"thr-{i}", serviceRequestPayload=training_payload(f"thr-{i}")
        )
        status, _ = post_jobs(body, ALICE if i % 2 else BOB)
        assert status == 202


@pytest.mark.slow  # a few hundred worker invocations on moto SQS
def test_throttled_for_forty_minutes_every_submission_ends_with_exactly_one_service_job(
    stack: Stack, batch: Any
) -> None:
    """Batch throttles the worker for 40 min (the messages go round,
    5 receives, into the DLQ); the reconciler re-queues; once Batch answers, each
    submission has exactly one service job and none stays QUEUED."""
    start = stack.clock.now()
    throttled = ThrottledUntil(batch, stack.clock, until=start + 2400)
    composition.provide(batch=throttled)
    _send_submissions(stack, 12)

    _run(stack, until=start + 6 * 3600)

    items = _items(stack)
    assert len(items) == 12
    assert {pk: item["state"] for pk, item in items.items()} == dict.fromkeys(items, "SUBMITTED")
    assert throttled.throttled > 12  # it really was throttled, more than once each
    assert _service_jobs_by_submission(batch) == Counter(dict.fromkeys(items, 1))
    for pk, item in items.items():
        jobs = batch.describe_service_job(jobId=item["batchJobId"])
        assert jobs["tags"][SUBMISSION_TAG] == pk
    # Messages did reach the DLQ meanwhile: the reconciler is what saved them.
    requeued = [d for d in stack.audit.decisions if d.action == "SubmissionRequeued"]
    assert {d.resource for d in requeued} == set(items)
    assert all(item.get("requeueCount", 0) >= 1 for item in items.values())


@pytest.mark.slow
def test_throttled_for_good_every_submission_ends_failed_with_its_reason(
    stack: Stack, batch: Any
) -> None:
    """Batch never answers: after 3 re-queues each record is FAILED, saying why; no job."""
    start = stack.clock.now()
    composition.provide(batch=ThrottledUntil(batch, stack.clock, until=start + 10**9))
    _send_submissions(stack, 6)

    _run(stack, until=start + 6 * 3600)

    items = _items(stack)
    assert len(items) == 6
    for item in items.values():
        assert item["state"] == "FAILED"
        assert item["failureKind"] == "stuck-queued" and "staleFailed" not in item
        assert item["requeueCount"] == DEFAULT_MAX_REQUEUES
        [reason] = item["reasons"]
        assert reason.startswith("not submitted to Batch: still QUEUED ")
        assert f"after it was accepted and {DEFAULT_MAX_REQUEUES} re-queues" in reason
        assert "batchJobId" not in item
    assert _service_jobs_by_submission(batch) == Counter()
    failed = [d for d in stack.audit.decisions if d.action == "SubmissionFailed"]
    assert sorted(d.resource for d in failed) == sorted(items)
    assert all(d.decision_id == f"SubmissionFailed#{d.resource}" for d in failed)


# ------------------------------------------------------------------ one pass, exactly


def _queued(stack: Stack, name: str, principal: str = ALICE) -> str:
    status, body = post_jobs(
        submission(clientRequestId=name, serviceRequestPayload=training_payload(name)), principal
    )
    assert status == 202, body
    submission_id: str = body["submissionId"]
    return submission_id


def _drop_messages(stack: Stack) -> None:
    """Receive and delete every visible message (as if lost; PurgeQueue is 1/min)."""
    while True:
        found = stack.sqs.receive_message(QueueUrl=stack.queue_url, MaxNumberOfMessages=10)
        messages = found.get("Messages", [])
        if not messages:
            return
        for m in messages:
            stack.sqs.delete_message(QueueUrl=stack.queue_url, ReceiptHandle=m["ReceiptHandle"])


def _messages(stack: Stack) -> list[dict[str, Any]]:
    found = stack.sqs.receive_message(QueueUrl=stack.queue_url, MaxNumberOfMessages=10)
    return [opened(m["Body"], SUBMISSION_QUEUE) for m in found.get("Messages", [])]


def test_only_records_queued_longer_than_the_threshold_are_requeued(
    stack: Stack, batch: Any
) -> None:
    old = _queued(stack, "old")
    stack.clock.advance(DEFAULT_STALE_AFTER_SECONDS - 100)
    young = _queued(stack, "young")
    _drop_messages(stack)  # lost: only the reconciler can bring them back
    stack.clock.advance(100)

    assert reconcile()["requeued"] == [old]

    assert _messages(stack) == [{"submissionId": old}]
    record = stack.jobs.get(old)
    assert record is not None and record.state is SubmissionState.QUEUED
    assert (record.requeueCount, record.requeuedAt) == (1, int(stack.clock.now()))
    untouched = stack.jobs.get(young)
    assert untouched is not None and untouched.version == 1
    assert [d.action for d in stack.audit.decisions if d.resource == old] == ["SubmissionRequeued"]
    decision = next(d for d in stack.audit.decisions if d.action == "SubmissionRequeued")
    assert decision == ControllerDecision(
        action="SubmissionRequeued",
        actor="quotagov",
        job_queue=stack.settings.job_queue,
        resource=old,
        decision_id=f"SubmissionRequeued#{old}#1",
        details={
            "requeueCount": 1,
            "queuedSeconds": DEFAULT_STALE_AFTER_SECONDS,
            "reason": f"QUEUED for more than {DEFAULT_STALE_AFTER_SECONDS} s",
        },
    )


def _exhaust_requeues(stack: Stack, submission_id: str) -> None:
    for _ in range(DEFAULT_MAX_REQUEUES):
        stack.clock.advance(DEFAULT_STALE_AFTER_SECONDS)
        assert reconcile()["requeued"] == [submission_id]
        _drop_messages(stack)
    stack.clock.advance(DEFAULT_STALE_AFTER_SECONDS)


def test_a_job_that_reached_batch_is_recorded_not_failed(stack: Stack, batch: Any) -> None:
    """The worker's SubmitServiceJob succeeded but its write was lost: Batch has the job."""
    from quotagov.governance.submission import service_job_request

    pk = _queued(stack, "lost-write")
    _drop_messages(stack)
    record = stack.jobs.get(pk)
    assert record is not None
    job = batch.submit_service_job(**service_job_request(record, stack.settings.job_queue))
    _exhaust_requeues(stack, pk)

    assert reconcile()["submitted"] == [pk]

    stored = stack.jobs.get(pk)
    assert stored is not None and stored.state is SubmissionState.SUBMITTED
    assert stored.batchJobId == job["jobId"]
    assert _service_jobs_by_submission(batch) == Counter({pk: 1})


def test_a_late_worker_success_after_the_stale_failure_wins(stack: Stack, batch: Any) -> None:
    """A message still in flight when the reconciler gave up: the record names the job."""
    from quotagov.handlers import submit_worker

    pk = _queued(stack, "late")
    [message] = stack.sqs.receive_message(
        QueueUrl=stack.queue_url, AttributeNames=["All"], MessageAttributeNames=["All"]
    )["Messages"]
    _exhaust_requeues(stack, pk)
    assert reconcile()["failed"] == [pk]
    failed = stack.jobs.get(pk)
    assert failed is not None and failed.state is SubmissionState.FAILED

    # The worker had already read the record as QUEUED when the reconciler failed it.
    from quotagov.governance.submission import to_batch

    record_before = failed.model_copy(update={"state": SubmissionState.QUEUED})
    response = batch.submit_service_job(
        **to_batch.service_job_request(record_before, stack.settings.job_queue)
    )
    after = to_batch.mark_submitted(
        record_before, composition.current(composition.SubmitWorker).submission, response
    )

    assert after.state is SubmissionState.SUBMITTED
    assert after.batchJobId == response["jobId"]
    assert after.failureKind is None and after.failure is None
    # and the old message, delivered once more, changes nothing
    arn = "arn:aws:sqs:eu-west-1:111122223333:quotagov-submissions"
    reply = submit_worker.handler({"Records": [lambda_record(message, arn)]}, LambdaContext())
    assert reply == {"batchItemFailures": []}
    assert _service_jobs_by_submission(batch) == Counter({pk: 1})


def test_failing_aws_calls_leave_the_record_exactly_as_it_was(stack: Stack, batch: Any) -> None:
    pk = _queued(stack, "deferred")
    _exhaust_requeues(stack, pk)
    before = stack.jobs.get(pk)
    decisions = list(stack.audit.decisions)
    batch.fail_next("ListServiceJobs", code="ServerException")

    assert reconcile()["deferred"] == [pk]

    assert stack.jobs.get(pk) == before
    assert stack.audit.decisions == decisions

    # and a queue that refuses the re-queue
    fresh = _queued(stack, "queue-down")
    _drop_messages(stack)
    stack.clock.advance(DEFAULT_STALE_AFTER_SECONDS)
    before_fresh = stack.jobs.get(fresh)
    real = stack.settings.submission_queue_url
    composition.provide(submission_queue=_RefusingQueue())
    result = reconcile()
    assert fresh in result["deferred"]
    assert stack.jobs.get(fresh) == before_fresh
    assert queue_depth(stack, real) == (0, 0)


class _RefusingQueue:
    def send(self, submission_id: str) -> None:
        from quotagov.governance.ports import SubmissionQueueError

        raise SubmissionQueueError("SQS SendMessage failed: AccessDenied")


def test_a_forged_requeue_message_cannot_resurrect_a_refused_or_failed_submission(
    stack: Stack, batch: Any
) -> None:
    """Attacker with sqs:SendMessage: a {"submissionId"} for a record that is not QUEUED
    carries no proof of sender: refused (left for the DLQ), audited
    ``UnauthenticatedInputRefused``, and changes nothing (no service job, the record
    stays as it was)."""
    from quotagov.handlers import submit_worker

    pk = _queued(stack, "refused-later")
    _drop_messages(stack)
    _exhaust_requeues(stack, pk)
    assert reconcile()["failed"] == [pk]
    before = stack.jobs.get(pk)

    stack.sqs.send_message(QueueUrl=stack.queue_url, MessageBody=json.dumps({"submissionId": pk}))
    [message] = stack.sqs.receive_message(
        QueueUrl=stack.queue_url, AttributeNames=["All"], MessageAttributeNames=["All"]
    )["Messages"]
    arn = "arn:aws:sqs:eu-west-1:111122223333:quotagov-submissions"
    reply = submit_worker.handler({"Records": [lambda_record(message, arn)]}, LambdaContext())

    assert reply == {"batchItemFailures": [{"itemIdentifier": message["MessageId"]}]}
    assert stack.jobs.get(pk) == before
    assert _service_jobs_by_submission(batch) == Counter()
    refused = [d for d in stack.audit.decisions if d.action == REFUSED_ACTION]
    assert [(d.resource, d.details["id"], d.details["reason"]) for d in refused] == [
        (arn, message["MessageId"], "sealed: must be 1 (no proof of sender)")
    ]


def _owner_notice_queue(stack: Stack, *, create: bool = True) -> str:
    """Point the reconciler at an owner notice queue (created, or missing); its URL."""
    import dataclasses

    name = "quotagov-owner-notices" if create else "quotagov-owner-notices-missing"
    account = stack.queue_url.rstrip("/").rsplit("/", 2)[1]
    url = f"https://sqs.eu-west-1.amazonaws.com/{account}/{name}"
    if create:
        assert stack.sqs.create_queue(QueueName=name)["QueueUrl"] == url
    given = composition.injected_settings()
    assert given is not None
    composition.provide(settings=dataclasses.replace(given, owner_notice_queue_url=url))
    return url


def test_a_submission_failed_as_stuck_is_announced_for_its_owner(stack: Stack, batch: Any) -> None:
    """The reconciler has no Slack secret: the owner is told through the owner notice
    queue (ApplyDecisionsFunction reads it), once."""
    url = _owner_notice_queue(stack)
    pk = _queued(stack, "stuck")
    _drop_messages(stack)
    _exhaust_requeues(stack, pk)

    report = reconcile()

    assert (report["failed"], report["unnotified"]) == ([pk], [])
    notices = stack.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [opened(m["Body"], NOTICE_QUEUE) for m in notices] == [
        {"kind": "submission-failed", "submissionId": pk}
    ]
    assert reconcile()["failed"] == []  # a FAILED record is not looked at again


def test_a_notice_the_queue_refuses_is_reported_not_lost_silently(
    stack: Stack, batch: Any, caplog: Any
) -> None:
    _owner_notice_queue(stack, create=False)
    pk = _queued(stack, "stuck-unnotified")
    _drop_messages(stack)
    _exhaust_requeues(stack, pk)

    report = reconcile()

    assert (report["failed"], report["unnotified"]) == ([pk], [pk])
    record = stack.jobs.get(pk)
    assert record is not None and record.state is SubmissionState.FAILED
    assert record.failure is not None and record.failure.kind is FailureKind.STUCK_QUEUED
    assert any(
        r.levelname == "ERROR" and f"could not tell the owner that {pk} failed" in r.getMessage()
        for r in caplog.records
    )
