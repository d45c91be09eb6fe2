"""A successor the policy would refuse is refused with route()'s reason.

The apply step routes the successor like a new submission
(``quotagov.governance.routing.route`` on ``RoutingInput.from_record(successor,
successor=True)``): its target share, the level it inherited. These tests give it a
successor route() refuses and check that nothing reached Batch, no successor was
stored, the disposition was abandoned with route()'s reason word for word, and the
predecessor's record kept everything but its disposition.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from quotagov.governance.dispositions import decide_disposition, settle_disposition
from quotagov.handlers import job_state
from quotagov.policy import Policy, load_policy
from support.lambda_context import LambdaContext
from support.policies import example_policy_text

from .conftest import START, World, build_world, exhausted_release_job, submitted
from .envelopes import preempted_twice
from .test_disposition_handoff import RecordingHandoff

REFUSED = "successor refused by the policy: "

#: Written by the job-state fold and the disposition steps, not by the submission.
FOLD_AND_DISPOSITION = {
    "jobState",
    "jobStateFacts",
    "jobStateVersion",
    "disposition",
    "dispositionToken",
    "version",
    "updatedAt",
}


@pytest.fixture
def two_instance_world() -> Iterator[World]:
    """The example policy with class ``exploratory`` allowed 2 instances: its first
    share ``background`` borrows without a cap, its next share ``medium`` (LEND,
    ``maxCapacity`` 1) can never hold 2."""
    text = example_policy_text()
    assert text.count("maxInstanceCount: 1") == 3  # exploratory's comes first
    with build_world(
        load_policy(text.replace("maxInstanceCount: 1", "maxInstanceCount: 2", 1))
    ) as w:
        yield w


def _without(item: dict[str, Any] | None, names: set[str]) -> dict[str, Any]:
    assert item is not None
    return {k: v for k, v in item.items() if k not in names}


def test_a_successor_too_big_for_its_target_share_is_refused(two_instance_world: World) -> None:
    world = two_instance_world
    world.clock.set(START + 4000)
    world.record("wide-1", batch_job_id="batch-wide-1", instance_count=2)
    submitted_as = world.store.get("wide-1")

    for event in preempted_twice("batch-wide-1", int(START * 1000)):
        job_state.handler(event, LambdaContext())

    reason = (
        "serviceRequestPayload.ResourceConfig.InstanceCount: 2 instances of ml.g5.xlarge "
        "exceed what share 'medium' can ever hold (1: maxCapacity 1, strategy LEND)"
    )
    assert submitted(world.batch) == []
    item = world.store.get("wide-1")
    assert item is not None
    disposition = item["disposition"]
    assert (disposition["choice"], disposition["targetShare"]) == ("reclassify", "medium")
    assert disposition["status"] == "abandoned"
    assert disposition["lastError"] == REFUSED + reason
    assert world.store.get("wide-1-r1") is None
    # the submission as stored is untouched: no successor link, same share and payload
    assert _without(item, FOLD_AND_DISPOSITION) == _without(submitted_as, FOLD_AND_DISPOSITION)
    assert item["successorIds"] == []


def test_a_successor_in_a_share_its_class_no_longer_lists_is_refused(world: World) -> None:
    """The owner chose ``resubmit`` (into ``reserved``); before the apply function acts,
    the policy moves class ``release`` to ``medium`` only."""
    exhausted_release_job(world, "rel-1")
    handoff = RecordingHandoff()
    recording = dataclasses.replace(world.disposition_deps(), handoff=handoff)
    decide_disposition("rel-1", "disposition_resubmit", "U0FRANK", deps=recording, source="slack")
    before = world.store.get("rel-1")
    assert before is not None and before["disposition"]["status"] == "applying"
    moved: Policy = load_policy(
        example_policy_text().replace("shares: [reserved]", "shares: [medium]")
    )
    applying = dataclasses.replace(world.disposition_deps(), policy=moved)
    assert [message["kind"] for message in handoff.sent] == ["disposition"]
    settled = settle_disposition("rel-1", applying)

    reason = "quotaShareName: class 'release' may not use share 'reserved' (allowed: medium)"
    assert settled is not None and settled.status == "abandoned"
    assert submitted(world.batch) == []
    after = world.store.get("rel-1")
    assert after is not None
    assert after["disposition"]["lastError"] == REFUSED + reason
    assert after["disposition"]["status"] == "abandoned"
    assert world.store.get(str(after["disposition"]["successorId"])) is None
    # only the disposition (with its write token) moved
    bookkeeping = {"disposition", "dispositionToken"}
    assert _without(after, bookkeeping) == _without(before, bookkeeping)
    abandoned = [d for d in world.audit.decisions if d.action == "DispositionAbandoned"]
    assert [d.details["refusal"] for d in abandoned] == [REFUSED + reason]
