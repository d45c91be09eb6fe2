"""Owner notifications: a DM to the job's owner per preemption, failure and
disposition, once per event however often delivered, a digest for repeated
preemptions, the team's opt-out, and nothing for anyone else.

Through the job-state handler, with the moto JobsTable (which also holds the
notification log), the simulated Batch and the loopback fake Slack.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from quotagov import composition
from quotagov.adapters.dynamodb_notifications import DynamoDBNotificationLog
from quotagov.clock import ManualClock
from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.notifications import OwnerNotifier, preempted
from quotagov.handlers import job_state
from quotagov.policy import Policy, parse_policy
from quotagov_tools.local.fake_slack import FakeSlack
from support.lambda_context import LambdaContext
from support.policies import example_policy_text
from support.slack import chat_for

from .conftest import START, TABLE, World, build_world
from .envelopes import envelope, preempted_twice

pytestmark = pytest.mark.slow  # a loopback fake Slack server


def _policy(**research: Any) -> Policy:
    data = yaml.safe_load(example_policy_text())
    data["teams"]["research"].update(research)
    return parse_policy(data)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def _wire(world: World, fake: FakeSlack) -> None:
    chat = chat_for(fake)
    world.chat = chat
    composition.provide(chat=chat)


def _deliver(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [job_state.handler(e, LambdaContext()) for e in events]


def _log() -> DynamoDBNotificationLog:
    return DynamoDBNotificationLog.from_name(TABLE)


def _dms(fake: FakeSlack, channel: str = "U0ALICE") -> list[Any]:
    return [m for m in fake.messages if m.channel == channel]


def _exhausted(world: World) -> tuple[str, list[dict[str, Any]]]:
    """Alice's exploratory job (retries 1, checkpoint 600 s), preempted twice, FAILED."""
    world.clock.set(START + 4000)
    world.record("sub-1", batch_job_id="batch-1")
    return "sub-1", preempted_twice("batch-1", int(START * 1000))


def test_each_event_is_told_once_however_often_it_is_delivered(slack: FakeSlack) -> None:
    with build_world(_policy()) as world:
        _wire(world, slack)
        submission, events = _exhausted(world)
        redelivered = events + events[::-1] + random.Random(3).sample(events, len(events))

        _deliver(redelivered)

        entries = _log().entries(submission)
        assert [(e.kind, e.delivery) for e in entries] == [
            ("preempted", "posted"),
            ("preempted", "digest"),
            ("failed", "posted"),
            ("reclassified", "posted"),
        ]
        assert {e.recipient for e in entries} == {"U0ALICE"}
        posts = slack.calls_to("chat.postMessage")
        assert [c.params["channel"] for c in posts] == ["U0ALICE"] * 3
        assert len(slack.calls_to("chat.update")) == 1  # the digest, once
        first, failed, moved = _dms(slack)
        assert "preempted 2 times" in first.text and first.edits == 1
        assert "lost 300 s" in first.text  # attempt 1 ran 1500 s: 1500 % 600
        assert "Lost work in all: 600 s" in first.text  # + 900 % 600 of attempt 2
        assert "failed at" in failed.text
        assert "reclassified into share 'medium'" in moved.text
        context = moved.blocks[-1]["elements"][0]["text"]
        assert "GET /jobs/sub-1" in context  # the link to the job view

        _deliver(events)  # one more redelivery of everything
        assert len(slack.calls_to("chat.postMessage")) == 3
        assert len(_log().entries(submission)) == 4


def test_a_team_that_opted_out_gets_no_message(slack: FakeSlack) -> None:
    policy = _policy(notifications={"enabled": False})
    with build_world(policy) as world:
        _wire(world, slack)
        submission, events = _exhausted(world)

        _deliver(events)

        assert slack.calls_to("chat.postMessage") == []
        entries = _log().entries(submission)
        assert {e.delivery for e in entries} == {"opted-out"}
        assert [e.kind for e in entries] == ["preempted", "preempted", "failed", "reclassified"]
        item = world.store.get(submission)
        assert item is not None and item["disposition"]["status"] == "applied"  # unchanged


def test_a_slack_failure_never_fails_the_event_and_is_not_retried_into_a_duplicate(
    slack: FakeSlack,
) -> None:
    with build_world(_policy()) as world:
        _wire(world, slack)
        submission, events = _exhausted(world)
        slack.fail_next("chat.postMessage", "channel_not_found")

        results = _deliver(events[:4])  # up to the first preemption

        assert {r["outcome"] for r in results} == {"tracked"}
        [entry] = _log().entries(submission)
        assert (entry.delivery, entry.error) == ("failed", "channel_not_found")
        _deliver(events[:4])
        assert slack.messages == []  # the failed DM is not sent twice, nothing else was


def test_events_of_jobs_quotagov_did_not_submit_tell_nobody(slack: FakeSlack) -> None:
    """A job submitted around quotagov (no record, no tag) preempted: nobody is DMed,
    nothing is logged, even if its name or share look like a governed job's."""
    with build_world(_policy()) as world:
        _wire(world, slack)
        world.record("sub-1", batch_job_id="batch-1")  # alice's real job
        created = int(START * 1000)
        foreign = [
            envelope(
                "batch-foreign",
                "RUNNABLE",
                created + 100_000,
                created_ms=created,
                preempted_count=1,
                extra={"jobName": "job-sub-1", "tags": {"quotagov:owner": "U0ALICE"}},
            )
        ]

        [result] = _deliver(foreign)

        assert result["outcome"] == "foreign"
        assert slack.messages == []
        assert _log().entries() == []


def test_preemptions_outside_the_digest_window_get_their_own_message(slack: FakeSlack) -> None:
    with build_world(_policy(notifications={"digestWindowSeconds": 600})) as world:
        clock = ManualClock(START)
        notifier = OwnerNotifier(log=_log(), chat=chat_for(slack), policy=world.policy, clock=clock)
        job = JobRecord(
            pk="sub-9",
            state=SubmissionState.SUBMITTED,
            team="research",
            jobName="long-run",
            principal="arn:aws:sts::111122223333:assumed-role/researcher/alice",
            checkpointIntervalSeconds=600,
        )

        def hit(at: float) -> None:
            notifier.notify(
                job,
                preempted(
                    job,
                    attempt_key=str(int(at * 1000)),
                    stopped_at=at,
                    run_seconds=700,
                    lost_seconds=100,
                    kind="cross-share",
                ),
            )

        for at in (START, START + 300, START + 550, START + 2000):
            hit(at)

        first, second = _dms(slack)
        assert "preempted 3 times" in first.text and first.edits == 2
        assert "Lost work in all: 300 s" in first.text
        assert "was preempted at" in second.text and second.edits == 0


def test_a_preemption_told_after_the_job_failed_says_it_failed(slack: FakeSlack) -> None:
    with build_world(_policy()) as world:
        _wire(world, slack)
        submission, events = _exhausted(world)
        assert events[-1]["detail"]["status"] == "FAILED"

        _deliver([events[-1]])  # the earlier events come late (or never)

        first_post = slack.calls_to("chat.postMessage")[0].params["text"]
        assert "waits RUNNABLE" not in first_post
        assert first_post.endswith(
            "The job has since failed (Batch status FAILED); it will not restart."
        )
        assert [e.kind for e in _log().entries(submission)][:3] == [
            "preempted",
            "preempted",
            "failed",
        ]
        assert not any("waits RUNNABLE" in m.text for m in _dms(slack))


def test_preemption_messages_state_the_jobs_real_state() -> None:
    job = JobRecord(
        pk="sub-9",
        state=SubmissionState.SUBMITTED,
        team="research",
        workloadClass="exploratory",
        priorityLevel="standard",
        jobName="bg-9",
        principal="arn:aws:sts::111122223333:assumed-role/researcher/alice",
        quotaShareName="background",
        schedulingPriority=10,
        checkpointIntervalSeconds=600,
    )

    def told(status: str | None, retries_left: int | None) -> str:
        event = preempted(
            job,
            attempt_key="1",
            stopped_at=START,
            run_seconds=900.0,
            lost_seconds=300.0,
            kind="cross-share",
            retries_left=retries_left,
            status_now=status,
        )
        return event.text.split(" s). ")[-1]

    assert told("RUNNABLE", None) == "It waits RUNNABLE and restarts when capacity frees up."
    assert told(None, 2) == (
        "It waits RUNNABLE and restarts when capacity frees up "
        "(Batch tolerates 2 more preemption(s))."
    )
    assert told("RUNNING", 0) == (
        "The job has since restarted (Batch status RUNNING); one more preemption and Batch "
        "fails it."
    )
    assert told("SUCCEEDED", None) == "The job has since finished (Batch status SUCCEEDED)."
    assert told("FAILED", -1) == (
        "That exceeded its preemptionRetriesBeforeTermination, so Batch failed the job; "
        "it will not restart."
    )
