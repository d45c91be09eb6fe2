"""The governance rules in the what-if loop, values worked out by hand.

Set-up (``conftest.contention``): 2 x ml.g5.xlarge; shares bg (limit 1, borrows) and
med (limit 1, lends). r1 runs in bg 0-1000; r2 borrows med's instance at 0; a1 (med)
arrives at 100 and reclaims it: r2 is preempted CROSS_SHARE at 100 having run 100 s
(its checkpoint interval is 300 s, so the 100 s are lost and all 1000 s remain).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from quotagov.scheduler import ScenarioAction
from quotagov_tools.whatif import LoopOptions, Workload, run_policy
from support.whatif import GPU, contention, small_policy, wjob


def _jobs(result: dict[str, Any]) -> dict[str, Any]:
    return result["total"]["jobs"]


def test_retries_exhausted_reclassifies_into_the_next_share(capacity: dict[str, int]) -> None:
    # retries 0: r2 FAILED at its first preemption (100); class policy reclassify -> its
    # successor r2-r1 goes to med at 100, waits for a1 (100-600) and runs 600-1600.
    result = run_policy(small_policy(action="reclassify"), contention(), capacity)
    total = result["total"]
    assert total["dispositions"] == {
        "resubmit": 0,
        "reclassify": 1,
        "askOwner": 0,
        "thrashGuard": 0,
        "abandon": 0,
    }
    assert result["actions"] == [
        {
            "at": 100,
            "action": "reclassify",
            "jobName": "r2",
            "successor": "r2-r1",
            "share": "med",
            "reason": "FAILED after 1 preemption(s): retries exhausted; class policy reclassify",
        }
    ]
    # r2 FAILED but carried on by r2-r1: no failed job
    assert _jobs(result) == {"SUCCEEDED": 3, "FAILED": 1}
    assert total["failedJobs"] == 0
    assert total["preemptions"] == {"CROSS_SHARE": 1, "IN_SHARE": 0}
    assert total["lostInstanceSeconds"] == 100
    # waits: r1 0, r2 0, a1 0, r2-r1 100-600 = 500
    assert total["waitSeconds"] == {"p50": 0, "p95": 500, "max": 500}
    # completions from the original submission: r1 1000, a1 500 (100-600), r2's chain 1600
    assert result["teams"]["r"]["completionSeconds"] == {"p50": 1000, "p95": 1600}
    assert result["teams"]["a"]["completionSeconds"] == {"p50": 500, "p95": 500}
    # environment: 2 instances x 1600 s; used r1 1000 + r2 100 + a1 500 + r2-r1 1000
    assert result["durationSeconds"] == 1600
    assert total["usedInstanceSeconds"] == 2600
    assert total["utilization"] == 2600 / 3200
    # r2 borrowed med's instance but counts in bg, the share it ran in
    assert result["shares"]["bg"]["utilization"] == (1000 + 100) / 3200
    assert result["shares"]["med"]["utilization"] == (500 + 1000) / 3200
    assert result["shares"]["bg"]["lostInstanceSeconds"] == 100


def test_retries_exhausted_resubmits_into_the_same_share(capacity: dict[str, int]) -> None:
    # class exp only in bg, policy resubmit: r2-r1 goes to bg at 100; bg's own instance
    # is r1's until 1000 and nothing is free until a1 ends at 600, when r2-r1 borrows
    # med's instance: it runs 600-1600.
    policy = small_policy(action="resubmit", exp_shares=("bg",))
    result = run_policy(policy, contention(), capacity)
    assert result["total"]["dispositions"]["resubmit"] == 1
    assert result["actions"][0]["share"] == "bg"
    assert result["total"]["waitSeconds"]["max"] == 500
    assert result["teams"]["r"]["completionSeconds"]["p95"] == 1600
    # borrowed: r2 0-100, r2-r1 600-1000 (from 1000, when r1 ends, it is within bg's limit)
    assert result["shares"]["bg"]["borrowedInstanceSeconds"] == 100 + 400
    assert result["total"]["failedJobs"] == 0


def test_thrash_guard_terminates_and_reclassifies(capacity: dict[str, int]) -> None:
    # unlimited retries, thrash guard at 1 preemption in 60 s: r2's preemption at 100
    # trips it; r2 is terminated (THRASH_GUARD) and r2-r1 runs in med 600-1600.
    policy = small_policy(retries=None, thrash={"preemptions": 1, "windowSeconds": 60})
    result = run_policy(policy, contention(), capacity)
    d = result["total"]["dispositions"]
    assert (d["thrashGuard"], d["reclassify"], d["resubmit"]) == (1, 1, 0)
    assert [a["action"] for a in result["actions"]] == ["thrashGuard", "reclassify"]
    assert result["actions"][0]["reason"] == "thrash guard: 1 preemptions within 60 s in share 'bg'"
    assert result["total"]["failedJobs"] == 0
    assert result["teams"]["r"]["completionSeconds"]["p95"] == 1600
    # r2 waited 0 s in RUNNABLE after its preemption (terminated at once), r2-r1 500 s
    assert result["total"]["waitSeconds"]["max"] == 500


def test_no_thrash_guard_without_a_next_share(capacity: dict[str, int]) -> None:
    # the class has one share: the guard cannot reclassify, so r2 just waits in bg
    # (RUNNABLE 100-600 after its preemption), borrows again at 600 and runs 600-1600.
    policy = small_policy(
        action="resubmit",
        retries=None,
        exp_shares=("bg",),
        thrash={"preemptions": 1, "windowSeconds": 60},
    )
    result = run_policy(policy, contention(), capacity)
    assert result["actions"] == []
    assert result["total"]["waitSeconds"]["max"] == 500
    assert result["total"]["dispositions"]["thrashGuard"] == 0
    assert result["total"]["jobs"] == {"SUCCEEDED": 3}


def test_ask_owner_decides_after_the_delay(capacity: dict[str, int]) -> None:
    # ask-owner: asked at 100, the owner reclassifies at 100 + 1800 = 1900; med is free
    # (a1 ended at 600), so r2-r1 runs 1900-2900.
    options = LoopOptions(decision_delay_seconds=1800, owner_choice="reclassify")
    result = run_policy(small_policy(action="ask-owner"), contention(), capacity, options)
    assert [(a["at"], a["action"]) for a in result["actions"]] == [
        (100, "askOwner"),
        (1900, "reclassify"),
    ]
    d = result["total"]["dispositions"]
    assert (d["askOwner"], d["reclassify"]) == (1, 1)
    assert result["teams"]["r"]["completionSeconds"]["p95"] == 2900
    assert result["durationSeconds"] == 2900


def test_abandon_when_the_cap_is_reached(capacity: dict[str, int]) -> None:
    # maxResubmits 0: only abandon remains; r2 stays FAILED and counts as failed
    result = run_policy(small_policy(action="resubmit", max_resubmits=0), contention(), capacity)
    assert result["total"]["dispositions"]["abandon"] == 1
    assert result["total"]["failedJobs"] == 1
    assert result["teams"]["r"]["failedJobs"] == 1
    assert result["teams"]["a"]["failedJobs"] == 0


def test_refusals_are_counted_and_never_submitted(capacity: dict[str, int]) -> None:
    # r-bad: team r may not use class own; huge: 3 instances, the environment has 2;
    # nocp: class exp requires checkpointing, the job declares none.
    workload = Workload(
        "refusals",
        (
            wjob("ok", "r", "exp", 0, 100),
            wjob("r-bad", "r", "own", 0, 100),
            wjob("huge", "a", "own", 0, 100, count=3, checkpoint=None),
            wjob("nocp", "r", "exp", 0, 100, checkpoint=None),
        ),
    )
    result = run_policy(small_policy(), workload, capacity)
    assert result["total"]["refusedJobs"] == 3
    assert result["teams"]["r"]["refusedJobs"] == 2
    assert result["teams"]["a"]["refusedJobs"] == 1
    assert result["total"]["jobs"] == {"SUCCEEDED": 1}
    reasons = result["refusals"]
    assert reasons["workloadClass: team 'r' may not use class 'own' (allowed: exp)"] == 1
    assert reasons[f"instanceCount: 3 x {GPU} is larger than the environment (2 of that type)"] == 1
    assert sum(reasons.values()) == 3
    assert any(
        r.startswith("serviceRequestPayload.CheckpointConfig")
        or r.startswith("checkpointIntervalSeconds")
        for r in reasons
    )


def test_unknown_team_is_a_refusal(capacity: dict[str, int]) -> None:
    workload = Workload("x", (wjob("j", "ghost", "exp", 0, 10),))
    result = run_policy(small_policy(), workload, capacity)
    assert result["refusals"] == {"team: unknown team 'ghost'": 1}
    assert result["total"]["refusedJobs"] == 1


def test_a_successor_name_taken_by_a_workload_job_gets_another(capacity: dict[str, int]) -> None:
    # a workload job is already called r2-r1: the successor of r2 must not collide
    workload = Workload("clash", (*contention().jobs, wjob("r2-r1", "r", "exp", 5000, 10)))
    result = run_policy(small_policy(action="reclassify"), workload, capacity)
    assert result["actions"][0]["successor"] == "r2-r1'"
    assert result["total"]["jobs"] == {"SUCCEEDED": 4, "FAILED": 1}


def test_repeated_job_names_are_made_unique_on_import(tmp_path: Any) -> None:
    from quotagov_tools.whatif.importers import from_history

    line = {"jobName": "train", "instanceType": GPU, "instanceCount": 1, "submittedAt": 0,
            "attempts": [{"startedAt": 0, "stoppedAt": 10}], "team": "r",
            "workloadClass": "exp"}  # fmt: skip
    path = tmp_path / "h.jsonl"
    import json

    path.write_text("\n".join(json.dumps(line) for _ in range(3)) + "\n")
    workload = from_history(path, maps={})
    assert [j.name for j in workload.jobs] == ["train", "train#2", "train#3"]
    assert workload.notes == {"renamedDuplicates": 2}


def test_dispositions_are_counted_per_share_and_team(capacity: dict[str, int]) -> None:
    # r2's reclassification is counted where r2 was (share bg, team r)
    result = run_policy(small_policy(action="reclassify"), contention(), capacity)
    assert result["shares"]["bg"]["dispositions"]["reclassify"] == 1
    assert result["shares"]["med"]["dispositions"]["reclassify"] == 0
    assert result["teams"]["r"]["dispositions"]["reclassify"] == 1
    assert result["teams"]["a"]["dispositions"] == {
        "resubmit": 0, "reclassify": 0, "askOwner": 0, "thrashGuard": 0, "abandon": 0,
    }  # fmt: skip


def test_a_thrashing_job_terminated_while_running_keeps_only_its_checkpoint(
    capacity: dict[str, int],
) -> None:
    # The controller reacts 700 s late: the guard trips at r2's preemption (100) and acts
    # at 800. r2 borrowed med again at 600 (a1 ended) and ran 200 s, none of it
    # checkpointed (every 300 s), so the termination loses it: r2-r1 needs all 1000 s.
    policy = small_policy(retries=None, thrash={"preemptions": 1, "windowSeconds": 60})
    late = run_policy(policy, contention(), capacity, LoopOptions(reaction_seconds=700))
    assert [(a["at"], a["action"]) for a in late["actions"]] == [
        (800, "thrashGuard"),
        (800, "reclassify"),
    ]
    # r2-r1 submitted at 800 to med (free: r2 released it), runs 800-1800
    assert late["teams"]["r"]["completionSeconds"]["p95"] == 1800


def test_best_effort_fifo_lets_a_small_job_pass_a_blocked_head() -> None:
    # bg: r1 (0-100) holds bg's instance; r-big (at 1, 2 instances) needs both, so it
    # waits for r1; r-small (at 2) could borrow med's idle instance.
    workload = Workload(
        "fifo",
        (
            wjob("r1", "r", "exp", 0, 100),
            wjob("r-big", "r", "exp", 1, 100, count=2),
            wjob("r-small", "r", "exp", 2, 10),
        ),
    )
    capacity = {GPU: 2}
    strict = run_policy(small_policy(), workload, capacity, LoopOptions(queueing="STRICT_FIFO"))
    # STRICT_FIFO: r-small waits behind the blocked head: r-big 100-200, r-small 200-210;
    # waits [0, 99, 198], completions [100, 199, 208]
    assert strict["total"]["waitSeconds"] == {"p50": 99, "p95": 198, "max": 198}
    assert strict["teams"]["r"]["completionSeconds"] == {"p50": 199, "p95": 208}
    loose = run_policy(small_policy(), workload, capacity, LoopOptions(queueing="BEST_EFFORT_FIFO"))
    # BEST_EFFORT_FIFO: r-small borrows at once (2-12); r-big still 100-200;
    # waits [0, 99, 0], completions [10, 100, 199]
    assert loose["total"]["waitSeconds"] == {"p50": 0, "p95": 99, "max": 99}
    assert loose["teams"]["r"]["completionSeconds"] == {"p50": 100, "p95": 199}


def test_a_scenarios_admin_actions_are_replayed_as_batch_calls(capacity: dict[str, int]) -> None:
    # at 50 bg's limit goes to 2: r2's instance is bg's own, no longer borrowed, so a1
    # (med, at 100) cannot reclaim it and waits; at 200 r1 is terminated: a1 starts on
    # its instance (waited 100 s), r2 runs 0-1000 untouched. The later calls on r1 (ended)
    # and on a share the policy lacks are skipped.
    actions = (
        ScenarioAction(50, "UpdateQuotaShare", {"quotaShareName": "bg",
                       "capacityLimits": [{"capacityUnit": GPU, "maxCapacity": 2}]}),
        ScenarioAction(200, "TerminateServiceJob", {"jobName": "r1"}),
        ScenarioAction(250, "UpdateServiceJob", {"jobName": "r1", "schedulingPriority": 5}),
        ScenarioAction(260, "UpdateQuotaShare", {"quotaShareName": "gpu", "state": "DISABLED"}),
    )  # fmt: skip
    workload = replace(contention(), actions=actions)
    result = run_policy(small_policy(retries=None), workload, capacity)
    assert result["scenarioActions"] == [
        {"at": 50, "type": "UpdateQuotaShare", "quotaShareName": "bg",
         "capacityLimits": [{"capacityUnit": GPU, "maxCapacity": 2}], "outcome": "applied"},
        {"at": 200, "type": "TerminateServiceJob", "jobName": "r1", "outcome": "applied"},
        {"at": 250, "type": "UpdateServiceJob", "jobName": "r1", "schedulingPriority": 5,
         "outcome": "skipped", "reason": "job 'r1' had already ended (FAILED)"},
        {"at": 260, "type": "UpdateQuotaShare", "quotaShareName": "gpu", "state": "DISABLED",
         "outcome": "skipped", "reason": "the policy has no quota share 'gpu'"},
    ]  # fmt: skip
    total = result["total"]
    assert _jobs(result) == {"SUCCEEDED": 2, "FAILED": 1}
    assert total["preemptions"] == {"CROSS_SHARE": 0, "IN_SHARE": 0}
    assert result["teams"]["a"]["waitSeconds"] == {"p50": 100, "p95": 100, "max": 100}
    assert result["teams"]["a"]["completionSeconds"] == {"p50": 600, "p95": 600}
    assert result["durationSeconds"] == 1000
    # an admin's termination is no exhausted retry: no disposition, one failed job
    assert total["failedJobs"] == 1
    assert result["actions"] == []
