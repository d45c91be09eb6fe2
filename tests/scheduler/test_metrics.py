"""Metrics worked by hand: lent attribution, utilization, percentiles, goodput."""

from __future__ import annotations

from quotagov.scheduler.metrics import percentile

from .builders import job, run, scenario, share


def test_percentiles_use_nearest_rank() -> None:
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == 20.0
    assert percentile(values, 95) == 40.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None


def test_lent_instances_split_in_proportion_to_idle_quota() -> None:
    # capacity 4 = limits b 1 + l1 2 + l2 1; b runs 2 jobs for 100 s: 1 borrowed instance,
    # lent by l1 (idle 2) and l2 (idle 1) in proportion: 2/3 and 1/3 of 100 s.
    out = run(
        scenario(
            4,
            [share("b", 1), share("l1", 2, "LEND"), share("l2", 1, "LEND")],
            [job("b1", "b", 0, 100), job("b2", "b", 0, 100)],
        )
    )
    shares = out["metrics"]["shares"]
    assert shares["b"]["borrowedInstanceSeconds"] == 100
    assert shares["l1"]["lentInstanceSeconds"] == round(200 / 3, 6)
    assert shares["l2"]["lentInstanceSeconds"] == round(100 / 3, 6)
    assert out["metrics"]["total"]["lentInstanceSeconds"] == 100


def test_borrowing_from_capacity_outside_every_limit_is_lent_by_nobody() -> None:
    out = run(
        scenario(
            3,
            [share("b", 1), share("l", 1, "LEND")],
            [job("b1", "b", 0, 100), job("b2", "b", 0, 100)],
        )
    )
    assert out["metrics"]["shares"]["b"]["borrowedInstanceSeconds"] == 100
    assert out["metrics"]["shares"]["l"]["lentInstanceSeconds"] == 0


def test_utilization_waits_and_completions() -> None:
    # a1 0-100, a2 0-200, a3 (submitted 50) 100-200: the limit of 2 is used all 200 s
    out = run(
        scenario(
            2,
            [share("a", 2, "RESERVE")],
            [job("a1", "a", 0, 100), job("a2", "a", 0, 200), job("a3", "a", 50, 100)],
        )
    )
    a = out["metrics"]["shares"]["a"]
    assert out["metrics"]["durationSeconds"] == 200
    assert a["usedInstanceSeconds"] == 100 + 200 + 100
    assert a["utilizationOfLimit"] == 400 / 400
    assert a["waitSeconds"] == {"p50": 0, "p95": 50, "max": 50}
    assert a["completionSeconds"] == {"p50": 150, "p95": 200}
    assert a["goodput"] == 1
    assert a["jobs"] == {"SUCCEEDED": 3}


def test_every_runnable_stretch_is_a_wait_after_preemptions_too() -> None:
    # b (borrowing l's instance) runs 0-100, is preempted by l1 at 100, waits until l1
    # ends at 400, then runs 400-...: its waits are 0 and 300; l1 waited 0.
    out = run(
        scenario(
            2,
            [share("b", 1), share("l", 1, "LEND")],
            [job("b1", "b", 0, 1000), job("b2", "b", 0, 500), job("l1", "l", 100, 300)],
        )
    )
    total = out["metrics"]["total"]
    assert out["jobs"]["b2"]["preemptions"][0]["at"] == 100
    # waits: b1 0, b2 0, l1 0, b2 after its preemption 100-400 = 300
    assert total["waitSeconds"] == {"p50": 0, "p95": 300, "max": 300}
    assert out["metrics"]["shares"]["b"]["waitSeconds"]["max"] == 300


def test_a_wait_still_open_at_the_horizon_counts_until_the_end() -> None:
    # one instance, a1 holds it 0-1000; a2 waits from 0 and the run stops at 600
    out = run(
        scenario(
            1,
            [share("a", 1, "RESERVE")],
            [job("a1", "a", 0, 1000), job("a2", "a", 0, 100)],
            horizonSeconds=600,
        )
    )
    assert out["metrics"]["total"]["waitSeconds"]["max"] == 600
    assert out["metrics"]["total"]["failedJobs"] == 0


def test_environment_utilization_and_failed_jobs() -> None:
    # capacity 4, one share of limit 1: a1 0-100 alone; the environment offers 4 x 100
    out = run(
        scenario(
            4,
            [share("a", 1, "RESERVE"), share("d", 1, "RESERVE", state="DISABLED")],
            [job("a1", "a", 0, 100), job("d1", "d", 0, 100)],
        )
    )
    total = out["metrics"]["total"]
    assert total["utilization"] == 100 / 400
    assert out["metrics"]["shares"]["a"]["utilizationOfLimit"] == 100 / 100
    # d1 went to a DISABLED share: FAILED at once, counted as failed
    assert total["failedJobs"] == 1
    assert out["metrics"]["shares"]["d"]["failedJobs"] == 1
