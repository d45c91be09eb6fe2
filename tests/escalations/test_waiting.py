"""Why is my job waiting: position, reason code and estimated start of a RUNNABLE job,
read from the simulated Batch of the walkthrough at t=900 (``world.py``: bg-1, res-1
and med-1 run; bg-2 waits in background, at its limit)."""

from __future__ import annotations

import json
from typing import Any

from quotagov import wiring
from quotagov.governance.escalations import JobRecordLookup
from quotagov.governance.records import JobRecord, SubmissionState
from quotagov.governance.waiting import WaitReason
from support.events import rest_event
from support.lambda_context import LambdaContext
from support.principals import ALICE, DAVE

from .world import T0, World


def _explain(world: World, name: str = "bg-2") -> dict[str, Any]:
    job = JobRecordLookup(world.jobs).find(f"sub-{name}")
    assert job is not None
    explainer = wiring.services().wait_explainer
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
    world.jobs.create(
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
