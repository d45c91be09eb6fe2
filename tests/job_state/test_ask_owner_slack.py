"""ask-owner through Slack: the buttons, a signed click on POST /slack/interactions,
one decision however many clicks, and a Batch failure that the next click finishes."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

import pytest
from slack_sdk.signature import SignatureVerifier

from quotagov import wiring
from quotagov.adapters.slack import SlackChatNotifier, build_web_client
from quotagov.local.fake_slack import FakeSlack

from .conftest import START, World, submitted
from .envelopes import preempted_twice
from .lambda_support import FakeContext

EVENTS = Path(__file__).resolve().parents[2] / "events"
SECRET = "job-state-test-signing-secret"
FRANK = "arn:aws:sts::111122223333:assumed-role/release/frank"


@pytest.fixture
def slack(world: World) -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        chat = SlackChatNotifier(build_web_client(fake.token, fake.base_url))
        world.chat = chat
        svc = wiring.services()
        svc.set("chat", chat)
        svc.set("slack_signing_secret", SECRET)
        svc.set("slack_responder", lambda url, text: None)
        yield fake


def exhausted_release_job(world: World) -> None:
    world.clock.set(START + 4000)
    world.record(
        "rel-2",
        batch_job_id="batch-rel-2",
        workload_class="release",
        team="release",
        share="reserved",
        retries=1,
        checkpoint_interval=None,
        principal=FRANK,
    )
    from quotagov.handlers import job_state

    for event in preempted_twice("batch-rel-2", int(START * 1000)):
        job_state.handler(event, FakeContext())


def click(world: World, fake: FakeSlack, user: str, action_id: str, value: str) -> int:
    from quotagov.handlers import slack_interactions

    message = fake.messages[0]
    event = json.loads((EVENTS / "slack_interactions-approve.json").read_text())
    payload = json.loads(parse_qs(base64.b64decode(event["body"]).decode())["payload"][0])
    payload["user"] = {"id": user, "username": user.lower(), "name": user.lower()}
    payload["container"].update(channel_id=message.channel, message_ts=message.ts)
    payload["channel"]["id"] = message.channel
    payload["message"]["ts"] = message.ts
    payload["response_url"] = fake.response_url_for(message.channel, message.ts)
    payload["actions"][0].update(action_id=action_id, value=value, block_id="disposition")
    body = urlencode({"payload": json.dumps(payload, separators=(",", ":"))}).encode()
    ts = int(world.clock.now())
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=str(ts), body=body)
    event["body"] = base64.b64encode(body).decode()
    event["headers"]["X-Slack-Request-Timestamp"] = str(ts)
    event["headers"]["X-Slack-Signature"] = signature
    event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
    reply: dict[str, Any] = slack_interactions.handler(event, FakeContext())
    return int(reply["statusCode"])


def buttons(blocks: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (e["action_id"], e["value"])
        for b in blocks
        if b["type"] == "actions"
        for e in b["elements"]
    ]


def test_the_owner_gets_buttons_and_one_click_decides(world: World, slack: FakeSlack) -> None:
    exhausted_release_job(world)
    [message] = slack.messages
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


def test_a_batch_failure_keeps_the_decision_and_the_next_click_finishes_it(
    world: World, slack: FakeSlack
) -> None:
    exhausted_release_job(world)
    world.batch.fail_next("SubmitServiceJob", code="ServerException")
    assert click(world, slack, "U0FRANK", "disposition_resubmit", "rel-2") == 200
    item = world.store.get("rel-2")
    assert item is not None
    assert item["disposition"]["status"] == "applying"
    message = slack.messages[0]
    updated = slack.message(message.channel, message.ts)
    assert "click again to retry" in updated.text
    assert buttons(updated.blocks) == [("disposition_resubmit", "rel-2")]
    assert click(world, slack, "U0FRANK", "disposition_resubmit", "rel-2") == 200
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
