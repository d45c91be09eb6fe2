"""Before ``UpdateServiceJob``: does the stored approval carry the policy's authority?

``docs/design.md``, "Trust model": the internet-facing Slack function only verifies and records;
the apply function alone calls ``UpdateServiceJob``. The record it reads is written by
other roles (the Slack function's ``dynamodb:UpdateItem`` on the escalations and jobs
tables, the escalation API's), and ``UpdateItem`` can set any attribute. So the apply
step does not take an APPROVED item's word for it: it checks the item against the
policy as it is now and against the job's own records, and refuses to apply when
anything disagrees. A forged or edited item then raises nothing in Batch.

Checked, in order (:func:`approval_refusal`, from the stored records):

1. the job: quotagov's record of ``job_id`` is SUBMITTED and names the same Batch job,
   team and quota share as the escalation (``batchJobId``, ``team``,
   ``quotaShareName``);
2. the requester is a member of that team; for an approval level, the member's
   ``slackUserId`` is the escalation's ``requesterSlackId`` (four-eyes is checked
   against it);
3. the level is a policy priority level and ``requestedPriority`` is its
   ``schedulingPriority``;
4. a ``direct`` escalation: the level is one of the team's ``directLevels`` and
   quotagov decided it; otherwise the level is one of the team's ``approvalLevels``
   or ``directLevels``, and the decider is an approver of the share or team who is
   not the requester (:func:`decider_refusal`, the rule the click is checked with).

And from Batch's answer (:func:`batch_job_refusal`, ``DescribeServiceJob``): the job is
in the governed job queue and carries the ``quotagov:submissionId`` tag of ``job_id``
(quotagov tags every job it submits; ``SUBMISSION_TAG``).

The click itself is checked with the same rules (:func:`approvers_of`,
:func:`decider_refusal`), which live here so the decision and apply steps share them.

Each refusal is one sentence naming the field and the fault; the caller stores the
escalation DENIED by quotagov with it and audits ``EscalationApplyRefused``
(:func:`~.applying.refuse_apply`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from quotagov.batch_semantics import same_queue
from quotagov.governance.access import team_member
from quotagov.governance.model.escalation import Escalation
from quotagov.governance.ports.audit import QUOTAGOV_ACTOR
from quotagov.governance.ports.escalations import GovernedJob
from quotagov.governance.submission.to_batch import SUBMISSION_TAG
from quotagov.policy.models import Policy


def approvers_of(policy: Policy, escalation: Escalation) -> frozenset[str]:
    """Slack user ids who may decide ``escalation``: the approvers of its quota share
    plus those of its team (either may be missing from the policy: none from it)."""
    approvers: set[str] = set()
    with contextlib.suppress(KeyError):
        approvers.update(policy.share(escalation.quota_share_name).approvers)
    team = policy.teams.get(escalation.team)
    if team is not None:
        approvers.update(team.approvers)
    return frozenset(approvers)


def decider_refusal(policy: Policy, escalation: Escalation, user_id: str) -> str | None:
    """Why Slack user ``user_id`` may not decide ``escalation`` (four-eyes, approvers),
    or None when they may."""
    if not escalation.requester_slack_id:
        return (
            "four-eyes: the request has no requester Slack user id, "
            "so the approver cannot be checked against the requester"
        )
    if user_id == escalation.requester_slack_id:
        return "four-eyes: you cannot decide your own request"
    if user_id not in approvers_of(policy, escalation):
        return f"you are not an approver of quota share {escalation.quota_share_name!r}"
    return None


def approval_refusal(policy: Policy, job: GovernedJob | None, escalation: Escalation) -> str | None:
    """Why the stored APPROVED ``escalation`` must not be applied, or None when the
    policy and the job's record back it (checks 1-4 of the module docstring).

    Args:
        policy: the governance policy now.
        job: quotagov's record of ``escalation.job_id`` (None: no SUBMITTED record).
        escalation: the escalation as stored.
    """
    if job is None:
        return f"jobId: {escalation.job_id!r} is not a job quotagov submitted to Batch"
    for field, recorded, claimed in (
        ("batchJobId", job.batch_job_id, escalation.batch_job_id),
        ("team", job.team, escalation.team),
        ("quotaShareName", job.quota_share_name, escalation.quota_share_name),
    ):
        if recorded != claimed:
            return f"{field}: {claimed!r} is not the job's ({recorded!r} in its record)"
    team = policy.teams.get(escalation.team)
    member = team_member(policy, escalation.team, escalation.requester)
    if team is None or member is None:
        return f"requester: {escalation.requester!r} is not a member of team {escalation.team!r}"
    try:
        level = policy.level(escalation.requested_level)
    except KeyError:
        return f"requestedLevel: {escalation.requested_level!r} is not a priority level"
    if escalation.requested_priority != level.schedulingPriority:
        return (
            f"requestedPriority: {escalation.requested_priority} is not level "
            f"{level.name!r}'s schedulingPriority ({level.schedulingPriority})"
        )
    if escalation.direct:
        if level.name not in team.directLevels:
            return (
                f"requestedLevel: {level.name!r} is not a direct level of team {escalation.team!r}"
            )
        if escalation.decided_by != QUOTAGOV_ACTOR:
            return (
                f"decidedBy: a direct level is decided by quotagov, not {escalation.decided_by!r}"
            )
        return None
    if level.name not in (*team.approvalLevels, *team.directLevels):
        return f"requestedLevel: team {escalation.team!r} may not request level {level.name!r}"
    if not member.slackUserId or member.slackUserId != escalation.requester_slack_id:
        return (
            f"requesterSlackId: {escalation.requester_slack_id!r} is not the requester's "
            f"Slack user id in the policy ({member.slackUserId!r})"
        )
    why = decider_refusal(policy, escalation, escalation.decided_by or "")
    if why is None:
        return None
    if escalation.decided_by == escalation.requester_slack_id:
        return f"four-eyes: {escalation.decided_by} requested it and cannot approve it"
    return f"decidedBy: {escalation.decided_by!r}: {why}"


def batch_job_refusal(
    policy: Policy, escalation: Escalation, description: Mapping[str, Any]
) -> str | None:
    """Why the Batch job ``description`` (``DescribeServiceJob``) is not the
    escalation's job, or None when it is: in the governed queue and tagged with the
    escalation's submission (``quotagov:submissionId`` = ``job_id``)."""
    queue = str(description.get("jobQueue") or "")
    if not same_queue(queue, policy.jobQueue):
        return f"batchJobId: job {escalation.batch_job_id!r} is not in the governed job queue"
    tags = description.get("tags") or {}
    tagged = tags.get(SUBMISSION_TAG) if isinstance(tags, Mapping) else None
    if tagged != escalation.job_id:
        return (
            f"batchJobId: job {escalation.batch_job_id!r} is tagged {SUBMISSION_TAG}="
            f"{tagged!r}, not {escalation.job_id!r}"
        )
    return None
