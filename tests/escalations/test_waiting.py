"""Why is my job waiting: position, reason code and estimated start of a RUNNABLE job,
read from the simulated Batch of the walkthrough at t=900 (``world.py``: bg-1, res-1
and med-1 run; bg-2 waits in background, at its limit)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from quotagov import composition
from quotagov.governance.escalations import JobRecordLookup
from quotagov.governance.jobs.waiting import WaitReason
from quotagov.governance.model.job import JobRecord, SubmissionState
from support.compose import wire
from support.events import rest_event
from support.lambda_context import LambdaContext
from support.principals import ALICE, DAVE

from .world import T0, World


def _explain(world: World, name: str = "bg-2") -> dict[str, Any]:
    job = JobRecordLookup(world.jobs).find(f"sub-{name}")
    assert job is not None
    explainer = composition.current(composition.JobsApi).wait_explainer
    return explainer.explain(job, world.describe(name)).to_dict()


def test_share_at_limit_with_nothing_to_borrow(world: World) -> None:
    waiting = _explain(world)
    assert waiting["position"] == {"queue": 1, "share": 1, "queueLength": 1}
    assert waiting["reason"]["code"] == WaitReason.SHARE_AT_LIMIT
    assert "background uses 1 of its 1" in waiting["reason"]["text"]
    # every payload caps an attempt at 86400 s (support.payloads): bg-1 (started at 0)
    # frees background's own instance first, at 86400 at the latest (med-1 at 87000)
    assert waiting["estimatedStartAt"] == T0 + 86400
    assert waiting["estimate"]["computedAt"] == world.clock.now()
    assert waiting["estimate"]["computeSeconds"] >= 0


def test_idle_reserved_capacity_is_not_borrowable(world: World) -> None:
    world.batch.terminate_service_job(jobId=world.job_ids["res-1"], reason="done early")
    world.batch.sync()
    assert world.describe("bg-2")["status"] == "RUNNABLE"  # reserved never lends
    waiting = _explain(world)
    assert waiting["reason"]["code"] == WaitReason.BORROW_BLOCKED_BY_RESERVE
    assert "RESERVE share(s) reserved" in waiting["reason"]["text"]


def test_jobs_ahead_in_the_share(world: World) -> None:
    """bg-3 (same priority as bg-2, submitted later) waits behind bg-2."""
    payload = world.describe("bg-2")["serviceRequestPayload"]
    answer = world.batch.submit_service_job(
        jobName="bg-3",
        jobQueue=world.policy.jobQueue,
        serviceJobType="SAGEMAKER_TRAINING",
        quotaShareName="background",
        schedulingPriority=10,
        serviceRequestPayload=payload,
    )
    world.jobs.create_if_absent(
        JobRecord(
            pk="sub-bg-3",
            state=SubmissionState.SUBMITTED,
            team="research",
            jobName="bg-3",
            principal=ALICE,
            quotaShareName="background",
            schedulingPriority=10,
            batchJobId=answer["jobId"],
            batchJobArn=answer["jobArn"],
        )
    )
    world.job_ids["bg-3"] = answer["jobId"]
    world.batch.sync()
    assert world.describe("bg-3")["status"] == "RUNNABLE"
    waiting = _explain(world, "bg-3")
    assert waiting["reason"]["code"] == WaitReason.LOWER_PRIORITY
    assert waiting["reason"]["text"].startswith(
        "1 job(s) of share background are ahead of it (0 with a higher"
    )
    assert waiting["position"] == {"queue": 2, "share": 2, "queueLength": 2}
    # bg-2 takes background's instance when bg-1 ends (86400); bg-3 then borrows
    # medium's when med-1 ends (600 + 86400), at the latest
    assert waiting["estimatedStartAt"] == T0 + 600 + 86400


def test_the_route_shows_it_to_the_team_and_no_one_else(world: World) -> None:
    from quotagov.handlers import jobs_api

    def get(principal: str) -> tuple[int, dict[str, Any]]:
        event = rest_event(
            "jobs_api-get",
            path="/jobs/sub-bg-2",
            path_parameters={"jobId": "sub-bg-2"},
            principal=principal,
        )
        reply = jobs_api.handler(event, LambdaContext())  # type: ignore[arg-type]
        return int(reply["statusCode"]), json.loads(reply["body"])

    status, view = get(ALICE)
    assert status == 200
    assert view["batch"]["waiting"]["reason"]["code"] == "SHARE_AT_LIMIT"
    status, refused = get(DAVE)  # applied team: not his job; told as if it did not exist
    assert status == 404 and "waiting" not in json.dumps(refused)


# ---------------------------------------------------------------- capacity lent out
#
# Hand-worked, on the simulated Batch (STRICT_FIFO, no startup time): a service
# environment of 4 x ml.g5.xlarge under shares whose limits add up to 5 (background 1,
# LEND_AND_BORROW; medium 3, LEND; reserved 1, RESERVE).
#
#   t=0    bg-1 (background) within quota                        free 3
#   t=60   bg-2 borrows: free 3 - reserved's idle 1 = 2 >= 1     free 2
#   t=120  bg-3 borrows: free 2 - 1 = 1 >= 1                     free 1
#   t=180  res-1 (reserved) within quota                         free 0
#   t=240  med-1 asks for 3: within medium's quota (0 + 3 <= 3), but taking back every
#          borrowed instance (bg-3, bg-2) frees only 2 < 3, so nothing is preempted
#          (spec, "Cross-share preemption") and med-1 waits RUNNABLE.
#
# Borrowers, latest started first: bg-3 (t=120), bg-2 (t=60); bg-1 is within
# background's limit. Every payload caps an attempt at 86400 s: bg-1 ends at 86400
# (background still borrows 1, free 1: 1 + 1 < 3), bg-2 at 86460 (free 2, nothing
# borrowed), bg-3 at 86520 (free 3): med-1 starts at 86520 at the latest.

LENT_T0 = T0


def _lent_out_policy() -> Any:
    import yaml

    from quotagov.policy import parse_policy
    from support.policies import example_policy_text

    data = yaml.safe_load(example_policy_text())
    for share in data["quotaShares"]:
        if share["quotaShareName"] == "medium":
            share["capacityLimits"] = [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 3}]
    return parse_policy(data)


def _payload(name: str, instances: int = 1) -> str:
    from support.payloads import training_job_request

    return json.dumps(
        training_job_request(
            name,
            instance_type="ml.g5.xlarge",
            instance_count=instances,
            role_arn="arn:aws:iam::111122223333:role/sm-exec-applied",
        )
    )


@pytest.fixture
def lent_out(dynamodb_endpoint: str, aws_env: None) -> Iterator[dict[str, Any]]:
    """The hand-worked state above at t=300, wired into ``quotagov.wiring``."""
    import uuid

    import boto3

    from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository, jobs_table_definition
    from quotagov.clock import ManualClock
    from quotagov.governance.ports import NullAuditSink
    from quotagov.settings import Settings
    from quotagov_tools.batch_simulated import SimulatedBatch
    from support.aws import REGION

    policy = _lent_out_policy()
    clock = ManualClock(LENT_T0)
    client = boto3.client("dynamodb", region_name=REGION, endpoint_url=dynamodb_endpoint)
    table = f"jobs-{uuid.uuid4().hex[:8]}"
    client.create_table(**jobs_table_definition(table))
    jobs = DynamoDBJobsRepository(table, clock, client)
    batch = SimulatedBatch.from_policy(
        policy,
        capacity={"ml.g5.xlarge": 4},
        options={"startupSeconds": 0, "queueing": "STRICT_FIFO"},
        clock=clock,
    )
    ids: dict[str, str] = {}
    plan = [
        ("bg-1", "background", 0, 1),
        ("bg-2", "background", 60, 1),
        ("bg-3", "background", 120, 1),
        ("res-1", "reserved", 180, 1),
        ("med-1", "medium", 240, 3),
    ]
    for name, share, at, instances in plan:
        clock.set(LENT_T0 + at)
        batch.sync()
        answer = batch.submit_service_job(
            jobName=name,
            jobQueue=policy.jobQueue,
            serviceJobType="SAGEMAKER_TRAINING",
            quotaShareName=share,
            schedulingPriority=10,
            serviceRequestPayload=_payload(name, instances),
        )
        ids[name] = answer["jobId"]
    jobs.create_if_absent(
        JobRecord(
            pk="sub-med-1",
            state=SubmissionState.SUBMITTED,
            team="applied",
            workloadClass="scheduled",
            priorityLevel="standard",
            jobName="med-1",
            principal=DAVE,
            quotaShareName="medium",
            schedulingPriority=10,
            serviceRequestPayload=_payload("med-1", 3),
            instanceType="ml.g5.xlarge",
            instanceCount=3,
            batchJobId=ids["med-1"],
            batchJobArn=f"{policy.jobQueue.replace('job-queue', 'service-job')}/{ids['med-1']}",
            createdAt=int(LENT_T0 + 240),
        )
    )
    # bg-3 is a submission of dave's team (applied), bg-2 one of research's: dave's view
    # may name the first, and only count the second (no name, no Batch id).
    for name, team in (("bg-3", "applied"), ("bg-2", "research")):
        jobs.create_if_absent(
            JobRecord(
                pk=f"sub-{name}",
                state=SubmissionState.SUBMITTED,
                team=team,
                workloadClass="exploratory",
                priorityLevel="standard",
                jobName=name,
                principal=DAVE,
                quotaShareName="background",
                schedulingPriority=10,
                serviceRequestPayload=_payload(name, 1),
                instanceType="ml.g5.xlarge",
                instanceCount=1,
                batchJobId=ids[name],
                createdAt=int(LENT_T0),
            )
        )
    clock.set(LENT_T0 + 300)
    batch.sync()
    wire(
        Settings(job_queue=policy.jobQueue),
        clock=clock,
        policy=policy,
        batch=batch,
        jobs=jobs,
        audit=NullAuditSink(),
    )
    try:
        yield {"batch": batch, "ids": ids, "jobs": jobs, "clock": clock}
    finally:
        composition.reset()


def _lent_out_view(lent_out: dict[str, Any], **explainer: Any) -> dict[str, Any]:
    from quotagov.governance.jobs.waiting import WaitExplainer

    svc = composition.current(composition.JobsApi)
    job = JobRecordLookup(svc.jobs).find("sub-med-1")
    assert job is not None
    description = lent_out["batch"].describe_service_job(jobId=lent_out["ids"]["med-1"])
    if explainer:
        built = WaitExplainer(
            policy=svc.policy,
            batch=svc.batch,
            jobs=JobRecordLookup(svc.jobs),
            clock=svc.clock,
            capacity=svc.environment_capacity,
            **explainer,
        )
    else:
        built = svc.wait_explainer
    return built.explain(job, description).to_dict()


def test_batch_holds_the_state_worked_by_hand(lent_out: dict[str, Any]) -> None:
    batch, ids = lent_out["batch"], lent_out["ids"]
    status = {name: batch.describe_service_job(jobId=i)["status"] for name, i in ids.items()}
    assert status == {
        "bg-1": "RUNNING",
        "bg-2": "RUNNING",
        "bg-3": "RUNNING",
        "res-1": "RUNNING",
        "med-1": "RUNNABLE",
    }
    preempted = [
        name
        for name, i in ids.items()
        if batch.describe_service_job(jobId=i).get("preemptionSummary")
    ]
    assert preempted == []  # reclaiming bg-3 and bg-2 would not make room for 3


def test_capacity_lent_out_names_only_the_viewers_teams_borrowers(
    lent_out: dict[str, Any],
) -> None:
    """Dave (applied) sees why med-1 waits: bg-3, his team's, is named; bg-2, research's
    job, is counted only: neither its name nor its Batch id is in his answer."""
    ids = lent_out["ids"]
    waiting = _lent_out_view(lent_out)
    assert waiting["position"] == {"queue": 1, "share": 1, "queueLength": 1}
    reason = waiting["reason"]
    assert reason["code"] == WaitReason.CAPACITY_LENT_OUT
    assert reason["borrowers"] == [
        {
            "jobId": ids["bg-3"],
            "jobName": "bg-3",
            "quotaShareName": "background",
            "instanceType": "ml.g5.xlarge",
            "instances": 1,
        },
    ]
    assert reason["moreBorrowers"] == 1
    assert reason["text"] == (
        "Share medium uses 0 of its 3 x ml.g5.xlarge; the rest is lent out and not "
        "reclaimed for it. Jobs of other shares borrow 2 x ml.g5.xlarge: "
        f"bg-3 (job {ids['bg-3']}, share background, 1 x ml.g5.xlarge); "
        "and 1 more job(s). "
        "Cross-share preemption gives lent capacity back only when that makes room for "
        "the job."
    )
    answer = json.dumps(waiting)
    assert ids["bg-2"] not in answer and "bg-2" not in answer
    assert waiting["estimatedStartAt"] == LENT_T0 + 120 + 86400


def test_a_view_reads_a_bounded_number_of_jobs_and_reuses_its_reading(
    lent_out: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At most max_jobs DescribeServiceJob calls per view (the waiting job's own
    description is given), and a second view within QUEUE_READING_SECONDS reads
    Batch not at all."""
    from quotagov.governance.jobs.waiting import QUEUE_READING_SECONDS, QueueReadings

    batch = lent_out["batch"]
    calls: list[str] = []
    real = batch.describe_service_job

    def counted(**request: Any) -> Any:
        calls.append(request["jobId"])
        return real(**request)

    monkeypatch.setattr(batch, "describe_service_job", counted)
    clock = lent_out["clock"]
    readings = QueueReadings(clock)
    first = _lent_out_view(lent_out, max_jobs=2, readings=readings)
    assert 0 < len(calls) <= 2 + 1  # + the test's own description of med-1
    assert "read from the first 2 jobs the queue lists" in first["estimate"]["basis"]
    calls.clear()
    _lent_out_view(lent_out, readings=readings)
    assert calls == [lent_out["ids"]["med-1"]]  # only the view's own DescribeServiceJob
    clock.set(clock.now() + QUEUE_READING_SECONDS)
    calls.clear()
    _lent_out_view(lent_out, readings=readings)
    assert len(calls) > 1  # read again once the reading is older


def test_only_the_first_borrowers_are_named_and_the_rest_counted(
    lent_out: dict[str, Any],
) -> None:
    ids = lent_out["ids"]
    reason = _lent_out_view(lent_out, max_named=0)["reason"]
    assert reason["borrowers"] == []
    assert reason["moreBorrowers"] == 2
    assert "borrow 2 x ml.g5.xlarge: 2 job(s). " in reason["text"]
    assert ids["bg-2"] not in reason["text"] and ids["bg-3"] not in reason["text"]


def test_the_route_names_the_borrowers_to_the_owner(lent_out: dict[str, Any]) -> None:
    from quotagov.handlers import jobs_api

    event = rest_event(
        "jobs_api-get",
        path="/jobs/sub-med-1",
        path_parameters={"jobId": "sub-med-1"},
        principal=DAVE,
    )
    reply = jobs_api.handler(event, LambdaContext())  # type: ignore[arg-type]
    assert reply["statusCode"] == 200
    reason = json.loads(reply["body"])["batch"]["waiting"]["reason"]
    assert [(b["jobName"], b["jobId"]) for b in reason["borrowers"]] == [
        ("bg-3", lent_out["ids"]["bg-3"]),
    ]
    assert lent_out["ids"]["bg-2"] not in reply["body"]


# ---------------------------------------------------------------- fits now
#
# Batch may list a job RUNNABLE that its next scheduling pass will start. The reason
# is read from the rebuilt scheduler before that pass, so it must say DISPATCHING
# (the walkthrough policy: 3 x ml.g5.xlarge, one per share), not "lent out" or "no
# other share has an idle instance to lend".


def _reason_before_the_pass(started: list[tuple[str, str]], waiting: tuple[str, str]) -> Any:
    from quotagov.clock import ManualClock
    from quotagov.governance.escalations.preview import ActiveJob, SchedulerImpactPreviewer
    from quotagov.governance.jobs.waiting import wait_reason
    from quotagov_tools.batch_simulated import SimulatedBatch

    from .world import walkthrough_policy

    policy = walkthrough_policy()
    clock = ManualClock(T0 + 100)
    batch = SimulatedBatch.from_policy(policy, capacity={"ml.g5.xlarge": 3}, clock=clock)

    def job(name: str, share: str, status: str) -> ActiveJob:
        return ActiveJob(
            job_id=f"id-{name}",
            name=name,
            share=share,
            status=status,
            instance_type="ml.g5.xlarge",
            instance_count=1,
            priority=10,
            created_at=T0,
            started_at=T0 if status == "RUNNING" else None,
            checkpoint=None,
        )

    active = [job(n, s, "RUNNING") for n, s in started] + [job(*waiting, "RUNNABLE")]
    reader = SchedulerImpactPreviewer(policy=policy, batch=batch, jobs=None, clock=clock)  # type: ignore[arg-type]
    engine = reader.engine(active, clock.now(), {f"id-{waiting[0]}": 0})
    by_id = {a.job_id: a for a in active}
    return wait_reason(engine, by_id[f"id-{waiting[0]}"], by_id, policy)


def test_a_job_within_quota_with_free_instances_is_dispatching() -> None:
    reason = _reason_before_the_pass([], ("med-9", "medium"))
    assert reason.code == WaitReason.DISPATCHING
    assert reason.text == (
        "1 x ml.g5.xlarge can be given to it now (within share medium's quota, 3 free): "
        "Batch starts it at its next scheduling pass."
    )
    assert reason.borrowers == ()


def test_a_job_that_may_borrow_an_idle_instance_is_dispatching() -> None:
    """background is at its limit; medium's instance is idle and lendable (reserved's
    is not): bg-2 borrows at the next pass."""
    reason = _reason_before_the_pass([("bg-1", "background")], ("bg-2", "background"))
    assert reason.code == WaitReason.DISPATCHING
    assert "(borrowed: 1 free outside RESERVE quota)" in reason.text
