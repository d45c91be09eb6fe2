"""Hand-worked cases of the spec's sweeps, set-asides and event times, and of jobs
that can never be admitted (``docs/simulator/spec.md``: the sweeps after
"Order of a scheduling pass", "Event times"). Each expected value is worked out in
the test's docstring; the simple model of the spec (:mod:`.reference_model`) agrees.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from quotagov.scheduler import ScenarioError, simulate, validate_scenario

from .reference_model import reference_run

G = "ml.g5.xlarge"


def _share(name: str, limit: int, strategy: str, in_share: str = "DISABLED") -> dict[str, Any]:
    rsc: dict[str, Any] = {"strategy": strategy}
    return {
        "quotaShareName": name,
        "capacityLimits": [{"capacityUnit": G, "maxCapacity": limit}],
        "resourceSharingConfiguration": rsc,
        "preemptionConfiguration": {"inSharePreemption": in_share},
    }


def _job(name: str, share: str, count: int, at: float, run: float, prio: int = 0) -> dict[str, Any]:
    return {
        "jobName": name,
        "quotaShareName": share,
        "instanceType": G,
        "instanceCount": count,
        "submittedAt": at,
        "runSeconds": run,
        "schedulingPriority": prio,
    }


def _engine_run(doc: dict[str, Any]) -> dict[str, Any]:
    """Simulate with the engine's own rules for jobs that can never start (not marked
    UNSCHEDULABLE: they hold their share's head until a failing sweep sets them aside)."""
    scenario = validate_scenario(doc, allow_unschedulable=True)
    return simulate(dataclasses.replace(scenario, unschedulable={}))


def _starts(out: dict[str, Any]) -> list[tuple[float, str]]:
    return [(t["at"], t["jobName"]) for t in out["transitions"] if t["to"] == "SCHEDULED"]


def test_next_head_comes_one_sweep_after_the_set_aside() -> None:
    """Capacity 3; A LEND limit 2: a1, a2 need 3 (never within quota, LEND cannot
    borrow), a3 needs 1; B LEND limit 1: b1 needs 2, b2 needs 1; all at 0, input order
    a1 a2 a3 b1 b2.

    Sweep 1: heads a1, b1, both fail: both set aside. Sweep 2: heads a2 (fails) and b2
    (within quota, free 3): b2 starts. Sweep 3: heads a2 (fails), none in B: a2 set
    aside. Sweep 4: head a3 starts. So b2 starts before a3, although a3 is earlier in
    the input (the old pass skipped a2 as "no better than a1" and started a3 first).
    """
    doc = {
        "name": "sweeps",
        "capacity": {G: 3},
        "options": {"queueing": "BEST_EFFORT_FIFO"},
        "shares": [_share("A", 2, "LEND"), _share("B", 1, "LEND")],
        "jobs": [
            _job("a1", "A", 3, 0, 100),
            _job("a2", "A", 3, 0, 100),
            _job("a3", "A", 1, 0, 100),
            _job("b1", "B", 2, 0, 100),
            _job("b2", "B", 1, 0, 100),
        ],
    }
    out = _engine_run(doc)
    assert _starts(out) == [(0, "b2"), (0, "a3")]
    assert _starts(reference_run(doc)) == [(0, "b2"), (0, "a3")]


def test_no_pass_at_the_completion_time_of_a_preempted_attempt() -> None:
    """Capacity 3. A LEND_AND_BORROW limit 1: a1 needs 3, runs 1000 s. X
    LEND_AND_BORROW limit 1: x1 needs 2, x2 needs 4 (more than the environment). B LEND
    limit 1: b0 needs 2, b1 needs 1 and runs 5000 s.

    t=0: a1 borrows 2 and starts (would complete at 1000). t=100: sweep 1 heads x1
    (cannot borrow: free 0) and b0 (fails): both set aside. Sweep 2: x2 fails, b1
    reclaims a1 (CROSS_SHARE, frees 3) and starts; free 2. Sweep 3: heads x2 and a1
    (needs 3, free 2): set aside; then no heads: the pass ends with x1 set aside although
    it could now borrow. t=1000 is not an event time (a1's attempt was preempted), so
    nothing happens then (a pass at 1000 would have let x1 borrow 2 at once). At 5100
    b1 completes, free 3: a1 (submitted 0) borrows before x1 (submitted 100), runs its
    1000 s again (no checkpoint: 100 s lost) to 6100, and x1 borrows then.
    """
    doc = {
        "name": "stale",
        "capacity": {G: 3},
        "options": {"queueing": "BEST_EFFORT_FIFO"},
        "shares": [
            _share("A", 1, "LEND_AND_BORROW"),
            _share("X", 1, "LEND_AND_BORROW"),
            _share("B", 1, "LEND"),
        ],
        "jobs": [
            _job("a1", "A", 3, 0, 1000),
            _job("x1", "X", 2, 100, 100),
            _job("x2", "X", 4, 100, 100),
            _job("b0", "B", 2, 100, 100),
            _job("b1", "B", 1, 100, 5000),
        ],
    }
    out = _engine_run(doc)
    assert _starts(out) == [(0, "a1"), (100, "b1"), (5100, "a1"), (6100, "x1")]
    assert out["jobs"]["a1"]["preemptions"] == [
        {"at": 100, "kind": "CROSS_SHARE", "forJob": "b1", "lostSeconds": 100}
    ]
    assert not [t for t in out["transitions"] if t["at"] == 1000]
    assert _starts(reference_run(doc)) == _starts(out)


def _blocked_doc() -> dict[str, Any]:
    """STRICT_FIFO, 3 instances; share "big" LEND limit 2 (borrow limit does not apply):
    huge needs 4 (more than the environment), wide needs 3 (more than the share can
    hold), small needs 1 and is last."""
    return {
        "name": "unschedulable",
        "capacity": {G: 3},
        "shares": [_share("big", 2, "LEND")],
        "jobs": [
            _job("huge", "big", 4, 0, 100),
            _job("wide", "big", 3, 0, 100),
            _job("small", "big", 1, 0, 100),
        ],
    }


def test_a_job_that_can_never_be_admitted_is_an_error_naming_it() -> None:
    with pytest.raises(ScenarioError) as exc:
        validate_scenario(_blocked_doc())
    assert exc.value.faults == [
        "jobs[0].instanceCount: job 'huge' can never be admitted: needs 4 ml.g5.xlarge "
        "instances, the service environment has 3 (--allow-unschedulable reports it as "
        "UNSCHEDULABLE instead)",
        "jobs[1].instanceCount: job 'wide' can never be admitted: needs 3 ml.g5.xlarge "
        "instances, quota share 'big' can hold at most 2 (capacity limit 2, LEND does not "
        "borrow) (--allow-unschedulable reports it as UNSCHEDULABLE instead)",
    ]


def test_an_unschedulable_job_never_blocks_its_share() -> None:
    """With --allow-unschedulable: huge and wide are UNSCHEDULABLE (RUNNABLE to Batch,
    never the head), small starts at 0 instead of waiting behind them forever."""
    out = simulate(validate_scenario(_blocked_doc(), allow_unschedulable=True))
    assert _starts(out) == [(0, "small")]
    assert out["jobs"]["small"]["status"] == "SUCCEEDED"
    assert out["jobs"]["small"]["stoppedAt"] == 100
    assert out["jobs"]["huge"]["status"] == "UNSCHEDULABLE"
    assert out["jobs"]["huge"]["statusReason"] == (
        "needs 4 ml.g5.xlarge instances, the service environment has 3"
    )
    assert out["jobs"]["wide"]["status"] == "UNSCHEDULABLE"
    assert out["jobs"]["wide"]["attempts"] == 0


def test_a_job_admissible_after_a_later_limit_raise_is_not_unschedulable() -> None:
    """wide needs 3; the share's limit becomes 3 at 500: it can be admitted then."""
    doc = _blocked_doc()
    doc["jobs"] = doc["jobs"][1:]
    doc["actions"] = [
        {
            "at": 500,
            "type": "UpdateQuotaShare",
            "quotaShareName": "big",
            "capacityLimits": [{"capacityUnit": G, "maxCapacity": 3}],
        }
    ]
    out = simulate(validate_scenario(doc))
    # STRICT_FIFO: wide blocks small until the raise at 500, then starts; small after it
    assert _starts(out) == [(500, "wide"), (600, "small")]


def test_borrow_limit_counts_in_what_a_share_can_hold() -> None:
    """LEND_AND_BORROW limit 2, borrowLimit 50 %: at most 2 + 1 = 3 instances."""
    doc = _blocked_doc()
    doc["capacity"] = {G: 8}
    doc["shares"][0]["resourceSharingConfiguration"] = {
        "strategy": "LEND_AND_BORROW",
        "borrowLimit": 50,
    }
    with pytest.raises(ScenarioError) as exc:
        validate_scenario(doc)
    assert exc.value.faults == [
        "jobs[0].instanceCount: job 'huge' can never be admitted: needs 4 ml.g5.xlarge "
        "instances, quota share 'big' can hold at most 3 (capacity limit 2 + borrow limit "
        "50 % = 3) (--allow-unschedulable reports it as UNSCHEDULABLE instead)"
    ]
