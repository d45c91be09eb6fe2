"""A disposition write whose answer was lost is recognised as this call's own write.

Found by ``quotagov demo --faults 2``: the write that opened bg-1's ``reclassify``
disposition (retries exhausted) took effect in DynamoDB, its answer was lost and
botocore re-sent it; the re-sent copy met its own condition
(``attribute_not_exists(disposition)``) and the step took the stored disposition for
another caller's. Nobody applied it: it stayed ``applying`` with its lease and no
successor, with no event left to finish it. Now the stored item is compared with the
written one, the step goes on, the successor is submitted once and the disposition is
``applied``.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ReadTimeoutError

from .conftest import START, World, submitted
from .envelopes import preempted_twice
from .test_job_state_updates import CREATED_MS, fold_into


class _LoseAnswer:
    """After moto carried out the first ``UpdateItem`` whose body holds ``marker``, raise
    ``ReadTimeoutError`` (the caller never hears back); botocore then re-sends it."""

    def __init__(self, marker: bytes) -> None:
        self.marker = marker
        self.lost = 0

    def __call__(self, request: Any, event_name: str, **_: Any) -> None:
        body = request.body or b""
        if not event_name.endswith(".UpdateItem") or self.marker not in body or self.lost:
            return
        self.lost += 1
        raise ReadTimeoutError(endpoint_url=request.url)


def _lose(world: World, marker: bytes) -> _LoseAnswer:
    lose = _LoseAnswer(marker)
    world.jobs._client.meta.events.register_last("before-send", lose)
    return lose


#: bg-1's disposition as stored once applied (the demo's exploratory job with one
#: preemption retry, preempted twice; the class policy says ``reclassify``).
APPLIED = {
    "status": "applied",
    "trigger": "retries-exhausted",
    "policyAction": "reclassify",
    "owner": "arn:aws:sts::111122223333:assumed-role/researcher/alice",
    "openedAt": int(START + 4000),
    "preemptionCount": 2,
    "reason": "FAILED after 2 preemption(s), more than preemptionRetriesBeforeTermination=1; "
    "class 'exploratory' policy: reclassify",
    "preemptionRetriesBeforeTermination": 1,
    "choice": "reclassify",
    "decidedBy": "quotagov",
    "decidedAt": int(START + 4000),
    "successorId": "sub-1-r1",
    "targetShare": "medium",
    "closedAt": int(START + 4000),
    "leaseUntil": int(START + 4060),  # the lease the opening write took (60 s)
}


@pytest.mark.parametrize(
    "marker",
    [
        # the opening write: no disposition -> applying (what the demo lost)
        b"attribute_not_exists(disposition)",
        # the closing write: applying -> applied, with the successor appended
        b"successorIds",
    ],
    ids=["opening-write", "applied-write"],
)
def test_a_disposition_write_whose_answer_was_lost_still_applies_it_once(
    world: World, marker: bytes
) -> None:
    world.clock.set(START + 4000)
    world.record("sub-1", batch_job_id="batch-1")
    lose = _lose(world, marker)
    fold_into(world, preempted_twice("batch-1", CREATED_MS))
    assert lose.lost == 1
    item = world.store.get("sub-1")
    assert item is not None
    disposition = dict(item["disposition"])
    batch_job_id = disposition.pop("successorBatchJobId")
    assert disposition == APPLIED
    assert item["successorIds"] == ["sub-1-r1"]
    [request] = submitted(world.batch)
    assert request["quotaShareName"] == "medium"
    successor = world.jobs.get("sub-1-r1")
    assert successor is not None
    assert (successor.state, successor.batchJobId) == ("SUBMITTED", batch_job_id)
    actions = [d.action for d in world.audit.decisions]
    assert actions == ["DispositionDecided", "DispositionApplied"]


def test_a_move_another_caller_made_is_not_taken_for_ours(world: World) -> None:
    world.clock.set(START + 4000)
    world.record("sub-1", batch_job_id="batch-1")
    fold_into(world, preempted_twice("batch-1", CREATED_MS))
    before = world.store.get("sub-1")
    assert before is not None
    # a writer that expected no disposition yet, with a different one: refused
    theirs = {**APPLIED, "status": "applying", "decidedAt": int(START + 4100)}
    assert (
        world.jobs.move_disposition_if_status("sub-1", expected_status=None, disposition=theirs)
        is False
    )
    # the stored disposition equals the written one, but the successor named is not
    # in successorIds: not this write either
    assert (
        world.jobs.move_disposition_if_status(
            "sub-1",
            expected_status="applying",
            disposition=before["disposition"],
            successor_id="sub-1-r9",
        )
        is False
    )
    assert world.store.get("sub-1") == before
