"""The fold of service-job events is order-free, idempotent and never regresses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quotagov.batch_semantics import lost_seconds
from quotagov.governance.job_state import (
    JobTracking,
    StateEvent,
    UnknownStatusError,
    fold,
    fold_all,
    new_preemptions,
    preemption_kind,
    summarize,
)
from quotagov.handlers.service_job_events import parse_state_change

from .envelopes import envelope, preempted_twice, training_job_arn

CREATED_MS = 1_777_885_000_000
JOB = "9e1c2b7a-41d0-4f5b-8a66-3c2d1e0f7a55"


def to_events(envelopes: list[dict[str, Any]]) -> list[StateEvent]:
    return [parse_state_change(e).to_state_event() for e in envelopes]


def test_preempted_twice_tracks_both_preemptions_and_lost_work_by_hand() -> None:
    tracking = fold_all(to_events(preempted_twice(JOB, CREATED_MS)))
    # checkpoints every 600 s; attempt one ran 1500 s -> 300 s lost; attempt two ran
    # 900 s -> 300 s lost; 2 instances -> 600 instance-seconds each.
    summary = summarize(tracking, checkpoint_interval_seconds=600, instance_count=2, kind="x")
    assert summary.status == "FAILED"
    assert summary.preemption_count == 2
    assert [p.training_job_arn for p in summary.preemptions] == [
        training_job_arn("one"),
        training_job_arn("two"),
    ]
    assert [p.run_seconds for p in summary.preemptions] == [1500.0, 900.0]
    assert [p.lost_work_seconds for p in summary.preemptions] == [300.0, 300.0]
    assert [p.lost_instance_seconds for p in summary.preemptions] == [600.0, 600.0]
    assert summary.lost_instance_seconds == 1200.0
    # running 1500 + 900; the job lived 60 + 1500 + 300 + 900 s -> waited 60 + 300.
    assert summary.running_seconds == 2400.0
    assert summary.waiting_seconds == 360.0
    assert summary.submission_to_first_start_seconds == 60.0
    assert summary.unattributed_preemptions == 0


def test_without_checkpointing_the_whole_attempt_is_lost() -> None:
    tracking = fold_all(to_events(preempted_twice(JOB, CREATED_MS)))
    summary = summarize(tracking, checkpoint_interval_seconds=None, instance_count=1)
    assert [p.lost_work_seconds for p in summary.preemptions] == [1500.0, 900.0]
    assert summary.lost_instance_seconds == 2400.0


def test_runnable_after_succeeded_changes_nothing() -> None:
    done = envelope(
        JOB,
        "SUCCEEDED",
        CREATED_MS + 900_000,
        created_ms=CREATED_MS,
        attempts=[
            {
                "serviceResourceId": {"name": "TrainingJobArn", "value": training_job_arn("a")},
                "startedAt": CREATED_MS + 60_000,
                "stoppedAt": CREATED_MS + 900_000,
            }
        ],
        stopped_ms=CREATED_MS + 900_000,
    )
    late = envelope(JOB, "RUNNABLE", CREATED_MS + 5_000, created_ms=CREATED_MS)
    [done_event, late_event] = to_events([done, late])
    after_done = fold(None, done_event)
    assert fold(after_done, late_event) == after_done
    assert fold(fold(None, late_event), done_event).status == "SUCCEEDED"


def test_runnable_after_a_preemption_does_advance_past_running() -> None:
    events = to_events(preempted_twice(JOB, CREATED_MS))
    running, requeued = events[2], events[3]
    assert fold(fold(None, running), requeued).status == "RUNNABLE"
    assert fold(fold(None, requeued), running).status == "RUNNABLE"


def test_preemptions_are_counted_from_the_summary_not_from_events() -> None:
    events = to_events(preempted_twice(JOB, CREATED_MS))
    requeued = events[3]
    twice = fold(fold(None, requeued), requeued)
    assert twice.preemption_count == 1
    # a window that forgot an attempt still counts the total Batch reports
    failed = events[5]
    narrow = StateEvent(
        **{**failed.__dict__, "recent_preempted_attempts": failed.recent_preempted_attempts[:1]}
    )
    assert fold(None, narrow).preemption_count == 2
    assert (
        summarize(fold(None, narrow), checkpoint_interval_seconds=None).unattributed_preemptions
        == 1
    )


def test_tracking_round_trips_through_its_item() -> None:
    tracking = fold_all(to_events(preempted_twice(JOB, CREATED_MS)))
    assert JobTracking.from_item(tracking.to_item()) == tracking


def test_unknown_status_and_missing_job_id_are_refused_with_the_field() -> None:
    with pytest.raises(UnknownStatusError, match=r"detail\.status: 'PAUSED'"):
        StateEvent.from_detail({"jobId": "j", "status": "PAUSED"}, event_id="e", event_time_ms=0)
    with pytest.raises(ValueError, match=r"detail\.jobId"):
        StateEvent.from_detail({"status": "RUNNING"}, event_id="e", event_time_ms=0)


def test_lost_work_rule() -> None:
    assert lost_seconds(1500, 600) == 300
    assert lost_seconds(1200, 600) == 0
    assert lost_seconds(59, 600) == 59
    assert lost_seconds(59, None) == 59
    with pytest.raises(ValueError, match="run_seconds"):
        lost_seconds(-1, 600)


def test_preemption_kind_from_share_configuration() -> None:
    assert preemption_kind("LEND_AND_BORROW", "DISABLED") == "cross-share"
    assert preemption_kind("RESERVE", "ENABLED") == "in-share"
    assert preemption_kind("LEND_AND_BORROW", "ENABLED") == "unattributed"
    assert preemption_kind("LEND", "DISABLED") == "unattributed"


EVENTS = to_events(preempted_twice(JOB, CREATED_MS))
FINAL = fold_all(EVENTS)


@settings(max_examples=60, deadline=None)
@given(st.permutations(EVENTS + EVENTS), st.randoms(use_true_random=False))
def test_any_order_with_duplicates_gives_the_same_state(order: list[StateEvent], rnd: Any) -> None:
    extra = [rnd.choice(EVENTS) for _ in range(rnd.randint(0, 4))]
    assert fold_all(order + extra) == FINAL
    # and no prefix ever shows a less advanced status than an earlier prefix
    tracking = None
    for event in order:
        previous = tracking
        tracking = fold(tracking, event)
        if previous is not None:
            assert tracking.status_key >= previous.status_key
            assert tracking.preemption_count >= previous.preemption_count


def _without_arns(raw: dict[str, Any], suffix: str = "-noarn") -> dict[str, Any]:
    """The same envelope with no ``serviceResourceId`` on any attempt (a new event id)."""
    detail = dict(raw["detail"])
    strip = [{k: v for k, v in a.items() if k != "serviceResourceId"} for a in detail["attempts"]]
    detail["attempts"] = strip
    detail.pop("latestAttempt", None)
    if "preemptionSummary" in detail:
        summary = dict(detail["preemptionSummary"])
        summary["recentPreemptedAttempts"] = [
            {k: v for k, v in a.items() if k != "serviceResourceId"}
            for a in summary["recentPreemptedAttempts"]
        ]
        detail["preemptionSummary"] = summary
    return {**raw, "id": raw["id"] + suffix, "detail": detail}


#: The preemption and requeue events once more, each attempt without its ARN.
ARNLESS = to_events([_without_arns(e) for e in preempted_twice(JOB, CREATED_MS)[3:]])
FINAL_WITH_ARNLESS = fold_all(EVENTS + ARNLESS)


def test_an_attempt_reported_with_and_without_its_arn_counts_once() -> None:
    tracking = fold_all([ARNLESS[0], EVENTS[5]])
    assert tracking.preemption_count == 2
    assert [a.training_job_arn for a in tracking.preempted()] == [
        training_job_arn("one"),
        training_job_arn("two"),
    ]
    assert len(tracking.known_attempts()) == 2
    # the same facts as the events with ARNs only
    assert summarize(FINAL_WITH_ARNLESS, checkpoint_interval_seconds=600) == summarize(
        FINAL, checkpoint_interval_seconds=600
    )


def test_the_count_is_the_larger_of_batch_count_and_known_attempts() -> None:
    """Both only grow, so their maximum never goes down whatever the order."""
    failed = EVENTS[5]  # lists 2 preempted attempts
    one = StateEvent(**{**failed.__dict__, "preempted_attempt_count": 1})
    assert fold(None, one).preemption_count == 2
    three = StateEvent(**{**failed.__dict__, "preempted_attempt_count": 3})
    assert fold(None, three).preemption_count == 3
    assert (
        summarize(fold(None, three), checkpoint_interval_seconds=None).unattributed_preemptions == 1
    )
    # without any preemptionSummary count, the reconciled attempts are counted
    uncounted = StateEvent(**{**failed.__dict__, "preempted_attempt_count": None})
    assert fold(None, uncounted).preemption_count == 2
    arnless_only = StateEvent(**{**ARNLESS[-1].__dict__, "preempted_attempt_count": None})
    assert fold(fold(None, uncounted), arnless_only).preemption_count == 2


@settings(max_examples=60, deadline=None)
@given(st.permutations(EVENTS + ARNLESS + ARNLESS), st.randoms(use_true_random=False))
def test_arn_less_duplicates_in_any_order_give_the_same_state(
    order: list[StateEvent], rnd: Any
) -> None:
    extra = [rnd.choice(EVENTS + ARNLESS) for _ in range(rnd.randint(0, 4))]
    tracking = fold_all(order + extra)
    assert tracking == FINAL_WITH_ARNLESS
    assert tracking.preemption_count == 2 and len(tracking.preempted()) == 2
    seen: list[str] = []
    state = None
    for event in order:
        previous = state
        state = fold(state, event)
        seen += new_preemptions(previous, state)
        if previous is not None:
            assert state.status_key >= previous.status_key
            assert state.preemption_count >= previous.preemption_count
    # each preemption is reported new once, under whichever name it was first seen
    assert len(seen) == 2
