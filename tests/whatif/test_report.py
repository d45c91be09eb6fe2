"""Seeds, deltas and verdicts of the comparison, on hand-made blocks and a real run."""

from __future__ import annotations

from typing import Any

import pytest

from quotagov.durations import human_duration
from quotagov_tools.whatif import WhatIf, run_whatif
from quotagov_tools.whatif.perturb import perturbed
from quotagov_tools.whatif.report import aggregate, delta_block, verdicts, with_deltas
from support.whatif import contention, small_policy


def _run(p95: float, util: float, lost: float, team_p95: float) -> dict[str, Any]:
    block = {
        "waitSeconds": {"p50": 0, "p95": p95, "max": p95},
        "completionSeconds": {"p50": 10, "p95": team_p95},
        "utilization": util,
        "lostInstanceSeconds": lost,
        "failedJobs": 0,
        "refusedJobs": 0,
    }
    return {
        "total": block,
        "shares": {"s": block},
        "teams": {"research": block},
        "durationSeconds": 604800,
        "refusals": {},
    }


def test_medians_and_ranges_over_seeds() -> None:
    entry = aggregate([_run(100, 0.5, 0, 10), _run(300, 0.7, 0, 30), _run(200, 0.6, 0, 20)])
    assert entry["total"]["waitSeconds"]["p95"] == 200
    assert entry["spread"]["total"]["waitSeconds"]["p95"] == [100, 300]
    assert entry["total"]["utilization"] == 0.6
    assert entry["spread"]["teams"]["research"]["completionSeconds"]["p95"] == [10, 30]
    assert "spread" not in aggregate([_run(1, 1, 0, 1)])


def test_delta_against_the_first_and_the_verdict() -> None:
    # baseline: p95 wait 1000 s, utilization 50 %, 0 lost; candidate: 780 s, 62 %,
    # 3.6 instance-hours lost in one week (12960 s: 0.5 a day), research p95 completion 100 -> 78
    policies = with_deltas(
        {
            "today": aggregate([_run(1000, 0.5, 0, 100)]),
            "wider": aggregate([_run(780, 0.62, 12960, 78)]),
        }
    )
    d = policies["wider"]["delta"]["total"]
    assert d["waitSeconds"]["p95"] == {"change": -220, "percent": -22.0}
    assert d["utilization"]["change"] == 0.62 - 0.5
    assert d["lostInstanceSeconds"] == {"change": 12960, "percent": None}
    assert policies["today"]["delta"]["total"]["waitSeconds"]["p95"]["change"] == 0
    lines = verdicts(policies)
    assert lines["today"] == "today: the baseline the others are compared with"
    assert lines["wider"] == (
        "wider vs today: p95 completion -22 % for research; p95 wait -22 %; "
        "0.5 instance-h lost per day more; utilization 50 % -> 62 %"
    )


def test_overlapping_seed_ranges_are_marked_as_noise() -> None:
    policies = with_deltas(
        {
            "today": aggregate([_run(1000, 0.5, 0, 100), _run(1040, 0.5, 0, 104)]),
            "other": aggregate([_run(980, 0.5, 0, 98), _run(1020, 0.5, 0, 102)]),
        }
    )
    assert "(within noise)" in verdicts(policies)["other"]


def test_delta_block_keeps_only_compared_figures() -> None:
    block = delta_block({"byInstanceType": {}, "goodput": 0.9}, {"goodput": 0.8})
    assert set(block) == {"goodput"}


def test_perturbed_copies_are_reproducible_and_bounded() -> None:
    workload = contention()
    a = perturbed(workload, 3, jitter_seconds=60, run_noise=0.1)
    b = perturbed(workload, 3, jitter_seconds=60, run_noise=0.1)
    assert a == b
    assert a != perturbed(workload, 4, jitter_seconds=60, run_noise=0.1)
    originals = {j.name: j for j in workload.jobs}
    for j in a.jobs:
        o = originals[j.name]
        assert abs(j.submittedAt - o.submittedAt) <= 60 and j.submittedAt >= 0
        assert 0.9 * o.runSeconds <= j.runSeconds <= 1.1 * o.runSeconds


def test_seeds_in_one_process_and_in_the_pool_agree() -> None:
    config = dict(
        policies={"a": small_policy(), "b": small_policy(action="resubmit", max_resubmits=0)},
        workload=contention(),
        capacity={"ml.g5.xlarge": 2},
        seeds=3,
        jitter_seconds=50,
    )
    alone, _ = run_whatif(WhatIf(**config, workers=1))  # type: ignore[arg-type]
    pooled, series = run_whatif(WhatIf(**config, workers=2))  # type: ignore[arg-type]
    assert alone == pooled
    assert alone["workload"]["seeds"] == 3
    assert "spread" in alone["policies"]["a"]
    assert set(series) == {"a", "b"}


def test_human_durations() -> None:
    assert human_duration(6978803) == "80 d 19 h"
    assert human_duration(95) == "1 m 35 s"
    assert human_duration(3599.6) == "1 h"
    assert human_duration(0) == "0 s"
    assert human_duration(None) == "-"


def test_the_pool_works_without_fork_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # where workers are spawned (macOS, Windows), they get the comparison pickled
    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    config = WhatIf(
        policies={"a": small_policy()},
        workload=contention(),
        capacity={"ml.g5.xlarge": 2},
        seeds=2,
        jitter_seconds=0,
        run_noise=0,
        workers=2,
    )
    report, _ = run_whatif(config)
    assert report["policies"]["a"]["total"]["dispositions"]["reclassify"] == 1


def test_the_environment_is_named_once_when_the_policies_agree() -> None:
    from quotagov_tools.whatif.html import _environment
    from quotagov_tools.whatif.runner import _one_or_each

    same = {"a": {"ml.g5.xlarge": 2}, "b": {"ml.g5.xlarge": 2}}
    assert _one_or_each(same) == {"ml.g5.xlarge": 2}
    differ = {"a": {"ml.g5.xlarge": 2}, "b": {"ml.g5.xlarge": 3}}
    assert _one_or_each(differ) == differ
    assert _environment({"ml.g5.xlarge": 2}) == "2 x ml.g5.xlarge"
    assert _environment(differ) == "a: 2 x ml.g5.xlarge; b: 3 x ml.g5.xlarge"


def test_a_constant_load_gives_a_constant_used_capacity_series() -> None:
    # 10 instances held the whole run, on an end that 200 bins do not divide evenly:
    # the old binning lost whole stretches to rounding (145 of 200 bins at 0)
    from quotagov_tools.whatif import Workload
    from support.whatif import wjob

    workload = Workload("constant", (wjob("big", "r", "exp", 0, 4799.3, count=10),))
    from quotagov.policy.validation import parse_policy

    data = small_policy(exp_shares=("bg",), action="resubmit").model_dump(
        mode="json", exclude_none=True
    )
    data["workloadClasses"]["exp"]["maxInstanceCount"] = 10
    data["quotaShares"][0]["capacityLimits"][0]["maxCapacity"] = 10
    policy = parse_policy(data)
    report, series = run_whatif(
        WhatIf(policies={"p": policy}, workload=workload, capacity={"ml.g5.xlarge": 12}, workers=1)
    )
    used = report["policies"]["p"]["usedCapacity"]
    assert len(used) == 200
    assert {mean for _, mean in used} == {10}
    assert used[0][0] == 0 and used[1][0] == pytest.approx(4799.3 / 200)
    assert series["p"]["usedCapacity"] == used


def test_binning_keeps_every_piece_of_a_step_function() -> None:
    from quotagov_tools.whatif.governed import _UsedSeries

    s = _UsedSeries({})
    s.steps = [(0.0, 10), (0.3, 4), (2.9, 0)]
    # 3 bins of 1 s: 10 x 0.3 + 4 x 0.7; 4 x 1; 4 x 0.9 + 0 x 0.1
    assert s.binned(3.0, 3) == [[0.0, 5.8], [1.0, 4.0], [2.0, 3.6]]
    assert s.binned(0, 3) == []


def _blocks(team_p95: float, wait_p95: float = 100, lost: float = 0) -> dict[str, Any]:
    run = _run(wait_p95, 0.5, lost, team_p95)
    run["durationSeconds"] = 80 * 60
    return run


def test_regressions_beyond_noise_come_first_worst_first() -> None:
    policies = with_deltas(
        {"today": aggregate([_blocks(420)]), "wider": aggregate([_blocks(4141, wait_p95=110)])}
    )
    from quotagov_tools.whatif.report import regression_line, regressions

    found = regressions(policies, seeds=1)
    # p95 completion +886 % for the team, the share and the total; p95 wait +10 %
    assert [(r["scope"], r["label"], round(r["percent"])) for r in found] == [
        ("total", "p95 completion", 886),
        ("team", "p95 completion", 886),
        ("share", "p95 completion", 886),
        ("total", "p95 wait", 10),
        ("team", "p95 wait", 10),
        ("share", "p95 wait", 10),
    ]
    assert regression_line(found[1]) == (
        "wider vs today: team research p95 completion 7 m -> 1 h 9 m "
        "(+886 %; not measured (1 seed))"
    )
    # a better policy has none; with seeds, overlapping ranges are noise, not regressions
    assert (
        regressions(
            with_deltas({"a": aggregate([_blocks(420)]), "b": aggregate([_blocks(400)])}), 1
        )
        == []
    )
    noisy = with_deltas(
        {
            "today": aggregate([_blocks(400), _blocks(500)]),
            "other": aggregate([_blocks(450), _blocks(560)]),
        }
    )
    assert [r for r in regressions(noisy, seeds=2) if r["label"] == "p95 completion"] == []


def test_verdicts_scale_to_the_span_of_the_run() -> None:
    # an 80-minute scenario: lost work over the run, never per week
    policies = with_deltas(
        {"today": aggregate([_blocks(420)]), "other": aggregate([_blocks(420, lost=1800)])}
    )
    line = verdicts(policies)["other"]
    assert "0.5 instance-h lost over the run (1 h 20 m) more" in line
    assert "per week" not in line and "per day" not in line
    from quotagov_tools.whatif.report import rate_window

    assert rate_window(3 * 86400) == (86400.0, "per day")
    assert rate_window(30 * 86400) == (604800.0, "per week")


def test_limits_that_the_environment_cannot_hold_are_warned() -> None:
    from quotagov_tools.whatif.report import limit_warnings

    assert limit_warnings(
        {"today": {"ml.g5.xlarge": 24}, "fits": {"ml.g5.xlarge": 3}},
        {"today": {"ml.g5.xlarge": 3}, "fits": {"ml.g5.xlarge": 3}},
    ) == [
        "policy 'today': its quota shares' capacity limits total 24 x ml.g5.xlarge on an "
        "environment of 3: the shares cannot all hold their limits at once"
    ]
    assert limit_warnings(
        {"p": {"ml.g5.xlarge": 2}}, {"p": {"ml.g5.xlarge": 3, "ml.p4d.24xlarge": 1}}
    ) == [
        "policy 'p': its quota shares' capacity limits total 2 x ml.g5.xlarge on an "
        "environment of 3: 1 instance(s) beyond every share's limit",
        "policy 'p': its quota shares' capacity limits total 0 x ml.p4d.24xlarge on an "
        "environment of 1: 1 instance(s) beyond every share's limit",
    ]
