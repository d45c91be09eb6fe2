"""Property tests: every invariant of the spec over random small scenarios.

Invariants (``docs/simulator/spec.md``, "Invariants"), checked after every
event time's scheduling pass through the step API:

1. sum of used(s,u) <= capacity(u);
2. a RESERVE or LEND share holds no borrowed instances, except after a limit cut;
3. borrowed(s,u) <= limit x borrowLimit / 100 when borrowLimit is not -1, except after
   a limit cut;
4. no job is preempted by an equal- or lower-priority job of its own share;
5. no share's head that is within quota waits while instances borrowed by other shares
   could be reclaimed for it (free + other shares' borrowed >= its count);
6. every job ends SUCCEEDED, FAILED or still non-terminal at the horizon;
7. work is conserved: a SUCCEEDED job was RUNNING for exactly
   runSeconds + lostSeconds + restartOverheadSeconds x preemptions.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotagov.scheduler import (
    Engine,
    Transition,
    build_engine,
    dump_output,
    simulate,
    validate_scenario,
)

TYPES = ["ml.g5.xlarge", "ml.p4d.24xlarge"]

settings.register_profile(
    "scheduler",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
PROFILE = settings.get_profile("scheduler")


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    n_shares = draw(st.integers(2, 4))
    shares = []
    for i in range(n_shares):
        units = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=2, unique=True))
        # share s0 always borrows, so that lenders often have to reclaim
        strategy = (
            "LEND_AND_BORROW"
            if i == 0
            else draw(st.sampled_from(["RESERVE", "LEND", "LEND_AND_BORROW"]))
        )
        rsc: dict[str, Any] = {"strategy": strategy}
        if strategy == "LEND_AND_BORROW":
            rsc["borrowLimit"] = draw(st.sampled_from([-1, -1, 0, 50, 100, 200]))
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
                "state": draw(st.sampled_from(["ENABLED"] * 5 + ["DISABLED"])),
            }
        )
    # capacity close to the sum of the limits (sometimes above, sometimes below)
    capacity = {
        u: max(
            1,
            sum(
                c["maxCapacity"]
                for s in shares
                for c in s["capacityLimits"]
                if c["capacityUnit"] == u
            )
            + draw(st.integers(-1, 1)),
        )
        for u in TYPES
    }
    jobs = []
    for j in range(draw(st.integers(1, 12))):
        s = draw(st.integers(0, n_shares - 1))
        units = [c["capacityUnit"] for c in shares[s]["capacityLimits"]]
        jobs.append(
            {
                "jobName": f"j{j}",
                "quotaShareName": f"s{s}",
                "submittedAt": draw(st.sampled_from([0, 0, 50, 100, 150, 200, 300])),
                "instanceType": draw(st.sampled_from(units)),
                "instanceCount": draw(st.sampled_from([1, 1, 1, 2, 3])),
                "runSeconds": draw(st.sampled_from([0, 60, 120, 250, 400, 600])),
                "schedulingPriority": draw(st.sampled_from([0, 1, 5, 9])),
                "preemptionRetriesBeforeTermination": draw(st.sampled_from([None, None, 0, 1, 2])),
                "checkpointIntervalSeconds": draw(st.sampled_from([None, 30, 100])),
                "restartOverheadSeconds": draw(st.sampled_from([0, 0, 20])),
            }
        )
    actions: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(
            st.sampled_from(["UpdateServiceJob", "UpdateQuotaShare", "TerminateServiceJob"])
        )
        if kind == "UpdateQuotaShare":
            s = draw(st.integers(0, n_shares - 1))
            actions.append(
                {
                    "at": draw(st.integers(0, 400)),
                    "type": kind,
                    "quotaShareName": f"s{s}",
                    "capacityLimits": [
                        {"capacityUnit": c["capacityUnit"], "maxCapacity": draw(st.integers(1, 3))}
                        for c in shares[s]["capacityLimits"]
                    ],
                }
            )
        else:
            target = draw(st.sampled_from(jobs))
            action = {
                "at": target["submittedAt"] + draw(st.integers(1, 200)),
                "type": kind,
                "jobName": target["jobName"],
            }
            if kind == "UpdateServiceJob":
                action["schedulingPriority"] = draw(st.sampled_from([0, 1, 5, 9]))
            actions.append(action)
    return {
        "name": "random",
        "capacity": capacity,
        "options": {
            "startupSeconds": draw(st.sampled_from([0, 0, 10])),
            "queueing": draw(st.sampled_from(["STRICT_FIFO", "BEST_EFFORT_FIFO"])),
            "horizonSeconds": draw(st.sampled_from([None, None, 350])),
        },
        "shares": shares,
        "jobs": jobs,
        "actions": actions,
    }


def _check_state(engine: Engine, doc: dict[str, Any], cut: set[tuple[str, str]]) -> None:
    shares = {s.quotaShareName: s for s in engine.shares()}
    usage = {name: engine.usage(name) for name in shares}
    for u in TYPES:
        used = sum(usage[n][u].used for n in shares if u in usage[n])
        assert used <= doc["capacity"][u], f"invariant 1 at {engine.now}"
        assert engine.free(u) == doc["capacity"][u] - used
    for name, config in shares.items():
        strategy = config.resourceSharingConfiguration.strategy
        borrow_limit = config.resourceSharingConfiguration.borrowLimit
        for u, use in usage[name].items():
            if (name, u) in cut:
                continue
            if strategy in ("RESERVE", "LEND"):
                assert use.borrowed == 0, f"invariant 2: {name} {u} at {engine.now}"
            elif borrow_limit != -1:
                assert use.borrowed * 100 <= use.limit * borrow_limit, f"invariant 3: {name}"
    # invariant 5: the head of each share (first RUNNABLE job that can ever run)
    for name in shares:
        order = [engine.job(n) for n in engine.runnable_order(name)]
        heads = [j for j in order if not j.misconfigured]
        if not heads:
            continue
        head = heads[0]
        u = head.instanceType
        own = usage[name][u]
        if own.used + head.instanceCount > own.limit:
            continue  # not within quota
        reclaimable = sum(usage[n][u].borrowed for n in shares if n != name and u in usage[n])
        assert engine.free(u) + reclaimable < head.instanceCount, (
            f"invariant 5: head {head.jobName} of {name} waits at {engine.now}"
        )


def _limit_cuts(doc: dict[str, Any]) -> list[tuple[float, str, str]]:
    """(at, share, type) of every capacity-limit decrease (or removal)."""
    cuts = []
    current = {
        s["quotaShareName"]: {c["capacityUnit"]: c["maxCapacity"] for c in s["capacityLimits"]}
        for s in doc["shares"]
    }
    for a in sorted(
        (a for a in doc["actions"] if a["type"] == "UpdateQuotaShare"), key=lambda a: a["at"]
    ):
        new = {c["capacityUnit"]: c["maxCapacity"] for c in a["capacityLimits"]}
        for u, m in current[a["quotaShareName"]].items():
            if new.get(u, 0) < m:
                cuts.append((a["at"], a["quotaShareName"], u))
        current[a["quotaShareName"]] = new
    return cuts


@pytest.mark.slow  # hypothesis, 300 examples
@PROFILE
@given(scenarios())
def test_invariants_hold_on_random_scenarios(doc: dict[str, Any]) -> None:
    scenario = validate_scenario(doc, allow_unschedulable=True)
    engine = build_engine(scenario)
    priorities: dict[str, int] = {j["jobName"]: j["schedulingPriority"] for j in doc["jobs"]}
    shares_of = {j["jobName"]: j["quotaShareName"] for j in doc["jobs"]}
    seen: list[Transition] = []

    def on_transition(t: Transition) -> None:
        seen.append(t)
        if t.kind == "IN_SHARE":
            # invariant 4, with the priorities in force at that moment
            assert t.forJob is not None
            assert shares_of[t.forJob] == shares_of[t.jobName]
            assert (
                engine.job(t.forJob).schedulingPriority > engine.job(t.jobName).schedulingPriority
            )

    engine.add_listener(on_transition)
    horizon = scenario.options.horizonSeconds
    cuts = _limit_cuts(doc)
    engine.advance_to(0)
    while True:
        cut = {(s, u) for at, s, u in cuts if at <= engine.now}
        _check_state(engine, doc, cut)
        nxt = engine.next_event_time()
        if nxt is None or (horizon is not None and nxt > horizon):
            break
        engine.advance_to(nxt)
    if horizon is not None:
        engine.advance_to(horizon)
    assert priorities  # every scenario has jobs
    for view in engine.jobs():
        # invariant 6
        if view.status in ("SUCCEEDED", "FAILED"):
            assert view.stoppedAt is not None
        elif horizon is None:
            # run until idle: nothing in flight is left half-started
            assert view.status in ("RUNNABLE", "SUBMITTED", "UNSCHEDULABLE") or (
                view.status == "RUNNING" and view.runSeconds is None
            ), view
        if view.status == "SUCCEEDED":
            # invariant 7
            assert view.runSeconds is not None
            spec = next(j for j in doc["jobs"] if j["jobName"] == view.jobName)
            expected = (
                view.runSeconds
                + view.lostSeconds
                + spec["restartOverheadSeconds"] * len(view.preemptions)
            )
            assert abs(view.runningSeconds - expected) < 1e-6, view
        assert view.attempts >= len(view.preemptions)
    assert all(t.from_ != t.to for t in seen)


@settings(max_examples=30, deadline=None)
@given(scenarios())
def test_same_scenario_gives_byte_identical_output(doc: dict[str, Any]) -> None:
    first = dump_output(simulate(validate_scenario(doc, allow_unschedulable=True)))
    second = dump_output(simulate(validate_scenario(doc, allow_unschedulable=True)))
    assert first == second


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.booleans(), scenarios())
def test_speed_shortcuts_do_not_change_the_outcome(best_effort: bool, doc: dict[str, Any]) -> None:
    """Parked shares, skipped settled passes and kept plans (STRICT_FIFO), the cached
    first startable job per share and type and the queues left off the stale list
    (BEST_EFFORT_FIFO), and the quick tests of what can start (both) give the plain
    pass's result."""
    scenario = validate_scenario(
        _best_effort(doc) if best_effort else doc, allow_unschedulable=True
    )
    assert dump_output(simulate(scenario)) == _plain(scenario)


def _plain(scenario: Any) -> str:
    """Output with the speed shortcuts switched off: every head planned afresh by the
    steps' own rules at every sweep, no share parked, no pass skipped (STRICT_FIFO);
    every queue holding jobs of a type recomputed at every change of the type, its first
    startable job looked for afresh each time (BEST_EFFORT_FIFO); no quick test before the
    steps' rules."""
    import pytest

    from quotagov.scheduler import memo, steps, sweeps
    from quotagov.scheduler.memo import PassMemo

    def uncached(ledger: Any, share: Any, queue: Any, u: str) -> Any:
        return sweeps._first_startable(ledger, share, queue, u, from_bound=True)

    def unplanned(self: Any, ledger: Any, share: Any, job: Any) -> Any:
        return steps.planned_step(ledger, share, job)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PassMemo, "park", lambda self, share, instance_type: None)
        mp.setattr(PassMemo, "is_settled", lambda self: False)
        mp.setattr(PassMemo, "plan", unplanned)
        mp.setattr(sweeps, "_candidate", uncached)
        mp.setattr(sweeps, "_still_holds", lambda ledger, queue, sweeps: False)
        for module in (memo, sweeps, steps):
            mp.setattr(module, "may_start_any", lambda ledger, share, u: True)
        for module in (sweeps, steps):
            mp.setattr(module, "could_start", lambda bounds, count, priority: True)
        return dump_output(simulate(scenario))


def _best_effort(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "options": {**doc["options"], "queueing": "BEST_EFFORT_FIFO"}}


@pytest.mark.slow  # two traces per shape, each simulated twice
@pytest.mark.parametrize("shape", ["classic", "wide", "cuts", "bursts"])
def test_speed_shortcuts_do_not_change_a_benchmark_shape(shape: str) -> None:
    """Each workload shape of the benchmark (20 shares, mixed types, counts, priorities,
    capacity cuts, bursts) at 1,500 jobs, both queueings: the output with every
    shortcut switched off is the same text."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "simulate_scale.py"
    spec = importlib.util.spec_from_file_location("simulate_scale", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for queueing in ("BEST_EFFORT_FIFO", "STRICT_FIFO"):
        trace = module.build_trace(1500, seed=2000, queueing=queueing, shape=shape)
        scenario = validate_scenario(trace, allow_unschedulable=True)
        assert dump_output(simulate(scenario)) == _plain(scenario), queueing
