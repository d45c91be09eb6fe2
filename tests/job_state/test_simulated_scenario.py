"""Must-show: the simulated Batch's events for a job preempted twice with retries 1.

Scenario (simulated Batch, 3 x ml.g5.xlarge; shares of the example policy): a release
build holds the reserved instance and a background build background's own;
exploratory job ``explore-1`` (1 instance, the class's ``maxInstanceCount``,
checkpoints every 600 s, ``preemptionRetriesBeforeTermination`` 1) runs in
``background`` borrowing medium's idle instance; a medium job reclaims it at 1500 s
(preemption 1); it restarts at 1800 s when that job is done; another medium job
reclaims it at 2700 s (preemption 2): retries exhausted, FAILED.

By hand: attempt 1 ran 1500 s -> 1500 % 600 = 300 s lost, x 1 instance = 300
instance-seconds; attempt 2 ran 900 s -> 300 s lost, 300 instance-seconds; 600 in all.
The class ``exploratory`` says ``reclassify``: one successor in ``medium``.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotagov.handlers import job_state
from quotagov.policy import Policy
from support.lambda_context import LambdaContext

from .conftest import World, build_world, submitted

VOLATILE = {"version", "updatedAt", "jobStateVersion", "dispositionToken"}


def run_scenario(world: World) -> tuple[str, list[dict[str, Any]]]:
    """Drive the simulated Batch; return explore-1's batch job id and its events."""
    world.other_job("release-build", "reserved", run_seconds=100_000)
    world.other_job("background-build", "background", run_seconds=100_000)
    job = world.submit("explore-1", retries=1, checkpoint_interval=600)
    world.batch.advance(1500)
    world.other_job("medium-a", "medium", run_seconds=300)
    world.batch.advance(300)
    world.batch.advance(900)
    world.other_job("medium-b", "medium", run_seconds=300)
    world.batch.advance(10)
    assert job.batchJobId is not None
    own = [e for e in world.batch.events if e["detail"]["jobId"] == job.batchJobId]
    return job.batchJobId, own


def final_records(world: World) -> dict[str, dict[str, Any]]:
    items = {}
    for pk in ("explore-1", "explore-1-r1"):
        item = world.store.get(pk)
        if item is not None:
            items[pk] = {k: v for k, v in item.items() if k not in VOLATILE}
    return items


def test_retries_exhausted_job_is_reclassified_once_with_the_original_payload(
    world: World,
) -> None:
    _, events = run_scenario(world)
    assert [e["detail"]["status"] for e in events][-1] == "FAILED"
    world.clock.advance(400)  # the other jobs run on; their events are foreign
    world.pump()
    item = world.store.get("explore-1")
    assert item is not None
    state = item["jobState"]
    assert state["status"] == "FAILED"
    assert state["preemptionCount"] == 2
    assert [p["runSeconds"] for p in state["preemptions"]] == [1500, 900]
    assert [p["lostWorkSeconds"] for p in state["preemptions"]] == [300, 300]
    assert [p["lostInstanceSeconds"] for p in state["preemptions"]] == [300, 300]
    assert state["lostInstanceSeconds"] == 600
    assert state["runningSeconds"] == 2400
    assert state["waitingSeconds"] == 300
    assert state["submissionToFirstStartSeconds"] == 0
    disposition = item["disposition"]
    assert disposition["trigger"] == "retries-exhausted"
    assert (disposition["choice"], disposition["status"]) == ("reclassify", "applied")
    assert item["successorIds"] == ["explore-1-r1"]
    successors = submitted(world.batch)
    assert len(successors) == 1
    original = world.jobs.get("explore-1")
    assert original is not None
    assert successors[0]["serviceRequestPayload"] == original.serviceRequestPayload
    assert successors[0]["quotaShareName"] == "medium"
    successor = world.jobs.get("explore-1-r1")
    assert successor is not None
    assert (successor.predecessorId, successor.resubmitCount) == ("explore-1", 1)
    # feeding everything again changes nothing and resubmits nothing
    for event in events:
        job_state.handler(event, LambdaContext())
    assert len(submitted(world.batch)) == 1


def _replay(policy: Policy, batch_job_id: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    with build_world(policy, seed=11) as world:
        world.clock.advance(4000)
        world.record("explore-1", batch_job_id=batch_job_id)
        for event in events:
            job_state.handler(event, LambdaContext())
        assert len(submitted(world.batch)) == 1
        return final_records(world)


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_shuffled_and_duplicated_streams_give_the_same_records(
    policy: Policy, recorded: tuple[str, list[dict[str, Any]], dict[str, Any]], seed: int
) -> None:
    batch_job_id, events, expected = recorded
    stream = events + events  # every event twice
    random.Random(seed).shuffle(stream)
    assert _replay(policy, batch_job_id, stream) == expected


def test_a_failing_submit_is_retried_with_the_event_and_creates_one_successor(
    world: World,
) -> None:
    run_scenario(world)
    world.clock.advance(400)
    world.batch.fail_next("SubmitServiceJob", code="TooManyRequestsException")
    world.pump()  # the FAILED event's first delivery raises; the decision is kept
    item = world.store.get("explore-1")
    assert item is not None
    assert item["disposition"]["status"] == "applying"
    assert len(world.retries) == 1
    world.clock.advance(60)
    world.pump()  # redelivered: the same successor, the same clientToken, applied once
    item = world.store.get("explore-1")
    assert item is not None
    assert item["disposition"]["status"] == "applied"
    tries = submitted(world.batch)
    assert [t["clientToken"] for t in tries] == [tries[0]["clientToken"]] * 2
    created = {
        e["detail"]["jobId"]
        for e in world.batch.events
        if e["detail"]["jobName"] == "job-explore-1-r1"
    }
    assert len(created) == 1
