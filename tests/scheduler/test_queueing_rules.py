"""Queue order, STRICT_FIFO blocking and BEST_EFFORT_FIFO set-aside, cross-share order."""

from __future__ import annotations

from .builders import G, P, job, run, scenario, share, starts


def _blocking(queueing: str) -> dict:
    return run(
        scenario(
            {G: 1, P: 1},
            [share("a", {G: 1, P: 1}, "RESERVE")],
            [job("a1", "a", 0, 100), job("a2", "a", 0, 100), job("a3", "a", 0, 50, unit=P)],
            queueing=queueing,
        )
    )


def test_strict_fifo_head_blocks_the_jobs_behind_it() -> None:
    out = _blocking("STRICT_FIFO")
    assert starts(out, "a1") == [(0, "WITHIN_QUOTA")]
    # a2 (G) cannot start and blocks a3 although a3's P instance is free
    assert starts(out, "a2") == [(100, "WITHIN_QUOTA")]
    assert starts(out, "a3") == [(100, "WITHIN_QUOTA")]
    assert out["jobs"]["a3"]["stoppedAt"] == 150


def test_best_effort_fifo_sets_the_head_aside() -> None:
    out = _blocking("BEST_EFFORT_FIFO")
    assert starts(out, "a3") == [(0, "WITHIN_QUOTA")]
    assert out["jobs"]["a3"]["stoppedAt"] == 50
    assert starts(out, "a2") == [(100, "WITHIN_QUOTA")]


def test_best_effort_smaller_job_of_same_type_starts_behind_a_bigger_head() -> None:
    jobs = [job("a1", "a", 0, 100), job("a2", "a", 0, 100, count=2), job("a3", "a", 0, 100)]
    strict = run(scenario(2, [share("a", 2, "RESERVE")], jobs))
    assert starts(strict, "a2") == [(100, "WITHIN_QUOTA")]
    assert starts(strict, "a3") == [(200, "WITHIN_QUOTA")]
    best = run(scenario(2, [share("a", 2, "RESERVE")], jobs, queueing="BEST_EFFORT_FIFO"))
    assert starts(best, "a3") == [(0, "WITHIN_QUOTA")]
    assert starts(best, "a2") == [(100, "WITHIN_QUOTA")]


def test_queue_order_is_priority_then_submission_then_input() -> None:
    out = run(
        scenario(
            1,
            [share("a", 1, "RESERVE")],
            [
                job("first", "a", 0, 10),
                job("late-high", "a", 5, 10, prio=5),
                job("early-low", "a", 1, 10, prio=1),
                job("same-time-1", "a", 2, 10, prio=5),
                job("same-time-2", "a", 2, 10, prio=5),
            ],
        )
    )
    order = sorted(out["jobs"], key=lambda n: out["jobs"][n]["firstStartedAt"])
    assert order == ["first", "same-time-1", "same-time-2", "late-high", "early-low"]
    assert [out["jobs"][n]["firstStartedAt"] for n in order] == [0, 10, 20, 30, 40]


def test_preempted_job_keeps_its_original_place() -> None:
    # x1 (prio 1) is preempted at 50 by y (prio 9); x2 (prio 1, submitted later) waits
    # behind x1, which restarts first.
    out = run(
        scenario(
            1,
            [share("x", 1, "RESERVE", in_share=True)],
            [
                job("x1", "x", 0, 100, prio=1),
                job("x2", "x", 10, 100, prio=1),
                job("y", "x", 50, 10, prio=9),
            ],
        )
    )
    assert starts(out, "x1") == [(0, "WITHIN_QUOTA"), (60, "WITHIN_QUOTA")]
    assert starts(out, "x2") == [(160, "WITHIN_QUOTA")]


def test_across_shares_earliest_submitted_borrows_first() -> None:
    # one lendable instance; b's job was submitted before a's
    out = run(
        scenario(
            3,
            [share("a", 1), share("b", 1), share("l", 1, "LEND")],
            [
                job("a1", "a", 0, 1000),
                job("b1", "b", 0, 1000),
                job("b2", "b", 5, 100),
                job("a2", "a", 6, 100),
            ],
        )
    )
    assert starts(out, "b2") == [(5, "BORROWED")]
    assert starts(out, "a2") == [(105, "BORROWED")]
