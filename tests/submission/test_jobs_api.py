"""The jobs API through its handler (REST proxy events), with moto DynamoDB/SQS/SSM."""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotagov.governance.model.job import SubmissionState
from quotagov.governance.provenance import SUBMISSION_QUEUE
from support.compose import opened
from support.principals import ALICE, BOB, DAVE, FRANK

from .api import get_job, post_jobs
from .conftest import Stack, submission, training_payload
from .sqs_driver import drain, queue_depth


def test_accepted_submission_is_queued_with_its_routing(stack: Stack) -> None:
    status, reply = post_jobs(submission())
    assert status == 202
    assert reply == {
        "submissionId": reply["submissionId"],
        "state": "QUEUED",
        "quotaShareName": "background",
        "schedulingPriority": 10,
        "preemptionRetriesBeforeTermination": 1,
        "batchJobId": None,
    }
    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.state is SubmissionState.QUEUED
    assert record.principal == ALICE and record.ownerSlackUserId == "U0ALICE"
    assert record.instanceType == "ml.g5.xlarge" and record.instanceCount == 1
    assert record.checkpointIntervalSeconds == 600
    assert json.loads(record.serviceRequestPayload) == training_payload()
    messages = stack.sqs.receive_message(QueueUrl=stack.queue_url)["Messages"]
    assert [opened(m["Body"], SUBMISSION_QUEUE) for m in messages] == [{"submissionId": record.pk}]


def test_retry_with_the_same_client_request_id_is_one_submission(stack: Stack) -> None:
    first = post_jobs(submission(clientRequestId="try-1"))
    second = post_jobs(submission(clientRequestId="try-1"))
    assert first[0] == second[0] == 202
    assert first[1]["submissionId"] == second[1]["submissionId"]
    assert len(stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]) == 1


def test_submission_for_another_team_is_forbidden(stack: Stack) -> None:
    status, reply = post_jobs(submission(team="applied", workloadClass="scheduled"), ALICE)
    assert status == 403
    assert reply == {
        "message": f"team: {ALICE} is not a member of team 'applied' and may not submit for it"
    }
    assert stack.dynamodb.scan(TableName="quotagov-jobs")["Items"] == []
    assert queue_depth(stack) == (0, 0)
    assert [d.action for d in stack.audit.decisions] == ["SubmissionForbidden"]


def test_caller_without_identity_is_not_authenticated(stack: Stack) -> None:
    status, reply = post_jobs(submission(), None)
    assert status == 401
    assert reply == {"message": "no caller identity in the request"}


def test_identity_in_the_body_is_a_schema_fault(stack: Stack) -> None:
    status, reply = post_jobs(submission(principal=BOB))
    assert status == 400
    assert reply["faults"] == [{"path": "principal", "fault": "Extra inputs are not permitted"}]


def test_schema_faults_are_400_naming_each_field(stack: Stack) -> None:
    payload = training_payload()
    payload["ResourceConfig"]["InstanceCount"] = 0
    payload["TrainingJobName"] = "bad_name"
    body = submission(
        priorityLevel=None, checkpointIntervalSeconds=-5, serviceRequestPayload=payload
    )
    status, reply = post_jobs(body)
    assert status == 400
    assert reply["message"] == "invalid request"
    assert sorted(f["path"] for f in reply["faults"]) == [
        "checkpointIntervalSeconds",
        "priorityLevel",
        "serviceRequestPayload.ResourceConfig.InstanceCount",
        "serviceRequestPayload.TrainingJobName",
    ]
    assert stack.dynamodb.scan(TableName="quotagov-jobs")["Items"] == []


def test_a_boolean_checkpoint_interval_is_400_and_stores_nothing(stack: Stack) -> None:
    """JSON ``true`` is not one second: refused by name, nothing stored or queued."""
    status, reply = post_jobs(submission(checkpointIntervalSeconds=True))
    assert status == 400
    assert reply["faults"] == [
        {
            "path": "checkpointIntervalSeconds",
            "fault": "Value error, must be a whole number of seconds, not a boolean",
        }
    ]
    assert stack.dynamodb.scan(TableName="quotagov-jobs")["Items"] == []


def test_body_that_is_not_json_is_400(stack: Stack) -> None:
    status, reply = post_jobs(None, raw="{not json")
    assert status == 400
    assert reply["faults"] == [
        {
            "path": "(body)",
            "fault": "not valid JSON: Expecting property name enclosed in double quotes "
            "at line 1 column 2 (character 1)",
        }
    ]


def test_payload_over_10_kib_is_400(stack: Stack) -> None:
    payload = training_payload(HyperParameters={f"p{i}": "x" * 200 for i in range(60)})
    status, reply = post_jobs(submission(serviceRequestPayload=payload))
    assert status == 400
    assert len(reply["faults"]) == 1
    assert reply["faults"][0]["path"] == "serviceRequestPayload"
    assert reply["faults"][0]["fault"].startswith("Value error, the request is ")
    assert "Batch accepts at most 10240" in reply["faults"][0]["fault"]


def test_instance_groups_are_refused(stack: Stack) -> None:
    payload = training_payload()
    payload["ResourceConfig"] = {"InstanceGroups": [{"InstanceType": "ml.g5.xlarge"}]}
    status, reply = post_jobs(submission(serviceRequestPayload=payload))
    assert status == 400
    assert reply["faults"][0]["path"] == "serviceRequestPayload.ResourceConfig"
    assert reply["faults"][0]["fault"].startswith("Value error, InstanceGroups is not supported")


def _no_checkpoint(**changes: Any) -> dict[str, Any]:
    payload = training_payload()
    del payload["CheckpointConfig"]
    return submission(serviceRequestPayload=payload, **changes)


@pytest.mark.parametrize(
    ("body", "principal", "reasons"),
    [
        pytest.param(
            submission(workloadClass="release"),
            ALICE,
            ["workloadClass: team 'research' may not use class 'release' (allowed: exploratory)"],
            id="class-not-allowed-for-team",
        ),
        pytest.param(
            submission(workloadClass="overnight"),
            ALICE,
            ["workloadClass: unknown workload class 'overnight'"],
            id="unknown-class",
        ),
        pytest.param(
            submission(priorityLevel="urgent"),
            ALICE,
            [
                "priorityLevel: level 'urgent' needs an approved escalation; submit at one of "
                "standard and request 'urgent' with POST /jobs/{jobId}/escalations"
            ],
            id="level-needs-escalation",
        ),
        pytest.param(
            submission(priorityLevel="low"),
            ALICE,
            ["priorityLevel: team 'research' may not use level 'low' (direct levels: standard)"],
            id="level-not-allowed",
        ),
        pytest.param(
            submission(priorityLevel="asap"),
            ALICE,
            ["priorityLevel: unknown priority level 'asap'"],
            id="unknown-level",
        ),
        pytest.param(
            _no_checkpoint(),
            ALICE,
            [
                "serviceRequestPayload.CheckpointConfig: class 'exploratory' requires "
                "checkpointing (its jobs can be preempted and must resume), but the request "
                "has no CheckpointConfig.S3Uri"
            ],
            id="no-checkpoint-config",
        ),
        pytest.param(
            submission(checkpointIntervalSeconds=None),
            ALICE,
            [
                "checkpointIntervalSeconds: class 'exploratory' requires checkpointing; declare "
                "how often the job writes a checkpoint, in seconds"
            ],
            id="no-checkpoint-interval",
        ),
        pytest.param(
            submission(
                serviceRequestPayload=training_payload(
                    ResourceConfig={"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 1}
                )
            ),
            ALICE,
            [
                "serviceRequestPayload.ResourceConfig.InstanceType: class 'exploratory' may not "
                "use ml.p4d.24xlarge (allowed: ml.g5.xlarge)"
            ],
            id="instance-type-not-allowed",
        ),
        pytest.param(
            submission(
                serviceRequestPayload=training_payload(
                    ResourceConfig={"InstanceType": "ml.g5.xlarge", "InstanceCount": 2}
                )
            ),
            ALICE,
            [
                "serviceRequestPayload.ResourceConfig.InstanceCount: 2 exceeds class "
                "'exploratory' maximum of 1"
            ],
            id="too-many-instances",
        ),
        pytest.param(
            submission(quotaShareName="reserved"),
            ALICE,
            [
                "quotaShareName: class 'exploratory' may not use share 'reserved' "
                "(allowed: background, medium)"
            ],
            id="share-not-allowed-for-class",
        ),
    ],
)
def test_policy_refusals_are_422_with_each_reason(
    stack: Stack, body: dict[str, Any], principal: str, reasons: list[str]
) -> None:
    status, reply = post_jobs(body, principal)
    assert status == 422
    assert reply == {"submissionId": reply["submissionId"], "state": "REFUSED", "reasons": reasons}
    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.state is SubmissionState.REFUSED
    assert record.reasons == reasons
    assert queue_depth(stack) == (0, 0)
    assert [(d.action, d.details["reasons"]) for d in stack.audit.decisions] == [
        ("SubmissionRefused", reasons)
    ]


def test_all_reasons_are_listed_together(stack: Stack) -> None:
    status, reply = post_jobs(
        submission(
            priorityLevel="urgent", checkpointIntervalSeconds=None, quotaShareName="reserved"
        )
    )
    assert status == 422
    assert [r.split(":")[0] for r in reply["reasons"]] == [
        "checkpointIntervalSeconds",
        "priorityLevel",
        "quotaShareName",
    ]


def test_disabled_share_is_skipped_and_the_next_share_is_used(stack: Stack) -> None:
    from .conftest import policy_text

    text = policy_text().replace(
        "    preemptionConfiguration: {inSharePreemption: ENABLED}\n",
        "    preemptionConfiguration: {inSharePreemption: ENABLED}\n    state: DISABLED\n",
    )
    stack.put_policy(text)
    status, reply = post_jobs(submission())
    assert status == 202 and reply["quotaShareName"] == "medium"
    status, reply = post_jobs(submission(quotaShareName="background"))
    assert status == 422
    assert reply["reasons"] == [
        "quotaShareName: share 'background' is DISABLED and accepts no new jobs"
    ]


def test_queue_failure_answers_503_and_leaves_the_record_failed(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack.sqs.delete_queue(QueueUrl=stack.queue_url)
    status, reply = post_jobs(submission(clientRequestId="q-1"))
    assert status == 503
    assert reply["message"].startswith("try again later: SQS SendMessage failed")
    assert reply["submissionId"]
    items = stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]
    assert [i["state"]["S"] for i in items] == ["FAILED"]
    assert items[0]["reasons"]["L"][0]["S"].startswith("submission queue: the submission could not")


def _flaky_queue(monkeypatch: pytest.MonkeyPatch, *, delivered: bool) -> list[str]:
    """Make the first ``SubmissionQueue.send`` raise; ``delivered``: after sending anyway.

    Returns the list of submission ids each call was made with.
    """
    from quotagov import composition
    from quotagov.governance.ports import SubmissionQueueError

    queue = composition.current(composition.JobsApi).submission_queue
    real_send = queue.send
    calls: list[str] = []

    def send(submission_id: str) -> None:
        calls.append(submission_id)
        if len(calls) == 1:
            if delivered:  # the message got through, but the reply was lost
                real_send(submission_id)
            raise SubmissionQueueError("SQS SendMessage failed: ServiceUnavailable")
        real_send(submission_id)

    monkeypatch.setattr(queue, "send", send)
    return calls


def _item(stack: Stack, submission_id: str) -> dict[str, Any]:
    item: dict[str, Any] = stack.dynamodb.get_item(
        TableName="quotagov-jobs", Key={"pk": {"S": submission_id}}, ConsistentRead=True
    )["Item"]
    return item


def _jobs_named(batch: Any, name: str) -> list[dict[str, Any]]:
    page = batch.list_service_jobs(
        jobQueue="ml-gov-queue", filters=[{"name": "JOB_NAME", "values": [name]}]
    )
    jobs: list[dict[str, Any]] = page["jobSummaryList"]
    return jobs


def test_retry_after_a_503_with_the_same_client_request_id_is_accepted_and_submitted_once(
    stack: Stack, batch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _flaky_queue(monkeypatch, delivered=False)
    status, reply = post_jobs(submission(clientRequestId="retry-1"))
    assert status == 503
    submission_id = reply["submissionId"]
    item = _item(stack, submission_id)
    assert item["state"] == {"S": "FAILED"} and item["failureKind"] == {"S": "enqueue-refused"}
    assert queue_depth(stack) == (0, 0)

    status, reply = post_jobs(submission(clientRequestId="retry-1"))
    assert status == 202, reply
    assert reply["submissionId"] == submission_id and reply["state"] == "QUEUED"
    item = _item(stack, submission_id)
    assert item["state"] == {"S": "QUEUED"} and item["reasons"] == {"L": []}
    assert "failureKind" not in item
    assert calls == [submission_id, submission_id]

    report = drain(stack)
    assert report.failures == [] and queue_depth(stack, stack.dlq_url) == (0, 0)
    assert _item(stack, submission_id)["state"] == {"S": "SUBMITTED"}
    assert len(_jobs_named(batch, "resnet-sweep-017")) == 1
    status, reply = post_jobs(submission(clientRequestId="retry-1"))
    assert (status, reply["state"]) == (202, "SUBMITTED")
    assert len(stack.dynamodb.scan(TableName="quotagov-jobs")["Items"]) == 1


def test_stale_message_of_a_send_reported_failed_leaves_it_failed_until_the_retry(
    stack: Stack, batch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The send reached SQS but reported failure: the 503 holds (no job) until a retry."""
    _flaky_queue(monkeypatch, delivered=True)
    status, reply = post_jobs(submission(clientRequestId="retry-2"))
    assert status == 503
    submission_id = reply["submissionId"]
    report = drain(stack)
    assert report.processed == 1 and report.failures == []
    assert _item(stack, submission_id)["state"] == {"S": "FAILED"}
    assert _jobs_named(batch, "resnet-sweep-017") == []

    status, reply = post_jobs(submission(clientRequestId="retry-2"))
    assert status == 202 and reply["submissionId"] == submission_id
    # The worker's idempotency kept no FAILED outcome from the stale message.
    drain(stack)
    item = _item(stack, submission_id)
    assert item["state"] == {"S": "SUBMITTED"} and "failureKind" not in item
    assert len(_jobs_named(batch, "resnet-sweep-017")) == 1
    assert queue_depth(stack, stack.dlq_url) == (0, 0)


def test_submitted_while_the_api_records_the_send_failure_ends_submitted(
    stack: Stack, batch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker submits between the API's failed send and its FAILED write."""
    from quotagov import composition
    from quotagov.governance.ports import SubmissionQueueError

    queue = composition.current(composition.JobsApi).submission_queue
    real_send = queue.send

    def send_then_worker_runs(submission_id: str) -> None:
        real_send(submission_id)
        drain(stack)
        raise SubmissionQueueError("SQS SendMessage failed: timeout")

    monkeypatch.setattr(queue, "send", send_then_worker_runs)
    status, reply = post_jobs(submission(clientRequestId="retry-3"))
    assert (status, reply["state"]) == (202, "SUBMITTED")
    assert len(_jobs_named(batch, "resnet-sweep-017")) == 1


#: A 2 KB body nested 1000 levels deep: deeper than the JSON decoder can recurse.
DEEPLY_NESTED = '{"team":"research","x":' + "[" * 1000 + "]" * 1000 + "}"


def test_deeply_nested_body_is_400_naming_the_body(stack: Stack) -> None:
    status, reply = post_jobs(None, raw=DEEPLY_NESTED)
    assert status == 400
    assert reply == {
        "message": "invalid request",
        "faults": [{"path": "(body)", "fault": "nested too deeply to decode"}],
    }
    assert stack.dynamodb.scan(TableName="quotagov-jobs")["Items"] == []
    assert queue_depth(stack) == (0, 0)


def test_get_shows_refusal_reasons(stack: Stack) -> None:
    _, reply = post_jobs(submission(priorityLevel="low"))
    status, view = get_job(reply["submissionId"])
    assert status == 200
    assert view["state"] == "REFUSED"
    assert view["reasons"] == [
        "priorityLevel: team 'research' may not use level 'low' (direct levels: standard)"
    ]
    assert "batchJobId" not in view


def test_get_of_unknown_or_foreign_submission(stack: Stack) -> None:
    status, view = get_job("does-not-exist")
    assert status == 404 and view == {"message": "no submission does-not-exist"}
    _, reply = post_jobs(submission())
    assert get_job(reply["submissionId"], BOB)[0] == 200  # same team
    # Fault 5: another team's caller gets the answer of a submission that does not
    # exist, word for word, so ids (uuid5 of principal and clientRequestId) leak nothing.
    sid = reply["submissionId"]
    missing = "00000000-0000-5000-8000-000000000000"
    assert get_job(sid, DAVE) == (404, {"message": f"no submission {sid}"})
    assert get_job(missing, DAVE) == (404, {"message": f"no submission {missing}"})
    assert get_job(sid, FRANK) == (404, {"message": f"no submission {sid}"})
    record = stack.jobs.get(sid)
    assert record is not None and record.state is SubmissionState.QUEUED


def test_get_of_a_waiting_job_shows_status_reason_and_front_of_share(
    stack: Stack, batch: Any
) -> None:
    # Two exploratory jobs: the first runs (background has one instance and borrows),
    # the others wait behind it.
    ids = []
    for i in range(5):
        status, reply = post_jobs(
            submission(clientRequestId=f"w-{i}", serviceRequestPayload=training_payload(f"w-{i}"))
        )
        assert status == 202
        ids.append(reply["submissionId"])
    drain(stack)
    batch.advance(60)
    views = [get_job(i)[1] for i in ids]
    assert all(v["state"] == "SUBMITTED" for v in views)
    waiting = [v for v in views if v["batch"]["status"] == "RUNNABLE"]
    assert waiting, [v["batch"] for v in views]
    fronts = [v for v in waiting if v["batch"]["frontOfShare"]["atFront"]]
    assert len(fronts) == 1
    front = fronts[0]
    assert front["batch"]["frontOfShare"]["jobArn"] == front["batchJobArn"]
    for v in waiting:
        assert v["quotaShareName"] == "background"
        assert v["batch"]["frontOfShare"]["jobArn"] == front["batchJobArn"]
        assert v["schedulingPriority"] == 10 and v["preemptionRetriesBeforeTermination"] == 1
        job = batch.describe_service_job(jobId=v["batchJobId"])
        assert v["batch"]["statusReason"] == job.get("statusReason")
    chain = views[0]["chain"]
    assert {k: v for k, v in chain.items() if k != "links"} == {
        "predecessorId": None,
        "originalId": None,
        "successorIds": [],
        "resubmitCount": 0,
    }
    assert [link["submissionId"] for link in chain["links"]] == [ids[0]]
    assert "jobStateFacts" not in views[0] and "jobStateVersion" not in views[0]


def test_a_retry_accepted_while_the_first_send_hangs_is_submitted(
    stack: Stack, batch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Request 1's SendMessage hangs (API Gateway gives up, the Lambda goes on); the
    client's retry is answered 202; then request 1's send fails. The retry's message
    must still end as one service job, not a FAILED record."""
    import threading

    from quotagov import composition
    from quotagov.governance.ports import SubmissionQueueError

    queue = composition.current(composition.JobsApi).submission_queue
    real_send = queue.send
    entered, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def send(submission_id: str) -> None:
        calls.append(submission_id)
        if len(calls) == 1:
            entered.set()
            release.wait(10)
            raise SubmissionQueueError("SQS SendMessage failed: timeout")
        real_send(submission_id)

    monkeypatch.setattr(queue, "send", send)
    first: list[Any] = []
    body = submission(clientRequestId="race-1", serviceRequestPayload=training_payload("race-1"))
    thread = threading.Thread(target=lambda: first.append(post_jobs(body)))
    thread.start()
    assert entered.wait(10)
    status, reply = post_jobs(body)
    release.set()
    thread.join()
    assert status == 202, reply
    assert first[0][0] == 202  # the first send lost the race: its failure changed nothing
    drain(stack)
    _, job = get_job(reply["submissionId"])
    assert job["state"] == "SUBMITTED", job
    assert len(_jobs_named(batch, "race-1")) == 1


RELEASE_ROLE = "arn:aws:iam::111122223333:role/sm-exec-release-prod"


def test_research_member_naming_the_release_teams_role_is_refused(stack: Stack, batch: Any) -> None:
    """Fault 2: alice (research) names release's ``sm-exec-release-prod`` in RoleArn:
    422 with the reason, stored REFUSED and audited, nothing queued or sent to Batch."""
    body = submission(serviceRequestPayload=training_payload(RoleArn=RELEASE_ROLE))
    status, reply = post_jobs(body, ALICE)
    reason = (
        f"serviceRequestPayload.RoleArn: execution role {RELEASE_ROLE!r} is not bound to "
        "team 'research' or class 'exploratory' in the policy (allowed: "
        "arn:aws:iam::111122223333:role/sm-exec-research*, "
        "arn:aws:iam::111122223333:role/sm-exec)"
    )
    assert status == 422
    assert reply == {"submissionId": reply["submissionId"], "state": "REFUSED", "reasons": [reason]}
    record = stack.jobs.get(reply["submissionId"])
    assert record is not None and record.state is SubmissionState.REFUSED
    assert record.quotaShareName is None and record.schedulingPriority is None
    assert queue_depth(stack) == (0, 0)
    drain(stack)
    assert [op for op, _ in batch.requests if op == "SubmitServiceJob"] == []
    assert [(d.action, d.details["reasons"]) for d in stack.audit.decisions] == [
        ("SubmissionRefused", [reason])
    ]


@pytest.mark.parametrize(
    ("role", "principal", "team", "workload_class"),
    [
        (
            "arn:aws:iam::111122223333:role/sm-exec-research-vision",
            ALICE,
            "research",
            "exploratory",
        ),
        ("arn:aws:iam::111122223333:role/sm-exec", ALICE, "research", "exploratory"),
        ("arn:aws:iam::111122223333:role/sm-exec-release-prod", FRANK, "release", "release"),
    ],
)
def test_roles_bound_to_the_team_or_class_are_accepted(
    stack: Stack, role: str, principal: str, team: str, workload_class: str
) -> None:
    payload = training_payload(RoleArn=role)
    changes: dict[str, Any] = {"team": team, "workloadClass": workload_class}
    if workload_class == "release":
        payload.pop("CheckpointConfig")
        changes["checkpointIntervalSeconds"] = None
    status, reply = post_jobs(submission(serviceRequestPayload=payload, **changes), principal)
    assert status == 202, reply


def test_a_role_that_only_looks_like_a_bound_one_is_refused(stack: Stack) -> None:
    """Another account's role of the same name, a longer name around the shared role
    and a path below it are not the bound roles."""
    for role in (
        "arn:aws:iam::444455556666:role/sm-exec-research",
        "arn:aws:iam::111122223333:role/xsm-exec",
        "arn:aws:iam::111122223333:role/sm-exec/admin",
        # the team's pattern sm-exec-research* does not reach into a path of that name
        "arn:aws:iam::111122223333:role/sm-exec-research-x/admin",
    ):
        body = submission(serviceRequestPayload=training_payload(RoleArn=role))
        status, reply = post_jobs(body, ALICE)
        assert status == 422, role
        assert reply["reasons"][0].startswith("serviceRequestPayload.RoleArn: ")


class _FrontOfShareBatch:
    """DescribeServiceJob says RUNNABLE; the snapshot puts ``front`` first in the share."""

    def __init__(self, front: str) -> None:
        self.front = front

    def describe_service_job(self, **request: Any) -> dict[str, Any]:
        return {"status": "RUNNABLE", "quotaShareName": "background", "jobArn": "arn:me/j-me"}

    def get_job_queue_snapshot(self, **request: Any) -> dict[str, Any]:
        entry = {"jobArn": self.front, "earliestTimeAtPosition": 1}
        return {"frontOfQuotaShares": {"quotaShares": {"background": [entry]}}}


@pytest.mark.parametrize(("front_team", "named"), [("research", True), ("applied", False)])
def test_the_front_of_the_share_is_named_only_when_it_is_the_viewers_team(
    front_team: str, named: bool
) -> None:
    """A waiting job's view says another team's job heads the share without naming it
    (no Batch ARN): only the viewer's team's jobs are named."""
    from quotagov.governance.jobs.view import job_view
    from quotagov.governance.model.job import JobRecord

    record = JobRecord(
        pk="sub-1",
        state=SubmissionState.SUBMITTED,
        team="research",
        workloadClass="exploratory",
        priorityLevel="standard",
        jobName="mine",
        principal=ALICE,
        quotaShareName="background",
        batchJobId="j-me",
        batchJobArn="arn:me/j-me",
    )
    front = "arn:aws:batch:eu-west-1:111122223333:service-job/j-other"
    view = job_view(
        record,
        _FrontOfShareBatch(front),  # type: ignore[arg-type]
        "queue",
        team_of=lambda batch_job_id: front_team if batch_job_id == "j-other" else None,
    )
    assert view["batch"]["frontOfShare"] == {
        "atFront": False,
        "jobArn": front if named else None,
        "earliestTimeAtPosition": "1970-01-01T00:00:00.001Z",
    }
