"""Differential test: the scheduler against a deliberately simple model of the spec.

The model (:mod:`.reference_model`) recomputes everything at every event time and reads
the sweeps of "Order of a scheduling pass" and the "Event times" literally, with no
shortcut. On random scenarios (2 to 4 shares of every strategy, in-share preemption on
and off, borrow limits, DISABLED shares, startup times, horizons, priority updates,
capacity-limit cuts and raises, terminations), in both queueing modes, every job's
record and the whole transition list must agree.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotagov.scheduler import simulate, validate_scenario
from quotagov.scheduler.simulation import normalize

from .reference_model import reference_run
from .test_properties import scenarios

TYPES = ["ml.g5.xlarge", "ml.p4d.24xlarge"]


@st.composite
def crowded(draw: st.DrawFn) -> dict[str, Any]:
    """Scenarios with many jobs per share and jobs larger than their share's limit, so
    that set-asides, reclaims and in-share preemption interleave within one pass."""
    n_shares = draw(st.integers(2, 4))
    shares = []
    for i in range(n_shares):
        units = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=2, unique=True))
        strategy = draw(st.sampled_from(["RESERVE", "LEND", "LEND_AND_BORROW", "LEND_AND_BORROW"]))
        rsc: dict[str, Any] = {"strategy": strategy}
        if strategy == "LEND_AND_BORROW":
            rsc["borrowLimit"] = draw(st.sampled_from([-1, 0, 50, 100]))
        shares.append(
            {
                "quotaShareName": f"s{i}",
                "capacityLimits": [
                    {"capacityUnit": u, "maxCapacity": draw(st.integers(1, 3))} for u in units
                ],
                "resourceSharingConfiguration": rsc,
                "preemptionConfiguration": {
                    "inSharePreemption": draw(st.sampled_from(["ENABLED", "DISABLED"]))
                },
            }
        )
    capacity = {u: draw(st.integers(1, 6)) for u in TYPES}
    jobs = []
    for j in range(draw(st.integers(3, 16))):
        s = draw(st.integers(0, n_shares - 1))
        units = [c["capacityUnit"] for c in shares[s]["capacityLimits"]]
        jobs.append(
            {
                "jobName": f"j{j}",
                "quotaShareName": f"s{s}",
                "submittedAt": draw(st.sampled_from([0, 0, 0, 50, 100, 150])),
                "instanceType": draw(st.sampled_from(units)),
                "instanceCount": draw(st.sampled_from([1, 1, 2, 3, 4])),
                "runSeconds": draw(st.sampled_from([60, 100, 250, 400])),
                "schedulingPriority": draw(st.sampled_from([0, 1, 5])),
                "preemptionRetriesBeforeTermination": draw(st.sampled_from([None, None, 1])),
                "checkpointIntervalSeconds": draw(st.sampled_from([None, 30])),
                "restartOverheadSeconds": draw(st.sampled_from([0, 20])),
            }
        )
    actions: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            s = draw(st.integers(0, n_shares - 1))
            actions.append(
                {
                    "at": draw(st.integers(0, 300)),
                    "type": "UpdateQuotaShare",
                    "quotaShareName": f"s{s}",
                    "capacityLimits": [
                        {"capacityUnit": c["capacityUnit"], "maxCapacity": draw(st.integers(1, 3))}
                        for c in shares[s]["capacityLimits"]
                    ],
                }
            )
        else:
            target = draw(st.sampled_from(jobs))
            actions.append(
                {
                    "at": target["submittedAt"] + draw(st.integers(1, 200)),
                    "type": "UpdateServiceJob",
                    "jobName": target["jobName"],
                    "schedulingPriority": draw(st.sampled_from([0, 1, 5, 9])),
                }
            )
    return {
        "name": "crowded",
        "capacity": capacity,
        "options": {"startupSeconds": draw(st.sampled_from([0, 0, 10]))},
        "shares": shares,
        "jobs": jobs,
        "actions": actions,
    }


FIELDS = ("status", "firstStartedAt", "stoppedAt", "attempts", "preemptions", "statusReason")


def _with_queueing(doc: dict[str, Any], queueing: str) -> dict[str, Any]:
    return {**doc, "options": {**doc["options"], "queueing": queueing}}


def _agree(doc: dict[str, Any]) -> None:
    # jobs that can never be admitted are left unmarked: the engine's own rules (those
    # the simulated Batch and the impact preview use) must hold them as the spec says
    scenario = dataclasses.replace(
        validate_scenario(doc, allow_unschedulable=True), unschedulable={}
    )
    out = simulate(scenario)
    ref = normalize(reference_run(doc))
    got_jobs = {name: {k: rec[k] for k in FIELDS} for name, rec in out["jobs"].items()}
    assert got_jobs == ref["jobs"]
    assert out["transitions"] == ref["transitions"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["STRICT_FIFO", "BEST_EFFORT_FIFO"]), st.one_of(scenarios(), crowded()))
def test_agrees_with_the_model_quick(queueing: str, doc: dict[str, Any]) -> None:
    """A quick sample of the comparison below (the fast tier)."""
    _agree(_with_queueing(doc, queueing))


@pytest.mark.slow  # hypothesis, 1,000 examples per queueing mode
@pytest.mark.parametrize("queueing", ["STRICT_FIFO", "BEST_EFFORT_FIFO"])
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=crowded())
def test_agrees_with_the_model_when_crowded(queueing: str, doc: dict[str, Any]) -> None:
    """The same on crowded scenarios (many set-asides per pass)."""
    _agree(_with_queueing(doc, queueing))


@pytest.mark.slow  # hypothesis, 500 examples per queueing mode
@pytest.mark.parametrize("queueing", ["STRICT_FIFO", "BEST_EFFORT_FIFO"])
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=scenarios())
def test_agrees_with_the_model(queueing: str, doc: dict[str, Any]) -> None:
    """Every job record and every transition as the simple model of the spec says."""
    _agree(_with_queueing(doc, queueing))
