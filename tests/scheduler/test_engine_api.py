"""The step-by-step API: mutations at ``now``, advance, listeners, fork, reads."""

from __future__ import annotations

import pytest

from quotagov.scheduler import (
    CapacityLimit,
    DuplicateJobError,
    Engine,
    InvalidConfigError,
    JobSpec,
    Options,
    ResourceSharingConfiguration,
    ShareConfig,
    Transition,
    UnknownJobError,
    UnknownShareError,
)

from .builders import G, P


def _share(name: str, limit: int, strategy: str = "RESERVE", in_share: bool = False) -> ShareConfig:
    return ShareConfig.from_batch(
        {
            "quotaShareName": name,
            "capacityLimits": [{"capacityUnit": G, "maxCapacity": limit}],
            "resourceSharingConfiguration": {"strategy": strategy},
            "preemptionConfiguration": {"inSharePreemption": "ENABLED" if in_share else "DISABLED"},
        }
    )


def _spec(name: str, share: str = "a", run: float | None = 100, **kw: object) -> JobSpec:
    return JobSpec(jobName=name, quotaShareName=share, instanceType=G, runSeconds=run, **kw)  # type: ignore[arg-type]


def test_submit_then_advance_runs_the_pass_at_now() -> None:
    engine = Engine({G: 1}, [_share("a", 1)])
    got = engine.submit(_spec("j1"))
    assert [(t.jobName, t.from_, t.to, t.reason) for t in got] == [
        ("j1", "SUBMITTED", "RUNNABLE", "SUBMITTED")
    ]
    assert engine.job("j1").status == "RUNNABLE"
    started = engine.advance_to(0)
    assert [(t.at, t.to) for t in started] == [(0, "SCHEDULED"), (0, "STARTING"), (0, "RUNNING")]
    assert engine.advance_to(99) == []
    view = engine.job("j1")
    assert view.status == "RUNNING"
    assert view.remainingSeconds == 1
    assert view.runningSince == 0
    assert [(t.at, t.to) for t in engine.advance_to(100)] == [(100, "SUCCEEDED")]
    assert engine.now == 100


def test_mutations_between_advances_use_the_spec_same_time_order() -> None:
    engine = Engine({G: 1}, [_share("a", 1)], start=10)
    engine.submit(_spec("j1", run=50))
    engine.advance_to(10)
    engine.advance_to(60)  # j1 completes at 60; nothing waits
    engine.submit(_spec("j2"))
    engine.submit(_spec("j3", schedulingPriority=5))
    out = engine.advance_to(60)
    # submissions at 60 in call order, then one pass: j3 (higher priority) starts
    assert [(t.jobName, t.to) for t in out] == [
        ("j3", "SCHEDULED"),
        ("j3", "STARTING"),
        ("j3", "RUNNING"),
    ]
    assert engine.runnable_order("a") == ["j2"]
    assert engine.job("j2").submittedAt == 60


def test_update_priority_and_in_share_preemption_step_by_step() -> None:
    engine = Engine({G: 1}, [_share("a", 1, in_share=True)])
    engine.submit(_spec("low", run=1000, checkpointIntervalSeconds=100, schedulingPriority=1))
    engine.advance_to(0)
    engine.advance_to(250)
    engine.submit(_spec("high", run=10, schedulingPriority=1))
    assert [t.to for t in engine.advance_to(250)] == []  # equal priority: waits
    engine.update_priority("high", 9)
    out = engine.advance_to(250)
    preempted = out[0]
    assert (preempted.jobName, preempted.to, preempted.reason) == (
        "low",
        "RUNNABLE",
        "PREEMPTED_IN_SHARE",
    )
    assert (preempted.kind, preempted.forJob, preempted.lostSeconds) == ("IN_SHARE", "high", 50)
    view = engine.job("low")
    assert view.remainingSeconds == 800
    assert view.preemptions[0].savedSeconds == 200
    assert view.lostSeconds == 50


def test_update_share_with_batch_shapes_and_models() -> None:
    engine = Engine({G: 3}, [_share("a", 1)])
    for i in range(3):
        engine.submit(_spec(f"j{i}"))
    engine.advance_to(0)
    assert engine.usage("a")[G].used == 1
    engine.update_share("a", capacityLimits=[{"capacityUnit": G, "maxCapacity": 3}])
    engine.advance_to(0)
    assert engine.usage("a")[G].used == 3
    engine.update_share("a", capacityLimits=[CapacityLimit(G, 1)])
    usage = engine.usage("a")[G]
    assert (usage.limit, usage.used, usage.idle, usage.borrowed) == (1, 3, 0, 2)
    engine.update_share(
        "a", resourceSharingConfiguration=ResourceSharingConfiguration("LEND_AND_BORROW", 100)
    )
    assert engine.share("a").resourceSharingConfiguration.borrowLimit == 100
    assert engine.share("a").capacityLimits == (CapacityLimit(G, 1),)  # omitted: kept


def test_invalid_share_update_changes_nothing() -> None:
    engine = Engine({G: 1}, [_share("a", 1)])
    with pytest.raises(InvalidConfigError) as exc:
        engine.update_share(
            "a", resourceSharingConfiguration={"strategy": "RESERVE", "borrowLimit": 10}
        )
    assert exc.value.faults == [
        "quotaShare 'a'.resourceSharingConfiguration.borrowLimit: only valid with "
        "LEND_AND_BORROW, the strategy is RESERVE"
    ]
    assert engine.share("a").resourceSharingConfiguration.strategy == "RESERVE"


def test_terminate_and_errors() -> None:
    engine = Engine({G: 1}, [_share("a", 1)])
    engine.submit(_spec("j1"))
    engine.advance_to(0)
    out = engine.terminate("j1")
    assert [(t.from_, t.to, t.reason) for t in out] == [("RUNNING", "FAILED", "TERMINATED")]
    assert engine.terminate("j1") == []
    assert engine.free(G) == 1
    with pytest.raises(UnknownJobError):
        engine.terminate("nope")
    with pytest.raises(UnknownShareError):
        engine.submit(_spec("x", share="nope"))
    with pytest.raises(DuplicateJobError):
        engine.submit(_spec("j1"))
    with pytest.raises(InvalidConfigError):
        engine.update_priority("j1", 10_000)
    with pytest.raises(ValueError):
        engine.advance_to(-1)


def test_listener_sees_every_transition_as_it_happens() -> None:
    engine = Engine({G: 1}, [_share("a", 1)])
    seen: list[Transition] = []
    engine.add_listener(seen.append)
    engine.submit(_spec("j1", run=10))
    returned = engine.advance_to(10)
    assert [t.to for t in seen] == ["RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "SUCCEEDED"]
    assert seen[1:] == returned
    engine.remove_listener(seen.append)
    engine.submit(_spec("j2"))
    assert len(seen) == 5


def test_fork_is_independent() -> None:
    engine = Engine({G: 2}, [_share("a", 2, in_share=True)])
    engine.submit(_spec("j1", run=100, schedulingPriority=1))
    engine.advance_to(0)
    seen: list[Transition] = []
    engine.add_listener(seen.append)
    what_if = engine.fork()
    what_if.submit(_spec("big", run=10, schedulingPriority=9, instanceCount=2))
    out = what_if.advance_to(0)
    assert [(t.jobName, t.to) for t in out][:2] == [("j1", "RUNNABLE"), ("big", "SCHEDULED")]
    assert seen == []  # listeners are not copied
    assert engine.job("j1").status == "RUNNING"
    assert engine.job_names() == ["j1"]
    assert [t.to for t in engine.advance_to(100)] == ["SUCCEEDED"]
    assert what_if.job("j1").status == "RUNNABLE"


def test_run_seconds_none_never_completes() -> None:
    engine = Engine({G: 1}, [_share("a", 1)])
    engine.submit(_spec("forever", run=None))
    engine.advance_to(0)
    assert engine.next_event_time() is None
    engine.advance_to(1_000_000)
    view = engine.job("forever")
    assert view.status == "RUNNING"
    assert view.remainingSeconds is None
    assert view.runningSeconds == 1_000_000


def test_misconfigured_job_stays_runnable_and_does_not_block() -> None:
    engine = Engine({G: 1, P: 1}, [_share("a", 1)])
    engine.submit(JobSpec("wrong-type", "a", P, runSeconds=10))
    engine.submit(_spec("ok", run=10))
    engine.advance_to(0)
    assert engine.job("wrong-type").misconfigured is True
    assert engine.job("wrong-type").status == "RUNNABLE"
    assert engine.job("ok").status == "RUNNING"
    engine.advance_to(1000)
    assert engine.job("wrong-type").status == "RUNNABLE"
    # once the share gets a limit for the type, it is admitted
    engine.update_share(
        "a",
        capacityLimits=[
            {"capacityUnit": G, "maxCapacity": 1},
            {"capacityUnit": P, "maxCapacity": 1},
        ],
    )
    engine.advance_to(1000)
    assert engine.job("wrong-type").status == "RUNNING"
    assert engine.job("wrong-type").misconfigured is False


def test_startup_options_and_scheduled_actions() -> None:
    engine = Engine({G: 1}, [_share("a", 1)], Options(startupSeconds=5))
    engine.schedule_submission(_spec("j1", run=10, submittedAt=20))
    engine.schedule_action(22, lambda e: e.update_priority("j1", 3))
    assert engine.job("j1").status == "SUBMITTED"
    out = engine.run_until_idle()
    assert [(t.at, t.to) for t in out] == [
        (20, "RUNNABLE"),
        (20, "SCHEDULED"),
        (20, "STARTING"),
        (25, "RUNNING"),
        (35, "SUCCEEDED"),
    ]
    assert engine.job("j1").schedulingPriority == 3
    assert engine.running_jobs("a", G) == []


def test_engine_rejects_invalid_shares() -> None:
    with pytest.raises(InvalidConfigError) as exc:
        Engine({G: -1}, [_share("a", 1), _share("a", 1)])
    assert exc.value.faults == [
        "shares[1].quotaShareName: duplicate share 'a'",
        "capacity.ml.g5.xlarge: -1 is negative",
    ]
