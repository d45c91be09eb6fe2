"""Preemption counts only grow, whatever the order and whichever events carry Batch's
``preemptedAttemptCount`` (the newest summary may list attempts without it)."""

from __future__ import annotations

from typing import Any

from quotagov.governance.job_state_updates import apply_state_event
from quotagov.handlers.service_job_events import parse_state_change

from .conftest import START, World
from .envelopes import attempt, envelope

T0 = int(START * 1000)
S = 1000


def fold(world: World, envs: list[dict[str, Any]]) -> None:
    for e in envs:
        apply_state_event(parse_state_change(e).to_state_event(), world.deps())


def _run(world: World, order: list[int]) -> int:
    a1 = attempt("one", T0 + 60 * S, T0 + 600 * S)
    a2 = attempt("two", T0 + 700 * S, T0 + 1200 * S)
    older = envelope(
        "batch-1",
        "RUNNABLE",
        T0 + 600 * S,
        created_ms=T0,
        attempts=[a1],
        preempted=[a1],
        preempted_count=1,
    )
    # newer event: summary without preemptedAttemptCount (optional in the model)
    newer = envelope(
        "batch-1",
        "RUNNABLE",
        T0 + 1200 * S,
        created_ms=T0,
        attempts=[a1, a2],
        extra={"preemptionSummary": {"recentPreemptedAttempts": [a1, a2]}},
    )
    envs = [older, newer]
    fold(world, [envs[i] for i in order])
    item = world.store.get("sub-1")
    return int(item["jobState"]["preemptionCount"])


def test_count_order_independent_in_order(world: World) -> None:
    world.clock.set(START + 2000)
    world.record("sub-1", batch_job_id="batch-1", retries=5)
    assert _run(world, [0, 1]) == 2


def test_count_order_independent_reversed(world: World) -> None:
    world.clock.set(START + 2000)
    world.record("sub-1", batch_job_id="batch-1", retries=5)
    assert _run(world, [1, 0]) == 2


def test_count_never_goes_down_when_count_arrives_late(world: World) -> None:
    world.clock.set(START + 2000)
    world.record("sub-1", batch_job_id="batch-1", retries=5)
    a1 = attempt("one", T0 + 60 * S, T0 + 600 * S)
    a2 = attempt("two", T0 + 700 * S, T0 + 1200 * S)
    fold(
        world,
        [
            envelope(
                "batch-1",
                "RUNNABLE",
                T0 + 1200 * S,
                created_ms=T0,
                attempts=[a1, a2],
                extra={"preemptionSummary": {"recentPreemptedAttempts": [a1, a2]}},
            )
        ],
    )
    before = int(world.store.get("sub-1")["jobState"]["preemptionCount"])
    fold(
        world,
        [
            envelope(
                "batch-1",
                "RUNNABLE",
                T0 + 600 * S,
                created_ms=T0,
                attempts=[a1],
                preempted=[a1],
                preempted_count=1,
            )
        ],
    )
    after = int(world.store.get("sub-1")["jobState"]["preemptionCount"])
    assert (before, after) == (2, 2)


def test_second_preemption_without_count_misses_exhaustion(world: World) -> None:
    """retries=1; preempted twice -> Batch FAILS the job; the FAILED event's summary lacks
    preemptedAttemptCount. Expected: preemption exhaustion handled (disposition)."""
    world.clock.set(START + 2000)
    world.record("sub-1", batch_job_id="batch-1", retries=1)
    a1 = attempt("one", T0 + 60 * S, T0 + 600 * S)
    a2 = attempt("two", T0 + 700 * S, T0 + 1200 * S)
    fold(
        world,
        [
            envelope(
                "batch-1",
                "RUNNABLE",
                T0 + 600 * S,
                created_ms=T0,
                attempts=[a1],
                preempted=[a1],
                preempted_count=1,
            ),
            envelope(
                "batch-1",
                "FAILED",
                T0 + 1200 * S,
                created_ms=T0,
                attempts=[a1, a2],
                stopped_ms=T0 + 1200 * S,
                extra={"preemptionSummary": {"recentPreemptedAttempts": [a1, a2]}},
            ),
        ],
    )
    item = world.store.get("sub-1")
    assert item["jobState"]["preemptionCount"] == 2
    assert item["disposition"]["trigger"] == "retries-exhausted"
