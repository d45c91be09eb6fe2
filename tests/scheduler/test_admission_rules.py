"""Admission: within quota, borrowing with borrow limits, the RESERVE rule, DISABLED shares."""

from __future__ import annotations

from .builders import G, P, changes, job, run, scenario, share, starts


def test_within_quota_starts_in_free_capacity_and_waits_at_the_limit() -> None:
    out = run(
        scenario(
            2,
            [share("a", 2, "RESERVE")],
            [job("a1", "a", 0, 100), job("a2", "a", 0, 100), job("a3", "a", 0, 50)],
        )
    )
    assert starts(out, "a1") == [(0, "WITHIN_QUOTA")]
    assert starts(out, "a2") == [(0, "WITHIN_QUOTA")]
    # limit 2 reached: a3 waits until a1 and a2 complete at 100
    assert starts(out, "a3") == [(100, "WITHIN_QUOTA")]
    assert out["jobs"]["a3"]["stoppedAt"] == 150


def test_borrow_limit_caps_borrowed_instances() -> None:
    # limit 2, borrowLimit 50 % -> at most 1 borrowed instance
    out = run(
        scenario(
            10,
            [share("a", 2, borrow=50), share("lender", 8, "LEND")],
            [job(f"a{i}", "a", 0, 100) for i in range(1, 5)],
        )
    )
    assert starts(out, "a1") == [(0, "WITHIN_QUOTA")]
    assert starts(out, "a2") == [(0, "WITHIN_QUOTA")]
    assert starts(out, "a3") == [(0, "BORROWED")]
    # a4 would be a 2nd borrowed instance > 2 x 50 / 100
    assert starts(out, "a4") == [(100, "WITHIN_QUOTA")]


def test_borrow_limit_150_percent_of_4_allows_6_borrowed() -> None:
    # AWS example: maxCapacity 4, borrowLimit 150 -> 4 own + 6 borrowed
    out = run(
        scenario(
            20,
            [share("a", 4, borrow=150), share("lender", 16, "LEND")],
            [job(f"a{i:02d}", "a", 0, 100) for i in range(12)],
        )
    )
    first = [name for name in out["jobs"] if out["jobs"][name]["firstStartedAt"] == 0]
    assert len(first) == 10
    assert [starts(out, f"a{i:02d}")[0][1] for i in range(10)] == ["WITHIN_QUOTA"] * 4 + [
        "BORROWED"
    ] * 6
    assert starts(out, "a10") == [(100, "WITHIN_QUOTA")]


def test_borrow_limit_zero_borrows_nothing_and_minus_one_is_unlimited() -> None:
    jobs = [job(f"a{i}", "a", 0, 100) for i in range(4)]
    capped = run(scenario(4, [share("a", 1, borrow=0), share("l", 3, "LEND")], jobs))
    assert [starts(capped, f"a{i}")[0][0] for i in range(4)] == [0, 100, 200, 300]
    unlimited = run(scenario(4, [share("a", 1, borrow=-1), share("l", 3, "LEND")], jobs))
    assert [starts(unlimited, f"a{i}")[0] for i in range(4)] == [
        (0, "WITHIN_QUOTA"),
        (0, "BORROWED"),
        (0, "BORROWED"),
        (0, "BORROWED"),
    ]


def test_reserve_idle_quota_is_never_lent() -> None:
    shares = [share("r", 1, "RESERVE"), share("l", 1, "LEND"), share("a", 1)]
    jobs = [job("a1", "a", 0, 100), job("a2", "a", 0, 100), job("a3", "a", 0, 100)]
    out = run(scenario(3, shares, [*jobs, job("r1", "r", 10, 100)]))
    assert starts(out, "a1") == [(0, "WITHIN_QUOTA")]
    assert starts(out, "a2") == [(0, "BORROWED")]  # l's idle instance
    # free 1 - reserve idle 1 = 0: a3 may not borrow r's instance
    assert starts(out, "a3") == [(100, "WITHIN_QUOTA")]
    assert starts(out, "r1") == [(10, "WITHIN_QUOTA")]  # found its instance free


def test_capacity_not_covered_by_limits_is_lendable() -> None:
    shares = [share("r", 1, "RESERVE"), share("l", 1, "LEND"), share("a", 1)]
    jobs = [job("a1", "a", 0, 100), job("a2", "a", 0, 100), job("a3", "a", 0, 100)]
    out = run(scenario(4, shares, jobs))  # one instance outside every limit
    assert [starts(out, n)[0] for n in ("a1", "a2", "a3")] == [
        (0, "WITHIN_QUOTA"),
        (0, "BORROWED"),
        (0, "BORROWED"),
    ]


def test_lend_and_reserve_shares_never_borrow() -> None:
    for strategy in ("LEND", "RESERVE"):
        out = run(
            scenario(
                3,
                [share("s", 1, strategy), share("l", 2, "LEND")],
                [job("s1", "s", 0, 100), job("s2", "s", 0, 100)],
            )
        )
        assert starts(out, "s2") == [(100, "WITHIN_QUOTA")], strategy


def test_disabled_share_refuses_new_jobs() -> None:
    out = run(scenario(1, [share("a", 1, state="DISABLED")], [job("a1", "a", 5, 100)]))
    assert out["jobs"]["a1"] == {
        "status": "FAILED",
        "quotaShareName": "a",
        "submittedAt": 5,
        "firstStartedAt": None,
        "stoppedAt": 5,
        "attempts": 0,
        "preemptions": [],
        "lostSeconds": 0,
        "statusReason": "SHARE_DISABLED",
    }
    assert changes(out, "a1") == [(5, "SUBMITTED", "FAILED", "SHARE_DISABLED")]


def test_disabled_share_keeps_scheduling_what_it_holds() -> None:
    out = run(
        scenario(
            1,
            [share("a", 1, "RESERVE")],
            [job("a1", "a", 0, 100), job("a2", "a", 0, 100), job("a3", "a", 60, 100)],
            [{"at": 50, "type": "UpdateQuotaShare", "quotaShareName": "a", "state": "DISABLED"}],
        )
    )
    assert out["jobs"]["a1"]["stoppedAt"] == 100  # running: continues
    assert starts(out, "a2") == [(100, "WITHIN_QUOTA")]  # waiting: scheduled as usual
    assert out["jobs"]["a3"]["statusReason"] == "SHARE_DISABLED"  # new: refused


def test_disabled_share_still_lends_its_idle_quota() -> None:
    out = run(
        scenario(
            2,
            [share("l", 1, "LEND", state="DISABLED"), share("a", 1)],
            [job("a1", "a", 0, 100), job("a2", "a", 0, 100)],
        )
    )
    assert starts(out, "a2") == [(0, "BORROWED")]


def test_share_runs_only_types_it_has_limits_for_per_type() -> None:
    out = run(
        scenario(
            {G: 1, P: 1},
            [share("a", {G: 1, P: 1}, "RESERVE")],
            [job("g1", "a", 0, 100), job("p1", "a", 0, 100, unit=P)],
        )
    )
    assert starts(out, "g1") == [(0, "WITHIN_QUOTA")]
    assert starts(out, "p1") == [(0, "WITHIN_QUOTA")]


def test_own_state_excludes_a_job_only_when_its_share_alone_rules_out_every_step() -> None:
    """The quick test that keeps a share parked through the other shares' releases:
    True only where neither quota (after the in-share victims), nor borrowing within
    the cap, could admit the job whatever the other shares hold; and never where a
    step could start it."""
    from quotagov.scheduler import Engine, JobSpec, ShareConfig
    from quotagov.scheduler.state import Job
    from quotagov.scheduler.steps import could_start, first_step, own_state_excludes, start_bounds

    engine = Engine(
        {G: 10},
        [
            ShareConfig.from_batch(share("a", 4, borrow=50, in_share=True)),
            ShareConfig.from_batch(share("lender", 6, "LEND")),
        ],
    )
    engine.submit(JobSpec("a1", "a", G, instanceCount=1, runSeconds=100, schedulingPriority=1))
    engine.submit(JobSpec("a2", "a", G, instanceCount=2, runSeconds=100, schedulingPriority=5))
    engine.advance_to(0)
    ledger = engine._ledger
    a = ledger.shares["a"]
    assert a.used[G] == 3  # room 1; borrow cap 4 x 50 / 100 = 2; 7 free, all lendable
    bounds = start_bounds(ledger, a, G)
    assert bounds is not None
    # (count, priority) -> excluded by the share's own state alone
    expected = {
        (3, 0): False,  # 2 above the room: borrowable within the cap of 2
        (4, 0): True,  # 3 above the room, no lower-priority job to preempt
        (4, 2): False,  # a1 (1 instance, priority 1) released: 2 above, borrowable
        (6, 9): False,  # a1 and a2 released: room 4, 2 above, borrowable
        (7, 9): True,  # 3 above even after both
    }
    for (count, priority), excluded in expected.items():
        assert own_state_excludes(bounds, count, priority) is excluded, (count, priority)
        probe = Job(JobSpec("probe", "a", G, instanceCount=count, schedulingPriority=priority), 99)
        if excluded:
            assert not could_start(bounds, count, priority)
            assert first_step(ledger, a, probe) is None
    # a LEND share at its limit, without in-share preemption: nothing of its own can start
    lender = ledger.shares["lender"]
    engine.submit(JobSpec("l1", "lender", G, instanceCount=6, runSeconds=100))
    engine.advance_to(0)
    held = start_bounds(ledger, lender, G)
    assert held is not None and held.room == 0
    assert own_state_excludes(held, 1, 9999)
