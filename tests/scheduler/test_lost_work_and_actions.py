"""Checkpoints, restart overhead, retries, the three actions, startup states, same-time order."""

from __future__ import annotations

from .builders import changes, job, run, scenario, share, starts

IN_SHARE_ONE = [share("a", 1, "RESERVE", in_share=True)]


def _victim_run(**victim: object) -> dict:
    # v (prio 1, 1000 s) runs from 0; h (prio 9, 100 s) arrives at 700 and preempts it
    return run(
        scenario(
            1,
            IN_SHARE_ONE,
            [job("v", "a", 0, 1000, prio=1, **victim), job("h", "a", 700, 100, prio=9)],  # type: ignore[arg-type]
        )
    )


def test_checkpoint_saves_whole_intervals_and_loses_the_rest() -> None:
    out = _victim_run(ckpt=300)
    # ran 700: saved 600, lost 100; 400 s left, restarted at 800 when h completes
    assert out["jobs"]["v"]["preemptions"] == [
        {"at": 700, "kind": "IN_SHARE", "forJob": "h", "lostSeconds": 100}
    ]
    assert starts(out, "v") == [(0, "WITHIN_QUOTA"), (800, "WITHIN_QUOTA")]
    assert out["jobs"]["v"]["stoppedAt"] == 1200
    assert out["jobs"]["v"]["lostSeconds"] == 100


def test_no_checkpoint_loses_the_whole_attempt() -> None:
    out = _victim_run()
    assert out["jobs"]["v"]["lostSeconds"] == 700
    assert out["jobs"]["v"]["stoppedAt"] == 800 + 1000


def test_restart_overhead_grows_the_remaining_work() -> None:
    out = _victim_run(ckpt=300, overhead=50)
    # 1000 - 600 saved + 50 overhead = 450 s from 800
    assert out["jobs"]["v"]["stoppedAt"] == 1250
    assert out["metrics"]["shares"]["a"]["lostInstanceSeconds"] == 100
    # useful: v 1000 s + h 100 s of 700 + 450 + 100 used
    assert out["metrics"]["shares"]["a"]["goodput"] == round(1100 / 1250, 6)


def test_retries_zero_fails_at_the_first_preemption() -> None:
    out = _victim_run(retries=0, ckpt=300)
    assert out["jobs"]["v"]["status"] == "FAILED"
    assert out["jobs"]["v"]["statusReason"] == "RETRIES_EXHAUSTED"
    assert out["jobs"]["v"]["stoppedAt"] == 700
    assert out["jobs"]["v"]["attempts"] == 1
    assert out["jobs"]["v"]["preemptions"] == [
        {"at": 700, "kind": "IN_SHARE", "forJob": "h", "lostSeconds": 100}
    ]
    assert changes(out, "v")[-1] == (700, "RUNNING", "FAILED", "RETRIES_EXHAUSTED")
    assert starts(out, "h") == [(700, "WITHIN_QUOTA")]


def test_retries_n_allows_n_requeues() -> None:
    out = run(
        scenario(
            1,
            IN_SHARE_ONE,
            [
                job("v", "a", 0, 1000, prio=1, retries=1),
                job("h1", "a", 100, 100, prio=9),
                job("h2", "a", 300, 100, prio=9),
            ],
        )
    )
    # 1st preemption at 100 (count 1 <= 1: RUNNABLE), restart at 200, 2nd at 300: FAILED
    assert starts(out, "v") == [(0, "WITHIN_QUOTA"), (200, "WITHIN_QUOTA")]
    assert [p["at"] for p in out["jobs"]["v"]["preemptions"]] == [100, 300]
    assert out["jobs"]["v"]["status"] == "FAILED"
    assert out["jobs"]["v"]["stoppedAt"] == 300
    assert out["jobs"]["v"]["attempts"] == 2


def test_update_service_job_reorders_a_waiting_job() -> None:
    out = run(
        scenario(
            1,
            [share("a", 1, "RESERVE")],
            [job("a1", "a", 0, 100), job("a2", "a", 0, 100), job("a3", "a", 0, 100)],
            [{"at": 50, "type": "UpdateServiceJob", "jobName": "a3", "schedulingPriority": 5}],
        )
    )
    assert starts(out, "a3") == [(100, "WITHIN_QUOTA")]
    assert starts(out, "a2") == [(200, "WITHIN_QUOTA")]


def test_update_quota_share_raises_a_limit() -> None:
    out = run(
        scenario(
            3,
            [share("a", 1, "RESERVE")],
            [job("a1", "a", 0, 100), job("a2", "a", 0, 100), job("a3", "a", 0, 100)],
            [
                {
                    "at": 50,
                    "type": "UpdateQuotaShare",
                    "quotaShareName": "a",
                    "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 3}],
                }
            ],
        )
    )
    assert starts(out, "a2") == [(50, "WITHIN_QUOTA")]
    assert starts(out, "a3") == [(50, "WITHIN_QUOTA")]


def test_update_quota_share_changes_strategy_and_preemption() -> None:
    out = run(
        scenario(
            2,
            [share("a", 1, "RESERVE"), share("l", 1, "LEND")],
            [
                job("a1", "a", 0, 100, prio=1),
                job("a2", "a", 0, 100),
                job("a3", "a", 10, 100, prio=9),
            ],
            [
                {
                    "at": 5,
                    "type": "UpdateQuotaShare",
                    "quotaShareName": "a",
                    "resourceSharingConfiguration": {
                        "strategy": "LEND_AND_BORROW",
                        "borrowLimit": 0,
                    },
                    "preemptionConfiguration": {"inSharePreemption": "ENABLED"},
                }
            ],
        )
    )
    # borrowLimit 0: a2 still cannot borrow; at 10 a3 (prio 9) preempts a1 (prio 1)
    assert out["jobs"]["a1"]["preemptions"][0]["at"] == 10
    assert starts(out, "a3") == [(10, "WITHIN_QUOTA")]


def test_terminate_service_job_running_and_waiting() -> None:
    out = run(
        scenario(
            1,
            [share("a", 1, "RESERVE")],
            [job("a1", "a", 0, 100), job("a2", "a", 0, 100), job("a3", "a", 0, 100)],
            [
                {"at": 20, "type": "TerminateServiceJob", "jobName": "a3"},
                {"at": 50, "type": "TerminateServiceJob", "jobName": "a1"},
            ],
        )
    )
    assert out["jobs"]["a1"]["status"] == "FAILED"
    assert out["jobs"]["a1"]["statusReason"] == "TERMINATED"
    assert out["jobs"]["a1"]["stoppedAt"] == 50
    assert changes(out, "a1")[-1] == (50, "RUNNING", "FAILED", "TERMINATED")
    assert starts(out, "a2") == [(50, "WITHIN_QUOTA")]
    assert out["jobs"]["a3"]["attempts"] == 0
    assert changes(out, "a3")[-1] == (20, "RUNNABLE", "FAILED", "TERMINATED")


def test_startup_seconds_scheduled_starting_running() -> None:
    out = run(scenario(1, [share("a", 1, "RESERVE")], [job("a1", "a", 0, 100)], startupSeconds=30))
    assert changes(out, "a1") == [
        (0, "SUBMITTED", "RUNNABLE", "SUBMITTED"),
        (0, "RUNNABLE", "SCHEDULED", "WITHIN_QUOTA"),
        (0, "SCHEDULED", "STARTING", "STARTUP"),
        (30, "STARTING", "RUNNING", "STARTUP_COMPLETE"),
        (130, "RUNNING", "SUCCEEDED", "COMPLETED"),
    ]
    assert out["jobs"]["a1"]["firstStartedAt"] == 30
    # holding from SCHEDULED: 130 instance-seconds used, 100 of them useful
    assert out["metrics"]["shares"]["a"]["usedInstanceSeconds"] == 130
    # startup is not waiting (the job holds its instances): it was RUNNABLE for 0 s
    assert out["metrics"]["total"]["waitSeconds"]["max"] == 0


def test_preemption_while_starting_loses_nothing() -> None:
    out = run(
        scenario(
            1,
            IN_SHARE_ONE,
            [job("v", "a", 0, 100, prio=1), job("h", "a", 10, 50, prio=9)],
            startupSeconds=30,
        )
    )
    assert out["jobs"]["v"]["preemptions"] == [
        {"at": 10, "kind": "IN_SHARE", "forJob": "h", "lostSeconds": 0}
    ]
    assert changes(out, "v")[3] == (10, "STARTING", "RUNNABLE", "PREEMPTED_IN_SHARE")
    # h: SCHEDULED 10, RUNNING 40, done 90; v: SCHEDULED 90, RUNNING 120, done 220
    assert out["jobs"]["v"]["firstStartedAt"] == 120
    assert out["jobs"]["v"]["stoppedAt"] == 220
    assert out["jobs"]["v"]["attempts"] == 2


def test_same_time_completion_before_submission() -> None:
    out = run(
        scenario(1, [share("a", 1, "RESERVE")], [job("a1", "a", 0, 100), job("a2", "a", 100, 10)])
    )
    assert starts(out, "a2") == [(100, "WITHIN_QUOTA")]


def test_same_time_completion_before_terminate() -> None:
    out = run(
        scenario(
            1,
            [share("a", 1, "RESERVE")],
            [job("a1", "a", 0, 100)],
            [{"at": 100, "type": "TerminateServiceJob", "jobName": "a1"}],
        )
    )
    assert out["jobs"]["a1"]["status"] == "SUCCEEDED"


def test_same_time_startup_end_before_actions() -> None:
    out = run(
        scenario(
            1,
            [share("a", 1, "RESERVE")],
            [job("a1", "a", 0, 100)],
            [{"at": 30, "type": "TerminateServiceJob", "jobName": "a1"}],
            startupSeconds=30,
        )
    )
    assert changes(out, "a1")[-2:] == [
        (30, "STARTING", "RUNNING", "STARTUP_COMPLETE"),
        (30, "RUNNING", "FAILED", "TERMINATED"),
    ]


def test_same_time_actions_before_submissions() -> None:
    out = run(
        scenario(
            2,
            [share("a", 1, "RESERVE"), share("b", 1, "RESERVE")],
            [job("a1", "a", 100, 10), job("b1", "b", 100, 10)],
            [{"at": 100, "type": "UpdateQuotaShare", "quotaShareName": "a", "state": "DISABLED"}],
        )
    )
    assert out["jobs"]["a1"]["statusReason"] == "SHARE_DISABLED"
    assert starts(out, "b1") == [(100, "WITHIN_QUOTA")]


def test_same_time_submissions_in_input_order_then_one_pass() -> None:
    # both submitted at 10, then the pass: input order decides who gets the instance
    out = run(
        scenario(
            1,
            [share("a", 1, "RESERVE"), share("b", 1, "RESERVE")],
            [job("b1", "b", 10, 10), job("a1", "a", 10, 10)],
        )
    )
    transitions = [(t["jobName"], t["to"]) for t in out["transitions"] if t["at"] == 10]
    assert transitions[:3] == [("b1", "RUNNABLE"), ("a1", "RUNNABLE"), ("b1", "SCHEDULED")]


def test_horizon_stops_the_run_with_jobs_still_running() -> None:
    out = run(
        scenario(
            1,
            [share("a", 1, "RESERVE")],
            [job("a1", "a", 0, 1000), job("a2", "a", 0, 10)],
            horizonSeconds=500,
        )
    )
    assert out["jobs"]["a1"]["status"] == "RUNNING"
    assert out["jobs"]["a2"]["status"] == "RUNNABLE"
    assert out["metrics"]["durationSeconds"] == 500
    assert out["metrics"]["shares"]["a"]["usedInstanceSeconds"] == 500
