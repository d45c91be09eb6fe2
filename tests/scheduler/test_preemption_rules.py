"""Cross-share reclaim, in-share preemption, victim order, keep-back, capacity-limit cuts."""

from __future__ import annotations

from .builders import changes, job, run, scenario, share, starts


def _preemptions(out: dict, name: str) -> list[tuple]:
    return [
        (p["at"], p["kind"], p["forJob"], p["lostSeconds"])
        for p in out["jobs"][name]["preemptions"]
    ]


def test_reclaim_takes_lowest_priority_then_latest_started_and_no_more_than_needed() -> None:
    # capacity 5; b (limit 1) holds b1 (within), b3 (prio 1, 1 instance, started 10)
    # and b4 (prio 5, 2 instances, started 20) borrowed; free 1.
    # l1 needs 3 within quota: victims in order b3 (lowest priority), then b4 -> 4 free.
    # Going back: b4 is needed (1 + 1 < 3), b3 is not (1 + 2 = 3): b3 keeps running.
    out = run(
        scenario(
            5,
            [share("l", 3, "LEND"), share("b", 1)],
            [
                job("b1", "b", 0, 1000, prio=5),
                job("b3", "b", 10, 1000, prio=1),
                job("b4", "b", 20, 1000, prio=5, count=2),
                job("l1", "l", 30, 100, count=3),
            ],
        )
    )
    # b4 ran 10 s without checkpoints: all lost
    assert _preemptions(out, "b4") == [(30, "CROSS_SHARE", "l1", 10)]
    assert _preemptions(out, "b3") == []
    assert _preemptions(out, "b1") == []
    assert starts(out, "l1") == [(30, "WITHIN_QUOTA")]
    assert out["jobs"]["b3"]["stoppedAt"] == 1010


def test_reclaim_at_equal_priority_takes_the_most_recently_started() -> None:
    out = run(
        scenario(
            3,
            [share("l", 2, "LEND"), share("b", 1)],
            [
                job("b1", "b", 0, 1000),
                job("b2", "b", 0, 1000),
                job("b3", "b", 0, 1000),
                job("l1", "l", 50, 100),
            ],
        )
    )
    # b2 and b3 borrow at 0, b3 later in the pass: it goes first
    assert _preemptions(out, "b3") == [(50, "CROSS_SHARE", "l1", 50)]
    assert _preemptions(out, "b2") == []


def test_reclaim_preempts_nothing_when_even_all_candidates_are_not_enough() -> None:
    # limits oversubscribe capacity 3: l (3) + b (1). b2 is the only borrower; l1 needs 3.
    out = run(
        scenario(
            3,
            [share("l", 3, "LEND"), share("b", 1)],
            [job("b1", "b", 0, 1000), job("b2", "b", 0, 500), job("l1", "l", 10, 100, count=3)],
        )
    )
    assert _preemptions(out, "b2") == []
    assert out["jobs"]["b2"]["stoppedAt"] == 500
    assert starts(out, "l1") == [(1000, "WITHIN_QUOTA")]


def test_within_quota_jobs_of_a_borrowing_share_are_not_reclaim_candidates() -> None:
    out = run(
        scenario(
            2,
            [share("l", 1, "LEND"), share("b", 1)],
            [job("b1", "b", 0, 1000), job("b2", "b", 1, 1000), job("l1", "l", 10, 100)],
        )
    )
    assert _preemptions(out, "b1") == []
    assert _preemptions(out, "b2") == [(10, "CROSS_SHARE", "l1", 9)]


def test_in_share_preempts_lowest_priority_and_equal_priority_never_preempts() -> None:
    out = run(
        scenario(
            2,
            [share("a", 2, "RESERVE", in_share=True)],
            [
                job("a1", "a", 0, 1000, prio=5),
                job("a2", "a", 0, 1000, prio=1),
                job("a3", "a", 100, 100, prio=10),
                job("a4", "a", 150, 1000, prio=5),
            ],
        )
    )
    assert _preemptions(out, "a2") == [(100, "IN_SHARE", "a3", 100)]
    assert _preemptions(out, "a1") == []
    assert starts(out, "a3") == [(100, "WITHIN_QUOTA")]
    # a4 (prio 5) at 150 finds only a1 (prio 5, equal) and a3 (10): it waits, and takes
    # the instance a3 frees at 200 (before a2, by priority)
    assert starts(out, "a4") == [(200, "WITHIN_QUOTA")]
    # a1 completes at 1000: a2 (no checkpoint, all 1000 s left) restarts then
    assert starts(out, "a2") == [(0, "WITHIN_QUOTA"), (1000, "WITHIN_QUOTA")]
    assert out["jobs"]["a2"]["stoppedAt"] == 2000


def test_in_share_disabled_waits() -> None:
    out = run(
        scenario(
            1,
            [share("a", 1, "RESERVE")],
            [job("a1", "a", 0, 100, prio=1), job("a2", "a", 10, 100, prio=9)],
        )
    )
    assert _preemptions(out, "a1") == []
    assert starts(out, "a2") == [(100, "WITHIN_QUOTA")]


def test_in_share_combined_with_reclaim() -> None:
    # capacity 3: a (LEND, limit 2, in-share on) runs a1 (prio 1); b (limit 1) runs b1
    # within and b2 borrowed (a's idle instance). a2 (prio 9) needs 2: not within quota
    # (1 + 2 > 2); a cannot borrow. In-share: a1 goes -> within quota, 1 free, the
    # missing instance is reclaimed from b2.
    out = run(
        scenario(
            3,
            [share("a", 2, "LEND", in_share=True), share("b", 1)],
            [
                job("a1", "a", 0, 1000, prio=1),
                job("b1", "b", 0, 1000),
                job("b2", "b", 0, 1000),
                job("a2", "a", 100, 100, prio=9, count=2),
            ],
        )
    )
    # a2 completes at 200: a1 restarts within quota, b2 borrows again
    assert starts(out, "b2") == [(0, "BORROWED"), (200, "BORROWED")]
    assert starts(out, "a1") == [(0, "WITHIN_QUOTA"), (200, "WITHIN_QUOTA")]
    assert _preemptions(out, "a1") == [(100, "IN_SHARE", "a2", 100)]
    assert _preemptions(out, "b2") == [(100, "CROSS_SHARE", "a2", 100)]
    assert _preemptions(out, "b1") == []
    at_100 = [(t["jobName"], t["to"]) for t in out["transitions"] if t["at"] == 100]
    assert at_100[:3] == [("a2", "RUNNABLE"), ("a1", "RUNNABLE"), ("b2", "RUNNABLE")]
    assert at_100[3] == ("a2", "SCHEDULED")


def test_in_share_then_borrowing() -> None:
    # a (limit 1, borrows) runs a1 within, a2 borrowed; a3 (prio 9, 2 instances):
    # taking a2 (latest) leaves 1 free, not enough; taking a1 too frees 2, and a3 borrows.
    out = run(
        scenario(
            2,
            [share("a", 1, in_share=True), share("l", 1, "LEND")],
            [
                job("a1", "a", 0, 1000, prio=1),
                job("a2", "a", 0, 1000, prio=1),
                job("a3", "a", 100, 100, prio=9, count=2),
            ],
        )
    )
    assert _preemptions(out, "a2") == [(100, "IN_SHARE", "a3", 100)]
    assert _preemptions(out, "a1") == [(100, "IN_SHARE", "a3", 100)]
    assert starts(out, "a3") == [(100, "BORROWED")]


def test_in_share_no_more_than_needed_among_own_victims() -> None:
    # victims in order: a2 (prio 1, 1 instance), then a1 (prio 2, 2 instances); a3 needs 2.
    # Going back: a1 is needed, a2 is not (2 instances from a1 suffice).
    out = run(
        scenario(
            3,
            [share("a", 3, "RESERVE", in_share=True)],
            [
                job("a1", "a", 0, 1000, prio=2, count=2),
                job("a2", "a", 0, 1000, prio=1),
                job("a3", "a", 100, 100, prio=9, count=2),
            ],
        )
    )
    assert _preemptions(out, "a1") == [(100, "IN_SHARE", "a3", 100)]
    assert _preemptions(out, "a2") == []


def test_capacity_limit_cut_makes_reserve_jobs_reclaimable_later_not_at_once() -> None:
    out = run(
        scenario(
            2,
            [share("r", 2, "RESERVE"), share("s", 1, "RESERVE")],
            [job("r1", "r", 0, 1000), job("r2", "r", 0, 1000), job("s1", "s", 200, 100)],
            [
                {
                    "at": 100,
                    "type": "UpdateQuotaShare",
                    "quotaShareName": "r",
                    "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
                }
            ],
        )
    )
    # nothing at the cut (100); at 200 r2 (started later in the pass) holds the excess
    assert _preemptions(out, "r2") == [(200, "CROSS_SHARE", "s1", 200)]
    assert _preemptions(out, "r1") == []
    assert starts(out, "s1") == [(200, "WITHIN_QUOTA")]
    assert [c for c in changes(out, "r2") if c[0] == 100] == []


def test_in_share_victims_follow_a_running_jobs_priority_update() -> None:
    """The share's holdings in victim order are kept between passes: a priority update
    of a running job must reorder them (a1, lowest at first, rises above a2)."""
    for queueing in ("STRICT_FIFO", "BEST_EFFORT_FIFO"):
        out = run(
            scenario(
                2,
                [share("a", 2, "RESERVE", in_share=True)],
                [
                    job("a1", "a", 0, 1000, prio=1),
                    job("a2", "a", 0, 1000, prio=5),
                    # waits at 10 (nothing of lower priority than 1): the victim order
                    # of a's holdings is read then, with a1 first
                    job("probe", "a", 10, 100, prio=1),
                    job("a3", "a", 100, 100, prio=6),
                ],
                [{"at": 50, "type": "UpdateServiceJob", "jobName": "a1", "schedulingPriority": 8}],
                queueing=queueing,
            )
        )
        assert _preemptions(out, "a2") == [(100, "IN_SHARE", "a3", 100)], queueing
        assert _preemptions(out, "a1") == [], queueing
        assert starts(out, "a3") == [(100, "WITHIN_QUOTA")], queueing
        assert _preemptions(out, "probe") == [], queueing


def test_in_share_preempts_nothing_when_all_lower_priority_jobs_are_not_enough() -> None:
    """a3 (4 instances, priority 3) could only displace a1 (1 instance, priority 1): even
    with it released the share has 1 instance of room and may not borrow (RESERVE), so
    nothing is preempted then, and a3 waits for a2 to finish."""
    for queueing in ("STRICT_FIFO", "BEST_EFFORT_FIFO"):
        out = run(
            scenario(
                4,
                [share("a", 4, "RESERVE", in_share=True)],
                [
                    job("a1", "a", 0, 1000, prio=1),
                    job("a2", "a", 0, 500, prio=5, count=3),
                    job("a3", "a", 100, 100, prio=3, count=4),
                ],
                queueing=queueing,
            )
        )
        # nothing at 100; at 500 a2 frees 3 and a3 needs a1's instance too: a1 (priority
        # 1, 500 s of work lost) is then its victim
        assert _preemptions(out, "a1") == [(500, "IN_SHARE", "a3", 500)], queueing
        assert _preemptions(out, "a2") == [], queueing
        assert starts(out, "a3") == [(500, "WITHIN_QUOTA")], queueing
