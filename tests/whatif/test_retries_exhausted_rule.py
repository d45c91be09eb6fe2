"""One retries-exhausted rule: the dispositions and the what-if decide every case alike.

The same cases (class action, ``maxResubmits``, the class's shares) go through both
callers of :func:`~quotagov.governance.dispositions.rules.on_retries_exhausted`: the
disposition a FAILED job gets in AWS (:func:`exhausted_disposition`) and the what-if's
first action for ``r2`` of the contention workload (retries 0: FAILED at its first
preemption, at 100 s, in share ``bg``).
"""

from __future__ import annotations

from typing import Any

import pytest

from quotagov.governance.dispositions.record import Choice, DispositionStatus
from quotagov.governance.dispositions.rules import exhausted_disposition, on_retries_exhausted
from quotagov.governance.job_state import JobTracking
from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov_tools.whatif import LoopOptions, run_policy
from support.whatif import GPU, contention, small_policy

R, RC, A = Choice.RESUBMIT, Choice.RECLASSIFY, Choice.ABANDON

#: (class action, maxResubmits, class shares) -> (the rule's choice, the choices left)
CASES: list[tuple[str, int, tuple[str, ...], Choice | None, tuple[Choice, ...]]] = [
    ("reclassify", 1, ("bg", "med"), RC, (R, RC, A)),
    ("resubmit", 1, ("bg", "med"), R, (R, RC, A)),
    ("resubmit", 0, ("bg", "med"), A, (A,)),
    ("reclassify", 0, ("bg", "med"), A, (A,)),
    ("ask-owner", 2, ("bg", "med"), None, (R, RC, A)),
    ("ask-owner", 0, ("bg", "med"), A, (A,)),
]
#: The what-if's action for each rule outcome (``actions[].action``).
WHATIF_ACTION = {R: "resubmit", RC: "reclassify", A: "abandon", None: "askOwner"}


def _case_id(case: tuple[Any, ...]) -> str:
    return f"{case[0]}-max{case[1]}-{'+'.join(case[2])}"


def test_reclassify_from_the_last_share_is_left_to_the_owner() -> None:
    klass = small_policy(action="reclassify", max_resubmits=1).workloadClasses["exp"]
    verdict = on_retries_exhausted(0, klass, "med")
    assert (verdict.choice, verdict.choices) == (None, (R, A))
    # past the cap only abandon remains, in any share
    assert on_retries_exhausted(1, klass, "bg").choice is A


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_the_rule(case: tuple[Any, ...]) -> None:
    action, cap, shares, choice, choices = case
    klass = small_policy(action=action, max_resubmits=cap, exp_shares=shares).workloadClasses
    verdict = on_retries_exhausted(0, klass["exp"], "bg")
    assert (verdict.choice, verdict.choices) == (choice, choices)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_the_dispositions_decide_as_the_rule(case: tuple[Any, ...]) -> None:
    action, cap, shares, choice, choices = case
    policy = small_policy(action=action, max_resubmits=cap, exp_shares=shares)
    job = JobRecord(
        pk="r2",
        state=SubmissionState.SUBMITTED,
        team="r",
        workloadClass="exp",
        priorityLevel="standard",
        principal="arn:aws:sts::111122223333:assumed-role/x/r",
        quotaShareName="bg",
        schedulingPriority=10,
        preemptionRetriesBeforeTermination=0,
        instanceType=GPU,
        instanceCount=1,
    )
    tracking = JobTracking(
        batch_job_id="j-r2",
        status="FAILED",
        status_reason=None,
        status_key=(1, 1, 1, 0, 0, ""),
        quota_share_name="bg",
    )
    opened = exhausted_disposition(job, tracking, policy.workloadClasses["exp"], policy, 100.0)
    if choice is None:
        assert opened.status is DispositionStatus.PENDING_OWNER
        assert tuple(opened.choices) == choices
    elif choice is A:
        assert (opened.status, opened.choice) == (DispositionStatus.ABANDONED, A)
    else:
        assert (opened.status, opened.choice) == (DispositionStatus.APPLYING, choice)
        assert opened.target_share == ("med" if choice is RC else "bg")


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_the_whatif_decides_as_the_rule(case: tuple[Any, ...]) -> None:
    action, cap, shares, choice, choices = case
    policy = small_policy(action=action, max_resubmits=cap, exp_shares=shares)
    options = LoopOptions(decision_delay_seconds=1800, owner_choice="abandon")
    result = run_policy(policy, contention(), {GPU: 2}, options)
    first = next(a for a in result["actions"] if a["jobName"] == "r2")
    assert (first["at"], first["action"]) == (100, WHATIF_ACTION[choice])
    if choice is None:
        assert first["reason"].endswith(f"owner asked ({', '.join(choices)})")
    elif choice in (R, RC):
        assert first["share"] == ("med" if choice is RC else "bg")
