"""Builders of the what-if tests: a small two-share policy, workload jobs, a contention."""

from __future__ import annotations

from typing import Any

import yaml

from quotagov.policy import Policy, load_policy
from quotagov_tools.whatif import Workload, WorkloadJob

GPU = "ml.g5.xlarge"


def small_policy(
    *,
    action: str = "reclassify",
    max_resubmits: int = 1,
    retries: int | None = 0,
    exp_shares: tuple[str, ...] = ("bg", "med"),
    thrash: dict[str, int] | None = None,
) -> Policy:
    """Two shares of one ml.g5.xlarge each: ``bg`` (LEND_AND_BORROW, no cap) and ``med``
    (LEND). Team ``r`` uses class ``exp`` (checkpointing, shares ``exp_shares``, the
    given retries/disposition/thrash guard); team ``a`` uses class ``own`` (``med``)."""
    exp: dict[str, Any] = {
        "checkpointRequired": True,
        "shares": list(exp_shares),
        "onRetriesExhausted": {"action": action, "maxResubmits": max_resubmits},
        "instanceTypes": [GPU],
        "maxInstanceCount": 4,
    }
    if retries is not None:
        exp["preemptionRetriesBeforeTermination"] = retries
    if thrash is not None:
        exp["thrashGuard"] = thrash

    return load_policy(
        yaml.safe_dump(
            {
                "version": 1,
                "jobQueue": "arn:aws:batch:eu-west-1:111122223333:job-queue/q",
                "quotaShares": [
                    {
                        "quotaShareName": "bg",
                        "capacityLimits": [{"capacityUnit": GPU, "maxCapacity": 1}],
                        "resourceSharingConfiguration": {
                            "strategy": "LEND_AND_BORROW",
                            "borrowLimit": -1,
                        },
                        "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
                    },
                    {
                        "quotaShareName": "med",
                        "capacityLimits": [{"capacityUnit": GPU, "maxCapacity": 1}],
                        "resourceSharingConfiguration": {"strategy": "LEND"},
                        "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
                    },
                ],
                "priorityLevels": [{"name": "standard", "schedulingPriority": 10}],
                "workloadClasses": {
                    "exp": exp,
                    "own": {
                        "checkpointRequired": False,
                        "shares": ["med"],
                        "instanceTypes": [GPU],
                        "maxInstanceCount": 4,
                    },
                },
                "teams": {
                    "r": {
                        "members": [{"principal": "arn:aws:sts::111122223333:assumed-role/x/r"}],
                        "classes": ["exp"],
                        "directLevels": ["standard"],
                        "executionRoles": ["arn:aws:iam::111122223333:role/sm-exec-r"],
                    },
                    "a": {
                        "members": [{"principal": "arn:aws:sts::111122223333:assumed-role/x/a"}],
                        "classes": ["own"],
                        "directLevels": ["standard"],
                        "executionRoles": ["arn:aws:iam::111122223333:role/sm-exec-a"],
                    },
                },
            }
        )
    )


def wjob(
    name: str,
    team: str,
    klass: str,
    at: float,
    run: float,
    *,
    count: int = 1,
    checkpoint: float | None = 300,
) -> WorkloadJob:
    """A workload job of one ml.g5.xlarge (by default)."""
    return WorkloadJob(
        name=name,
        team=team,
        workloadClass=klass,
        priorityLevel=None,
        instanceType=GPU,
        instanceCount=count,
        submittedAt=at,
        runSeconds=run,
        checkpointIntervalSeconds=checkpoint,
    )


def contention() -> Workload:
    """r1 and r2 (team r) at 0 for 1000 s: r1 in bg, r2 borrows med's instance; a1
    (team a, med) at 100 for 500 s reclaims it: r2 is preempted CROSS_SHARE at 100
    after 100 s (checkpoint every 300 s: 100 s lost, nothing saved)."""
    return Workload(
        "contention",
        (
            wjob("r1", "r", "exp", 0, 1000),
            wjob("r2", "r", "exp", 0, 1000),
            wjob("a1", "a", "own", 100, 500, checkpoint=None),
        ),
    )
