"""ask-owner through Slack: the buttons, a signed click on POST /slack/interactions,
one decision however many clicks, and a Batch failure that the next click finishes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from escalations.world import ApplyQueueRelay
from quotagov import composition
from quotagov_tools.local.fake_slack import FakeSlack
from support.compose import MemoryReplays
from support.lambda_context import LambdaContext
from support.slack import chat_for, click_event, click_payload

from .conftest import World, exhausted_release_job, submitted

SECRET = "job-state-test-signing-secret"


@pytest.fixture
def slack(world: World) -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        chat = chat_for(fake)
        world.chat = chat
        composition.provide(
            chat=chat,
            slack_signing_secret=SECRET,
            slack_responder=lambda url, text: None,
            slack_replays=MemoryReplays(),
            # the click hands the decision to the ApplyQueue; the apply function's
            # composition settles it on delivery, as deployed
            decision_handoff=ApplyQueueRelay(),
        )
        yield fake


def question(fake: FakeSlack) -> Any:
    """The disposition question: the owner's message that carries (or carried) the
    buttons; the owner's other DMs (the preemptions, the failure) are notifications."""
    return next(m for m in fake.messages if "preempted" not in m.text and "failed at" not in m.text)


def click(world: World, fake: FakeSlack, user: str, action_id: str, value: str) -> int:
    from quotagov.handlers import slack_interactions

    message = question(fake)
    payload = click_payload(
        user=user,
        channel=message.channel,
        ts=message.ts,
        response_url=fake.response_url_for(message.channel, message.ts),
        action_id=action_id,
        value=value,
        block_id="disposition",
    )
    event = click_event(payload, secret=SECRET, timestamp=int(world.clock.now()))
    reply: dict[str, Any] = slack_interactions.handler(event, LambdaContext())
    return int(reply["statusCode"])


def buttons(blocks: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (e["action_id"], e["value"])
        for b in blocks
        if b["type"] == "actions"
        for e in b["elements"]
    ]


def test_the_owner_gets_buttons_and_one_click_decides(world: World, slack: FakeSlack) -> None:
    exhausted_release_job(world, "rel-2")
    message = question(slack)
    others = [m for m in slack.messages if m is not message]  # the owner's DMs before it
    assert [m.channel for m in others] == ["U0FRANK", "U0FRANK"]
    assert "was preempted 2 times" in others[0].text  # the first DM, made a digest
    assert " failed at " in others[1].text
    assert message.channel == "U0FRANK"  # frank's Slack id from the policy's team members
    assert buttons(message.blocks) == [
        ("disposition_resubmit", "rel-2"),
        ("disposition_abandon", "rel-2"),
    ]
    item = world.store.get("rel-2")
    assert item is not None
    assert item["disposition"]["status"] == "pending-owner"
    assert item["disposition"]["message"] == {"channel": message.channel, "ts": message.ts}
    assert click(world, slack, "U0ALICE", "disposition_resubmit", "rel-2") == 200  # refused
    assert world.store.get("rel-2")["disposition"]["status"] == "pending-owner"  # type: ignore[index]
    for _ in range(3):  # impatient double clicks
        assert click(world, slack, "U0FRANK", "disposition_resubmit", "rel-2") == 200
    item = world.store.get("rel-2")
    assert item is not None
    assert (item["disposition"]["status"], item["disposition"]["decidedBy"]) == (
        "applied",
        "U0FRANK",
    )
    assert len(submitted(world.batch)) == 1
    updated = slack.message(message.channel, message.ts)
    assert "Decision by <@U0FRANK>: resubmit" in updated.text
    assert buttons(updated.blocks) == []


class QueuedApply:
    """The ``ApplyQueue`` as SQS holds it: messages stay queued until :meth:`deliver`
    hands them to the apply function's composition; a delivery that raises (a Batch
    5xx) stays queued, as SQS delivers it again after its visibility timeout."""

    def __init__(self) -> None:
        self.queued: list[dict[str, Any]] = []

    def send(self, message: Any) -> None:
        self.queued.append(dict(message))

    def deliver(self) -> list[str]:
        """Deliver every queued message once; returns the errors of those left queued."""
        from quotagov.governance.apply_messages import parse_message
        from quotagov.governance.dispositions import settle_disposition

        applying = composition.current(composition.ApplyDecisions)
        left: list[dict[str, Any]] = []
        errors: list[str] = []
        for message in self.queued:
            try:
                settle_disposition(parse_message(message).record_id, applying.dispositions)
            except Exception as exc:  # the invocation fails: the message is redelivered
                left.append(message)
                errors.append(type(exc).__name__)
        self.queued = left
        return errors


def test_a_batch_failure_keeps_the_decision_and_the_redelivery_finishes_it(
    world: World, slack: FakeSlack
) -> None:
    """Batch answers the apply function's SubmitServiceJob with a 5xx: the decision stays
    ``applying`` with its hand-off queued, and the redelivered message applies it with the
    same clientToken (one service job)."""
    queue = QueuedApply()
    composition.provide(decision_handoff=queue)
    exhausted_release_job(world, "rel-2")
    world.batch.fail_next("SubmitServiceJob", code="ServerException")
    assert click(world, slack, "U0FRANK", "disposition_resubmit", "rel-2") == 200
    assert [m["kind"] for m in queue.queued] == ["disposition"]
    assert queue.deliver() == ["BatchServerError"]
    item = world.store.get("rel-2")
    assert item is not None
    assert item["disposition"]["status"] == "applying"
    assert len(queue.queued) == 1  # SQS delivers it again
    assert queue.deliver() == []
    item = world.store.get("rel-2")
    assert item is not None
    assert item["disposition"]["status"] == "applied"
    tries = submitted(world.batch)
    assert len(tries) == 2  # the failed call and the retry, with the same clientToken
    assert tries[0]["clientToken"] == tries[1]["clientToken"]
    created = {
        e["detail"]["jobId"] for e in world.batch.events if e["detail"]["jobName"] == "job-rel-2-r1"
    }
    assert len(created) == 1
