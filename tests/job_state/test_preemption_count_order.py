"""Preemption counts only grow, whatever the order and whichever events carry Batch's
``preemptedAttemptCount`` (the newest summary may list attempts without it)."""

from __future__ import annotations

from typing import Any

from quotagov.governance.job_state.updates import apply_state_event
from quotagov.handlers.service_job_events import parse_state_change

from .conftest import START, World
from .envelopes import attempt, envelope

T0 = int(START * 1000)
S = 1000
#: Two attempts, preempted at 600 s and 1200 s.
A1 = attempt("one", T0 + 60 * S, T0 + 600 * S)
A2 = attempt("two", T0 + 700 * S, T0 + 1200 * S)


def counted_after_first() -> dict[str, Any]:
    """RUNNABLE after the first preemption, with ``preemptedAttemptCount`` 1."""
    return envelope(
        "batch-1",
        "RUNNABLE",
        T0 + 600 * S,
        created_ms=T0,
        attempts=[A1],
        preempted=[A1],
        preempted_count=1,
    )


def uncounted_after_second(status: str = "RUNNABLE") -> dict[str, Any]:
    """After the second preemption: both attempts listed, no ``preemptedAttemptCount``."""
    extra: dict[str, Any] = {"preemptionSummary": {"recentPreemptedAttempts": [A1, A2]}}
    stopped = {"stopped_ms": T0 + 1200 * S} if status == "FAILED" else {}
    return envelope(
        "batch-1",
        status,
        T0 + 1200 * S,
        created_ms=T0,
        attempts=[A1, A2],
        extra=extra,
        **stopped,
    )


def fold(world: World, envelopes: list[dict[str, Any]]) -> int:
    """Apply the events in order; the stored ``preemptionCount`` after."""
    for event in envelopes:
        apply_state_event(parse_state_change(event).to_state_event(), world.deps())
    item = world.store.get("sub-1")
    assert item is not None
    return int(item["jobState"]["preemptionCount"])


def test_count_order_independent_in_order(world: World) -> None:
    world.clock.set(START + 2000)
    world.record("sub-1", batch_job_id="batch-1", retries=5)
    assert fold(world, [counted_after_first(), uncounted_after_second()]) == 2


def test_count_order_independent_reversed(world: World) -> None:
    world.clock.set(START + 2000)
    world.record("sub-1", batch_job_id="batch-1", retries=5)
    assert fold(world, [uncounted_after_second(), counted_after_first()]) == 2


def test_count_never_goes_down_when_count_arrives_late(world: World) -> None:
    world.clock.set(START + 2000)
    world.record("sub-1", batch_job_id="batch-1", retries=5)
    before = fold(world, [uncounted_after_second()])
    after = fold(world, [counted_after_first()])
    assert (before, after) == (2, 2)


def test_second_preemption_without_count_still_exhausts_retries(world: World) -> None:
    """retries=1, preempted twice: Batch FAILS the job, and the FAILED event's summary
    has no ``preemptedAttemptCount``; the disposition still opens."""
    world.clock.set(START + 2000)
    world.record("sub-1", batch_job_id="batch-1", retries=1)
    assert fold(world, [counted_after_first(), uncounted_after_second("FAILED")]) == 2
    item = world.store.get("sub-1")
    assert item is not None
    assert item["disposition"]["trigger"] == "retries-exhausted"
