"""Disposition buttons split like approvals: the Slack function records the owner's
choice and hands it over; the apply function submits the successor."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from quotagov.governance.apply_messages import parse_message
from quotagov.governance.dispositions import decide_disposition, settle_disposition

from .conftest import World, exhausted_release_job, submitted


class RecordingHandoff:
    """The ApplyQueue, as a list of the messages sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, message: Mapping[str, Any]) -> None:
        self.sent.append(dict(message))


def test_the_recording_side_makes_no_batch_call_and_the_apply_side_submits_once(
    world: World,
) -> None:
    exhausted_release_job(world, "rel-1")
    handoff = RecordingHandoff()
    recording = dataclasses.replace(world.disposition_deps(), handoff=handoff)
    audited_before = len(world.audit.decisions)

    outcome = decide_disposition(
        "rel-1", "disposition_resubmit", "U0FRANK", deps=recording, source="slack"
    )

    assert (outcome.status, outcome.choice, outcome.changed) == ("applying", "resubmit", True)
    assert submitted(world.batch) == []  # the Slack function's side calls no Batch API
    # the decision goes to the audit queue (world.audit stands for it), the rest over
    assert [d.action for d in world.audit.decisions][audited_before:] == ["DispositionDecided"]
    kinds = [parse_message(m).kind for m in handoff.sent]
    assert kinds == ["disposition"]
    item = world.store.get("rel-1")
    assert item is not None and item["disposition"].get("leaseUntil") is None

    applying = world.disposition_deps()
    for message in handoff.sent:  # what ApplyDecisionsFunction does with each
        settled = settle_disposition(parse_message(message).record_id, applying)
        assert settled is not None and settled.status == "applied"
    again = settle_disposition("rel-1", applying)  # a redelivered hand-off

    assert again is not None and again.status == "applied" and again.changed is False
    assert len(submitted(world.batch)) == 1
    assert [d.action for d in world.audit.decisions][audited_before:] == [
        "DispositionDecided",
        "DispositionApplied",
    ]


def test_a_stale_hand_off_for_no_job_does_nothing(world: World) -> None:
    assert settle_disposition("no-such-job", world.disposition_deps()) is None
    assert submitted(world.batch) == []


def test_a_repeated_click_while_applying_is_handed_over_again_without_a_batch_call(
    world: World,
) -> None:
    """The Slack function's role holds no Batch action: the owner's second click on a
    decision the apply function has not settled yet sends it over again instead of
    submitting the successor itself."""
    exhausted_release_job(world, "rel-3")
    handoff = RecordingHandoff()
    recording = dataclasses.replace(world.disposition_deps(), handoff=handoff)
    first = decide_disposition(
        "rel-3", "disposition_resubmit", "U0FRANK", deps=recording, source="slack"
    )
    again = decide_disposition(
        "rel-3", "disposition_resubmit", "U0FRANK", deps=recording, source="slack"
    )

    assert (first.status, first.changed) == ("applying", True)
    assert (again.status, again.changed, again.error) == ("applying", False, None)
    assert submitted(world.batch) == []
    handed = [parse_message(m) for m in handoff.sent if parse_message(m).kind == "disposition"]
    assert [m.record_id for m in handed] == ["rel-3", "rel-3"]
    item = world.store.get("rel-3")
    assert item is not None and item["disposition"].get("leaseUntil") is None
    settled = settle_disposition("rel-3", world.disposition_deps())
    assert settled is not None and settled.status == "applied"
    assert len(submitted(world.batch)) == 1
