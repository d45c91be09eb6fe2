"""Impact preview outcomes on the walkthrough at t=900 (simulated Batch, job records in moto)."""

from __future__ import annotations

import pytest

from quotagov.governance.escalations import JobRecordLookup
from quotagov.governance.escalations.preview import SchedulerImpactPreviewer
from quotagov.governance.model.impact_preview import ImpactOutcome, PreemptedJob
from quotagov.governance.model.job import JobRecord, SubmissionState

from .world import DAVE, World


def previewer(world: World) -> SchedulerImpactPreviewer:
    return SchedulerImpactPreviewer(
        policy=world.policy, batch=world.batch, jobs=JobRecordLookup(world.jobs), clock=world.clock
    )


def preview_of(world: World, submission_id: str, priority: int):  # type: ignore[no-untyped-def]
    job = JobRecordLookup(world.jobs).find(submission_id)
    assert job is not None and job.batch_job_id is not None
    description = world.batch.describe_service_job(jobId=job.batch_job_id)
    return previewer(world).preview(job, description, priority)


def submit_medium(world: World, name: str) -> None:
    """A scheduled-class job of team applied, waiting in the medium share (priority 0)."""
    from .world import _payload

    answer = world.batch.submit_service_job(
        jobName=name,
        jobQueue=world.policy.jobQueue,
        serviceJobType="SAGEMAKER_TRAINING",
        quotaShareName="medium",
        schedulingPriority=0,
        serviceRequestPayload=_payload(name, False),
    )
    world.job_ids[name] = answer["jobId"]
    world.jobs.create_if_absent(
        JobRecord(
            pk=f"sub-{name}",
            state=SubmissionState.SUBMITTED,
            team="applied",
            workloadClass="scheduled",
            priorityLevel="low",
            jobName=name,
            principal=DAVE,
            quotaShareName="medium",
            schedulingPriority=0,
            batchJobId=answer["jobId"],
            batchJobArn=answer["jobArn"],
        )
    )


def test_raising_bg2_preempts_bg1_with_300_seconds_unsaved(world: World) -> None:
    preview = preview_of(world, "sub-bg-2", 50)
    assert preview.outcome is ImpactOutcome.PREEMPTS
    assert preview.preempted == (
        PreemptedJob(world.job_ids["bg-1"], "bg-1", "background", "IN_SHARE", 300.0),
    )
    assert preview.position_before == 1
    assert preview.summary == (
        "Approval starts bg-2 at once by preempting bg-1 (300 s of unsaved work)."
    )
    # Reading state changed nothing in Batch.
    assert world.update_calls == []
    assert world.describe("bg-1")["status"] == "RUNNING"


def test_equal_priority_previews_no_change(world: World) -> None:
    preview = preview_of(world, "sub-bg-2", 10)
    assert preview.outcome is ImpactOutcome.NO_CHANGE
    assert preview.preempted == ()


def test_a_running_job_is_already_running(world: World) -> None:
    preview = preview_of(world, "sub-bg-1", 90)
    assert preview.outcome is ImpactOutcome.ALREADY_RUNNING


@pytest.mark.parametrize(
    ("escalated", "outcome", "before", "after"),
    [
        ("med-3", ImpactOutcome.MOVES_FORWARD, 2, 1),
        ("med-2", ImpactOutcome.NO_CHANGE, 1, 1),
    ],
)
def test_without_in_share_preemption_a_raise_only_reorders(
    world: World, escalated: str, outcome: ImpactOutcome, before: int, after: int
) -> None:
    submit_medium(world, "med-2")
    submit_medium(world, "med-3")
    world.clock.advance(10)
    world.batch.sync()
    preview = preview_of(world, f"sub-{escalated}", 10)
    assert preview.outcome is outcome
    assert (preview.position_before, preview.position_after) == (before, after)
    assert preview.preempted == ()
    assert "medium queue" in preview.summary
