"""Owner DMs whose Slack post failed are retried until delivered, or parked with an alarm.

Found by ``quotagov demo --faults 1``: bg-1's preemption DM met a Slack failure on
every try of its one delivery, was logged ``delivery: failed`` and was never sent. Now
``ApplyDecisionsFunction``'s 5-minute schedule posts every failed DM again
(:meth:`OwnerNotifier.retry_failed`), claiming each with a conditional write, and parks
one that failed :data:`MAX_DELIVERY_ATTEMPTS` times (metric ``OwnerNoticesParked``).

Found by the same run: the job-state write that recorded bg-2's preemption took effect
but its answer was lost; botocore's re-sent copy met its version condition, the event
was folded again, found nothing new, and no DM was ever claimed. The write is now
recognised as our own and the owner is told.

Through the job-state handler, with the moto JobsTable, the simulated Batch and the
loopback fake Slack.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ReadTimeoutError

from quotagov import composition
from quotagov.adapters.dynamodb_notifications import RETRY_LIST_KEY, DynamoDBNotificationLog
from quotagov.governance.notifications.owner import MAX_DELIVERY_ATTEMPTS
from quotagov.handlers import job_state
from quotagov_tools.local.fake_slack import FakeSlack
from support.lambda_context import LambdaContext
from support.policies import example_policy
from support.slack import chat_for

from .conftest import START, TABLE, World, build_world
from .envelopes import preempted_twice

pytestmark = pytest.mark.slow  # a loopback fake Slack server


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def world(slack: FakeSlack) -> Iterator[World]:
    with build_world(example_policy()) as built:
        chat = chat_for(slack)
        built.chat = chat
        composition.provide(chat=chat)
        yield built


def _log() -> DynamoDBNotificationLog:
    return DynamoDBNotificationLog.from_name(TABLE)


def _retry_list() -> list[str]:
    item = _log()._table.get_item(Key={"pk": RETRY_LIST_KEY}, ConsistentRead=True).get("Item")
    return sorted((item or {}).get("pending") or [])


def _first_preemption_failed(world: World, slack: FakeSlack) -> list[dict[str, Any]]:
    """Alice's job preempted once; the DM's post fails (``fatal_error``, which the
    Slack client does not retry)."""
    world.clock.set(START + 4000)
    world.record("sub-1", batch_job_id="batch-1")
    events = preempted_twice("batch-1", int(START * 1000))
    slack.fail_next("chat.postMessage", "fatal_error")
    for event in events[:4]:  # up to the first preemption
        job_state.handler(event, LambdaContext())
    return events


def test_a_failed_dm_is_posted_by_the_next_retry_and_only_once(
    world: World, slack: FakeSlack
) -> None:
    _first_preemption_failed(world, slack)
    [failed] = _log().entries("sub-1")
    assert (failed.delivery, failed.error, failed.attempts) == ("failed", "fatal_error", 1)
    assert _retry_list() == [f"sub-1|{failed.event_key}"]
    assert slack.messages == []

    world.clock.set(START + 4300)
    [retried] = composition.current(composition.ApplyDecisions).owner_notifier.retry_failed()

    assert (retried.delivery, retried.attempts, retried.error) == ("posted", 2, None)
    [stored] = _log().entries("sub-1")
    assert stored == retried
    assert stored.retry_at == START + 4300
    assert stored.text == failed.text
    [dm] = slack.messages
    assert (dm.channel, dm.text) == ("U0ALICE", failed.text)
    assert (stored.channel, stored.ts) == (dm.channel, dm.ts)
    assert _retry_list() == []
    # the next tick finds nothing to do: one DM, never two
    assert composition.current(composition.ApplyDecisions).owner_notifier.retry_failed() == []
    assert len(slack.messages) == 1


def test_two_retries_at_once_post_it_once(world: World, slack: FakeSlack) -> None:
    _first_preemption_failed(world, slack)
    log = _log()
    [failed] = log.entries("sub-1")
    claimed = log.claim_retry(failed, now=START + 4300)
    assert claimed is not None and (claimed.delivery, claimed.attempts) == ("retrying", 2)
    # a concurrent run read the same failed entry: its claim is refused
    assert log.claim_retry(failed, now=START + 4300) is None
    # and a later run leaves the claim alone while it is fresh...
    assert composition.current(composition.ApplyDecisions).owner_notifier.retry_failed() == []
    assert slack.messages == []
    # ...but takes over a claim whose run died (older than the retry lease)
    world.clock.set(START + 4300 + 601)
    [retried] = composition.current(composition.ApplyDecisions).owner_notifier.retry_failed()
    assert (retried.delivery, retried.attempts) == ("posted", 3)
    assert len(slack.messages) == 1


def test_a_dm_that_fails_every_try_is_parked(world: World, slack: FakeSlack) -> None:
    _first_preemption_failed(world, slack)
    notifier = composition.current(composition.ApplyDecisions).owner_notifier
    outcomes = []
    for tick in range(1, MAX_DELIVERY_ATTEMPTS + 1):
        slack.fail_next("chat.postMessage", "fatal_error")
        world.clock.set(START + 4000 + 300 * tick)
        outcomes += [(e.delivery, e.attempts, e.error) for e in notifier.retry_failed()]

    assert outcomes == [
        *[("failed", n, "fatal_error") for n in range(2, MAX_DELIVERY_ATTEMPTS + 1)],
        ("parked", MAX_DELIVERY_ATTEMPTS, "fatal_error"),
    ]
    [stored] = _log().entries("sub-1")
    assert (stored.delivery, stored.attempts, stored.error) == (
        "parked",
        MAX_DELIVERY_ATTEMPTS,
        "fatal_error",
    )
    assert slack.messages == []
    assert _retry_list() == []
    assert notifier.retry_failed() == []  # parked: alarmed, no longer retried


class _LoseNthStateAnswer:
    """After moto carried out the ``nth`` job-state write (``UpdateItem`` of
    ``jobStateFacts``), raise ``ReadTimeoutError``; botocore then re-sends it."""

    def __init__(self, nth: int) -> None:
        self.nth = nth
        self.seen = 0
        self.lost = 0

    def __call__(self, request: Any, event_name: str, **_: Any) -> None:
        if not event_name.endswith(".UpdateItem") or b"jobStateFacts" not in (request.body or b""):
            return
        self.seen += 1
        if self.seen == self.nth:
            self.lost += 1
            raise ReadTimeoutError(endpoint_url=request.url)


def test_a_preemption_whose_state_write_answer_was_lost_is_still_told(
    world: World, slack: FakeSlack
) -> None:
    world.clock.set(START + 4000)
    world.record("sub-1", batch_job_id="batch-1")
    events = preempted_twice("batch-1", int(START * 1000))
    # the 4th event is the first preemption (RUNNABLE again); its write is the 4th
    lose = _LoseNthStateAnswer(4)
    world.jobs._client.meta.events.register_last("before-send", lose)
    results = [job_state.handler(event, LambdaContext()) for event in events[:4]]

    assert lose.lost == 1
    assert [r["outcome"] for r in results] == ["tracked"] * 4
    item = world.store.get("sub-1")
    assert item is not None
    assert (item["jobStateVersion"], item["jobState"]["preemptionCount"]) == (4, 1)
    [entry] = _log().entries("sub-1")
    assert (entry.kind, entry.delivery) == ("preempted", "posted")
    [dm] = slack.messages
    assert dm.channel == "U0ALICE"
    assert dm.text.startswith("Your job job-sub-1 was preempted at ")
