"""The AWS walkthrough (``tests/data/scenarios/aws-walkthrough.expected.md``), row by row."""

from __future__ import annotations

from importlib import resources

from quotagov.scheduler import load_scenario, simulate


def _output() -> dict:
    text = resources.files("quotagov.examples").joinpath("aws-walkthrough.json").read_text()
    return simulate(load_scenario(text))


def test_every_row_of_the_expected_table() -> None:
    jobs = _output()["jobs"]
    assert list(sorted(jobs)) == ["bg-1", "bg-2", "med-1", "res-1"]
    expected = {
        # job: (status, firstStartedAt, stoppedAt, attempts, preemptions, lostSeconds)
        "bg-1": ("SUCCEEDED", 0, 4800, 2, [(900, "IN_SHARE", "bg-2", 300)], 300),
        "bg-2": ("SUCCEEDED", 0, 3900, 2, [(600, "CROSS_SHARE", "med-1", 0)], 0),
        "res-1": ("SUCCEEDED", 300, 2100, 1, [], 0),
        "med-1": ("SUCCEEDED", 600, 1800, 1, [], 0),
    }
    for name, (status, first, stopped, attempts, preemptions, lost) in expected.items():
        got = jobs[name]
        assert got["status"] == status, name
        assert got["firstStartedAt"] == first, name
        assert got["stoppedAt"] == stopped, name
        assert got["attempts"] == attempts, name
        assert [
            (p["at"], p["kind"], p["forJob"], p["lostSeconds"]) for p in got["preemptions"]
        ] == preemptions, name
        assert got["lostSeconds"] == lost, name
        assert got["statusReason"] is None


def test_transitions_follow_the_timeline() -> None:
    out = _output()
    moves = [
        (t["at"], t["jobName"], t["from"], t["to"], t["reason"])
        for t in out["transitions"]
        if t["to"] in ("SCHEDULED", "SUCCEEDED") or t["reason"].startswith("PREEMPTED")
    ]
    assert moves == [
        (0, "bg-1", "RUNNABLE", "SCHEDULED", "WITHIN_QUOTA"),
        # reserved's idle instance is never lent: bg-2 borrows medium's
        (0, "bg-2", "RUNNABLE", "SCHEDULED", "BORROWED"),
        (300, "res-1", "RUNNABLE", "SCHEDULED", "WITHIN_QUOTA"),
        (600, "bg-2", "RUNNING", "RUNNABLE", "PREEMPTED_CROSS_SHARE"),
        (600, "med-1", "RUNNABLE", "SCHEDULED", "WITHIN_QUOTA"),
        (900, "bg-1", "RUNNING", "RUNNABLE", "PREEMPTED_IN_SHARE"),
        (900, "bg-2", "RUNNABLE", "SCHEDULED", "WITHIN_QUOTA"),
        (1800, "med-1", "RUNNING", "SUCCEEDED", "COMPLETED"),
        (1800, "bg-1", "RUNNABLE", "SCHEDULED", "BORROWED"),
        (2100, "res-1", "RUNNING", "SUCCEEDED", "COMPLETED"),
        (3900, "bg-2", "RUNNING", "SUCCEEDED", "COMPLETED"),
        (4800, "bg-1", "RUNNING", "SUCCEEDED", "COMPLETED"),
    ]
    # every job: SUBMITTED -> RUNNABLE at its submission, then SCHEDULED/STARTING/RUNNING
    bg1 = [(t["at"], t["to"]) for t in out["transitions"] if t["jobName"] == "bg-1"]
    assert bg1 == [
        (0, "RUNNABLE"),
        (0, "SCHEDULED"),
        (0, "STARTING"),
        (0, "RUNNING"),
        (900, "RUNNABLE"),
        (1800, "SCHEDULED"),
        (1800, "STARTING"),
        (1800, "RUNNING"),
        (4800, "SUCCEEDED"),
    ]


def test_walkthrough_metrics_worked_by_hand() -> None:
    metrics = _output()["metrics"]
    background = metrics["shares"]["background"]
    # bg-1 0-900 and 1800-4800, bg-2 0-600 and 900-3900
    assert background["usedInstanceSeconds"] == 900 + 3000 + 600 + 3000
    # borrowed: bg-2 0-600, bg-1 1800-3900
    assert background["borrowedInstanceSeconds"] == 600 + 2100
    assert metrics["shares"]["medium"]["lentInstanceSeconds"] == 600 + 2100
    assert metrics["shares"]["reserved"]["lentInstanceSeconds"] == 0
    assert background["preemptions"] == {"CROSS_SHARE": 1, "IN_SHARE": 1}
    assert background["lostInstanceSeconds"] == 300
    # useful = 3600 + 3600 of 7500 used
    assert background["goodput"] == 0.96
    # every RUNNABLE stretch is a wait: the four jobs start at once when submitted
    # (0 s each), bg-2 waits 600-900 after its cross-share preemption (300 s) and bg-1
    # 900-1800 after its in-share one (900 s): [0, 0, 0, 0, 300, 900]
    assert metrics["total"]["waitSeconds"] == {"p50": 0, "p95": 900, "max": 900}
    assert metrics["shares"]["background"]["waitSeconds"] == {"p50": 0, "p95": 900, "max": 900}
    # the environment: 3 instances x 4800 s = 14400; used: background 7500, medium
    # 1200 (med-1 600-1800), reserved 1800 (res-1 300-2100) = 10500
    assert metrics["total"]["usedInstanceSeconds"] == 10500
    assert metrics["total"]["utilization"] == round(10500 / 14400, 6)
    assert metrics["shares"]["reserved"]["utilization"] == 0.125
    assert metrics["total"]["failedJobs"] == 0
    assert metrics["shares"]["medium"]["completionSeconds"] == {"p50": 1200, "p95": 1200}
    assert metrics["durationSeconds"] == 4800
