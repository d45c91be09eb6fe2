"""The job-state use case against a moto JobsTable: records, races, dispositions."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from quotagov.governance.dispositions import (
    DispositionConflictError,
    DispositionNotFoundError,
    InvalidChoiceError,
    decide_disposition,
)
from quotagov.governance.job_state.updates import (
    apply_state_event,
)
from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.submission import service_job_request
from quotagov.handlers.service_job_events import parse_state_change

from .conftest import START, World, submitted, terminated, training_payload
from .envelopes import QUEUE_ARN, attempt, envelope, preempted_twice, training_job_arn

CREATED_MS = int(START * 1000)


def fold_into(world: World, envelopes: list[dict[str, Any]]) -> list[Any]:
    return [
        apply_state_event(parse_state_change(e).to_state_event(), world.deps()) for e in envelopes
    ]


def test_reclassify_class_gets_one_successor_in_the_next_share_with_the_same_payload(
    world: World,
) -> None:
    world.clock.set(START + 4000)
    original = world.record("sub-1", batch_job_id="batch-1")
    results = fold_into(world, preempted_twice("batch-1", CREATED_MS))
    assert [r.outcome for r in results] == ["tracked"] * 6
    item = world.store.get("sub-1")
    assert item is not None
    state = item["jobState"]
    assert state["status"] == "FAILED"
    assert state["preemptionCount"] == 2
    assert [p["lostWorkSeconds"] for p in state["preemptions"]] == [300, 300]
    assert [p["lostInstanceSeconds"] for p in state["preemptions"]] == [300, 300]
    assert [p["kind"] for p in state["preemptions"]] == ["unattributed", "unattributed"]
    disposition = item["disposition"]
    assert disposition["status"] == "applied"
    assert disposition["choice"] == "reclassify"
    assert disposition["targetShare"] == "medium"
    assert item["successorIds"] == ["sub-1-r1"]
    successor = world.jobs.get("sub-1-r1")
    assert successor is not None
    assert successor.serviceRequestPayload == original.serviceRequestPayload
    assert successor.quotaShareName == "medium"
    assert successor.predecessorId == "sub-1"
    assert successor.originalId == "sub-1"
    assert successor.resubmitCount == 1
    assert successor.state == "SUBMITTED"
    assert [r["quotaShareName"] for r in submitted(world.batch)] == ["medium"]
    assert submitted(world.batch)[0]["serviceRequestPayload"] == original.serviceRequestPayload
    actions = [d.action for d in world.audit.decisions]
    assert actions == ["DispositionDecided", "DispositionApplied"]
    # the same stream again changes nothing and submits nothing more
    again = fold_into(world, preempted_twice("batch-1", CREATED_MS))
    assert [r.outcome for r in again] == ["unchanged"] * 6
    assert len(submitted(world.batch)) == 1


def test_resubmit_class_resubmits_in_the_same_share_and_respects_max_resubmits(
    world: World,
) -> None:
    world.clock.set(START + 4000)
    world.record(
        "sub-2",
        batch_job_id="batch-2",
        workload_class="scheduled",
        team="applied",
        share="medium",
        retries=1,
        checkpoint_interval=None,
        principal="arn:aws:sts::111122223333:assumed-role/researcher/dave",
    )
    fold_into(world, preempted_twice("batch-2", CREATED_MS))
    item = world.store.get("sub-2")
    assert item is not None
    assert item["disposition"]["choice"] == "resubmit"
    assert item["disposition"]["targetShare"] == "medium"
    assert item["jobState"]["preemptions"][0]["lostWorkSeconds"] == 1500
    # the successor is the chain's 1st; scheduled allows 2: give it batch id and exhaust it
    successor = world.store.get("sub-2-r1")
    assert successor is not None
    fold_into(world, preempted_twice(successor["batchJobId"], CREATED_MS))
    second = world.store.get("sub-2-r1")
    assert second is not None
    assert second["disposition"]["successorId"] == "sub-2-r2"
    third = world.store.get("sub-2-r2")
    assert third is not None
    fold_into(world, preempted_twice(third["batchJobId"], CREATED_MS))
    last = world.store.get("sub-2-r2")
    assert last is not None
    assert last["disposition"]["status"] == "abandoned"
    assert "maxResubmits=2 reached" in last["disposition"]["reason"]
    assert len(submitted(world.batch)) == 2


def test_ask_owner_leaves_the_decision_pending_and_applies_it_once(world: World) -> None:
    world.clock.set(START + 4000)
    world.record(
        "sub-3",
        batch_job_id="batch-3",
        workload_class="release",
        team="release",
        share="reserved",
        retries=0,
        checkpoint_interval=None,
        principal="arn:aws:sts::111122223333:assumed-role/release/frank",
    )
    events = preempted_twice("batch-3", CREATED_MS)
    failed = events[-1]
    failed["detail"]["preemptionConfiguration"] = {"preemptionRetriesBeforeTermination": 0}
    fold_into(world, events)
    item = world.store.get("sub-3")
    assert item is not None
    disposition = item["disposition"]
    assert disposition["status"] == "pending-owner"
    assert disposition["choices"] == ["resubmit", "abandon"]  # reserved is release's only share
    assert submitted(world.batch) == []
    with pytest.raises(DispositionNotFoundError, match=r"^jobId: no job 'sub-3'$"):
        decide_disposition("sub-3", "resubmit", "U0ALICE", deps=world.disposition_deps())
    assert world.store.get("sub-3") == item
    with pytest.raises(InvalidChoiceError, match="reclassify"):
        decide_disposition("sub-3", "reclassify", "U0FRANK", deps=world.disposition_deps())
    outcome = decide_disposition(
        "sub-3", "disposition_resubmit", "U0FRANK", deps=world.disposition_deps(), source="slack"
    )
    assert (outcome.status, outcome.choice, outcome.changed) == ("applied", "resubmit", True)
    again = decide_disposition("sub-3", "resubmit", "U0FRANK", deps=world.disposition_deps())
    assert (again.status, again.changed) == ("applied", False)
    with pytest.raises(DispositionConflictError):
        decide_disposition("sub-3", "abandon", "U0FRANK", deps=world.disposition_deps())
    assert len(submitted(world.batch)) == 1
    decided = [d for d in world.audit.decisions if d.action == "DispositionDecided"]
    assert [(d.actor, d.details["choice"]) for d in decided] == [("U0FRANK", "resubmit")]


def thrash_scenario(world: World) -> JobRecord:
    """exploratory job sub-4 (thrash guard 3 preemptions within 3600 s; retries 5, so no
    exhaustion) borrows medium's instance (background's own one is busy) and loses it to
    a medium job every 720 s."""
    world.other_job("release-build", "reserved", run_seconds=100_000)
    world.other_job("background-build", "background", run_seconds=100_000)
    job = world.submit("sub-4", retries=5)
    for i in range(3):
        world.advance(600)
        world.other_job(f"medium-{i}", "medium", run_seconds=120)  # reclaims: preempts sub-4
        world.pump()
        world.advance(120)
    return job


def test_thrash_guard_terminates_then_reclassifies_after_the_failed_event(world: World) -> None:
    job = thrash_scenario(world)
    item = world.store.get("sub-4")
    assert item is not None
    assert item["jobState"]["preemptionCount"] == 3
    disposition = item["disposition"]
    assert (disposition["trigger"], disposition["status"]) == ("thrash-guard", "applied")
    assert [t["jobId"] for t in terminated(world.batch)] == [job.batchJobId]
    # the successor was only submitted once Batch reported the old job FAILED
    ops = [
        op for op, r in world.batch.requests if op in ("TerminateServiceJob", "SubmitServiceJob")
    ]
    assert ops[-2:] == ["TerminateServiceJob", "SubmitServiceJob"]
    assert item["jobState"]["status"] == "FAILED"
    assert [r["quotaShareName"] for r in submitted(world.batch)] == ["medium"]
    successor = world.jobs.get("sub-4-r1")
    assert successor is not None
    assert successor.serviceRequestPayload == job.serviceRequestPayload
    assert world.batch.describe_service_job(jobId=str(successor.batchJobId))["quotaShareName"] == (
        "medium"
    )
    assert [d.action for d in world.audit.decisions] == [
        "DispositionTerminating",
        "DispositionDecided",
        "DispositionApplied",
    ]
    terminating, _, applied = world.audit.decisions
    assert terminating.details["jobId"] == job.batchJobId  # matches the CloudTrail call
    assert applied.details["jobId"] == successor.batchJobId
    assert applied.job_queue == "arn:aws:batch:eu-west-1:111122223333:job-queue/ml-gov-queue"
    assert (applied.actor, applied.resource) == ("quotagov", "sub-4")


def test_a_failed_terminate_is_repeated_when_the_event_is_redelivered(world: World) -> None:
    world.batch.fail_next("TerminateServiceJob", code="ServerException")
    job = thrash_scenario(world)
    item = world.store.get("sub-4")
    assert item is not None
    assert item["disposition"]["status"] == "applied"
    calls = terminated(world.batch)
    assert [c["jobId"] for c in calls] == [job.batchJobId] * 2  # failed once, then repeated
    assert [r["quotaShareName"] for r in submitted(world.batch)] == ["medium"]


def test_thrash_guard_ends_not_needed_when_the_job_succeeds_first(world: World) -> None:
    world.clock.set(START + 9000)
    world.record("sub-5", batch_job_id="batch-5", retries=5)
    s = 1000
    t0 = CREATED_MS
    a = [
        {
            "serviceResourceId": {"name": "TrainingJobArn", "value": training_job_arn(f"u{i}")},
            "startedAt": t0 + (i * 100 + 10) * s,
            "stoppedAt": t0 + (i * 100 + 60) * s,
        }
        for i in range(3)
    ]
    fold_into(
        world,
        [
            envelope(
                "batch-5",
                "RUNNABLE",
                t0 + 400 * s,
                created_ms=t0,
                attempts=a,
                preempted=a,
                preempted_count=3,
                retries=5,
            )
        ],
    )
    item = world.store.get("sub-5")
    assert item is not None
    assert item["disposition"]["status"] == "awaiting-termination"
    done = envelope(
        "batch-5",
        "SUCCEEDED",
        t0 + 900 * s,
        created_ms=t0,
        attempts=a,
        preempted=a,
        preempted_count=3,
        retries=5,
        stopped_ms=t0 + 900 * s,
    )
    fold_into(world, [done])
    item = world.store.get("sub-5")
    assert item is not None
    assert item["disposition"]["status"] == "not-needed"
    assert submitted(world.batch) == []


def test_foreign_jobs_are_recorded_and_otherwise_ignored(world: World) -> None:
    world.clock.set(START + 4000)
    results = fold_into(world, preempted_twice("not-ours", CREATED_MS))
    assert {r.outcome for r in results} == {"foreign"}
    item = world.store.get("FOREIGN#not-ours")
    assert item is not None
    assert item["statusesSeen"] == ["FAILED", "RUNNABLE", "RUNNING", "SCHEDULED"]
    assert "batchJobId" not in item
    assert submitted(world.batch) == []


def test_a_job_whose_record_has_no_batch_job_id_yet_waits_for_the_worker(world: World) -> None:
    """The submit path writes batchJobId only after SubmitServiceJob answered; the job's
    first events can arrive before that write. The tag alone does not prove the job is
    the submission's (anyone may set it), so those events are retried until the worker
    has recorded the job id; then they are tracked."""
    record = world.record("sub-young", batch_job_id=None)
    response = world.batch.submit_service_job(**service_job_request(record, QUEUE_ARN))
    world.batch.advance(10)
    assert world.pump() == []
    assert len(world.retries) == 4  # RUNNABLE .. RUNNING, each to be retried
    item = world.store.get("sub-young")
    assert item is not None and "jobState" not in item
    world.jobs.update_if_expected(
        "sub-young", {"batchJobId": response["jobId"], "state": SubmissionState.SUBMITTED.value}
    )
    world.clock.advance(60)
    results = world.pump()
    assert [r["outcome"] for r in results] == ["tracked"] * 4
    item = world.store.get("sub-young")
    assert item is not None and item["jobState"]["status"] == "RUNNING"


def _impostor(world: World, victim: str, name: str = "impostor") -> str:
    """A job submitted straight to Batch (around quotagov) tagged with ``victim``."""
    response = world.batch.submit_service_job(
        jobName=name,
        jobQueue=QUEUE_ARN,
        serviceJobType="SAGEMAKER_TRAINING",
        quotaShareName="medium",
        schedulingPriority=10,
        serviceRequestPayload=training_payload(name, 1, None, run_seconds=60),
        tags={"quotagov:submissionId": victim},
    )
    return str(response["jobId"])


def _claims(world: World) -> list[dict[str, Any]]:
    return [
        dict(d.details) for d in world.audit.decisions if d.action == "ForeignJobClaimsSubmission"
    ]


def test_an_impostor_tagged_with_a_refused_submission_gains_it_no_job_state(
    world: World,
) -> None:
    """Fault 3a: the refused record stays exactly as it was; the job is foreign."""
    world.record("sub-refused", batch_job_id=None)
    world.jobs.update_if_expected("sub-refused", {"state": SubmissionState.REFUSED.value})
    before = world.store.get("sub-refused")
    job_id = _impostor(world, "sub-refused")
    world.advance(120)
    assert world.retries == []
    assert world.store.get("sub-refused") == before
    item = world.store.get(f"FOREIGN#{job_id}")
    assert item is not None
    finding = (
        "SUBMISSION_TAG_OF_ANOTHER_JOB: tagged with submission 'sub-refused', "
        "which never reached Batch (state REFUSED)"
    )
    assert (item["claimedSubmissionId"], item["finding"]) == ("sub-refused", finding)
    assert {c["finding"] for c in _claims(world)} == {finding}
    assert {c["jobId"] for c in _claims(world)} == {job_id}


def test_an_impostor_tagged_with_a_running_submission_leaves_its_tracking_alone(
    world: World,
) -> None:
    """Fault 3b: the victim's own events keep being tracked, the impostor's are foreign
    (none fails, none reaches the failed-events queue)."""
    victim = world.submit("sub-victim", share="background", instance_count=1)
    world.advance(30)
    tracked = world.store.get("sub-victim")
    assert tracked is not None and tracked["jobState"]["status"] == "RUNNING"
    job_id = _impostor(world, "sub-victim")
    world.advance(120)
    assert world.retries == []
    after = world.store.get("sub-victim")
    assert after is not None and after["batchJobId"] == victim.batchJobId
    assert after["jobStateFacts"] == tracked["jobStateFacts"]
    item = world.store.get(f"FOREIGN#{job_id}")
    assert item is not None and item["claimedSubmissionId"] == "sub-victim"
    assert item["finding"] == (
        "SUBMISSION_TAG_OF_ANOTHER_JOB: tagged with submission 'sub-victim', "
        f"whose job is {victim.batchJobId!r}"
    )
    assert "SUCCEEDED" in item["statusesSeen"]


def test_an_impostor_racing_a_queued_submission_never_becomes_its_job(world: World) -> None:
    """Fault 3c: the victim is still being submitted when the impostor's events come;
    they wait, and once the worker records the victim's own job they are foreign."""
    record = world.record("sub-queued", batch_job_id=None)
    job_id = _impostor(world, "sub-queued")
    world.batch.advance(10)
    world.pump()
    assert world.retries and world.store.get(f"FOREIGN#{job_id}") is None
    response = world.batch.submit_service_job(**service_job_request(record, QUEUE_ARN))
    world.jobs.update_if_expected(
        "sub-queued", {"batchJobId": response["jobId"], "state": SubmissionState.SUBMITTED.value}
    )
    world.clock.advance(60)
    world.advance(120)
    item = world.store.get("sub-queued")
    assert item is not None and item["batchJobId"] == response["jobId"]
    assert item["jobState"]["status"] == "RUNNING"
    foreign = world.store.get(f"FOREIGN#{job_id}")
    assert foreign is not None and foreign["claimedSubmissionId"] == "sub-queued"


def test_untagged_jobs_are_foreign_and_batch_is_asked_once(world: World) -> None:
    world.other_job("direct", "medium", run_seconds=60)
    world.advance(120)
    item = world.store.get(f"FOREIGN#{world.batch.events[0]['detail']['jobId']}")
    assert item is not None
    assert item["statusesSeen"] == ["RUNNABLE", "RUNNING", "SCHEDULED", "STARTING", "SUCCEEDED"]
    describes = [r for op, r in world.batch.requests if op == "DescribeServiceJob"]
    assert len(describes) == 1


def test_a_lost_race_rereads_and_refolds(world: World) -> None:
    world.clock.set(START + 4000)
    world.record("sub-6", batch_job_id="batch-6", retries=None)
    events = preempted_twice("batch-6", CREATED_MS)
    fold_into(world, events[:3])
    # another invocation folds the preemption between our read and our write
    jobs = world.jobs
    real_get = jobs.get
    raced = {"done": False}

    def racing_get(submission_id: str) -> JobRecord | None:
        record = real_get(submission_id)
        if not raced["done"] and submission_id == "sub-6":
            raced["done"] = True
            apply_state_event(parse_state_change(events[3]).to_state_event(), world.deps())
        return record

    jobs.get = racing_get  # type: ignore[method-assign]
    fold_into(world, [events[4]])
    jobs.get = real_get  # type: ignore[method-assign]
    item = world.store.get("sub-6")
    assert item is not None
    assert item["jobState"]["status"] == "RUNNING"
    assert item["jobState"]["preemptionCount"] == 1
    assert item["jobStateVersion"] == 5
    assert json.dumps(item["jobStateFacts"], sort_keys=True)


def test_concurrent_owner_decisions_apply_exactly_one(world: World) -> None:
    world.clock.set(START + 4000)
    world.record(
        "sub-7",
        batch_job_id="batch-7",
        workload_class="release",
        team="release",
        share="reserved",
        retries=1,
        checkpoint_interval=None,
        principal="arn:aws:sts::111122223333:assumed-role/release/frank",
    )
    fold_into(world, preempted_twice("batch-7", CREATED_MS))
    # DynamoDB applies each conditional write atomically; moto's in-process backend does
    # not under threads, so its calls are serialised here (one call at a time, as DynamoDB
    # serialises writes to one item); the use case's own steps still interleave freely.
    world.jobs._client = _OneCallAtATime(world.jobs._client)  # type: ignore[assignment]
    choices = ["resubmit", "abandon"] * 4
    outcomes: list[Any] = []
    conflicts: list[Exception] = []
    lock = threading.Lock()

    def decide(choice: str) -> None:
        try:
            outcome = decide_disposition("sub-7", choice, "U0FRANK", deps=world.disposition_deps())
        except DispositionConflictError as error:
            with lock:
                conflicts.append(error)
            return
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=decide, args=(c,)) for c in choices]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    item = world.store.get("sub-7")
    assert item is not None
    winner = item["disposition"]["choice"]
    assert {o.choice for o in outcomes} == {winner}
    assert sum(1 for o in outcomes if o.changed) == 1
    assert len(outcomes) + len(conflicts) == len(choices)
    assert len(conflicts) == choices.count("abandon" if winner == "resubmit" else "resubmit")
    assert len(submitted(world.batch)) == (1 if winner == "resubmit" else 0)


class _OneCallAtATime:
    """Proxy of a boto3 client whose calls run one at a time."""

    _lock = threading.Lock()

    def __init__(self, table: Any) -> None:
        self._table = table

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._table, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attribute(*args, **kwargs)

        return call


def test_one_preemption_reported_without_and_then_with_its_arn_counts_once(world: World) -> None:
    """Batch says preemptedAttemptCount=1 throughout; the job then FAILS for another
    reason with preemptionRetriesBeforeTermination=1: not exhausted, so no successor."""
    s = 1000
    start, stop = CREATED_MS + 60 * s, CREATED_MS + 600 * s
    with_arn = attempt("one", start, stop)
    no_arn = {k: v for k, v in with_arn.items() if k != "serviceResourceId"}
    world.clock.set(START + 2000)
    world.record("sub-1", batch_job_id="batch-1", retries=1)
    results = fold_into(
        world,
        [
            envelope(
                "batch-1",
                "RUNNABLE",
                stop,
                created_ms=CREATED_MS,
                preempted=[no_arn],
                preempted_count=1,
            ),
            envelope(
                "batch-1",
                "FAILED",
                stop + 900 * s,
                created_ms=CREATED_MS,
                attempts=[with_arn],
                preempted=[with_arn],
                preempted_count=1,
                stopped_ms=stop + 900 * s,
            ),
        ],
    )
    assert [len(r.new_preemptions) for r in results] == [1, 0]
    item = world.store.get("sub-1")
    assert item is not None
    state = item["jobState"]
    assert state["status"] == "FAILED" and state["preemptionCount"] == 1
    assert [p["trainingJobArn"] for p in state["preemptions"]] == [training_job_arn("one")]
    assert [p["runSeconds"] for p in state["preemptions"]] == [540]
    assert item.get("disposition") is None
    assert submitted(world.batch) == []
