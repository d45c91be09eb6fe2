"""Who owns a job, and how to reach them in Slack: one rule for every use case.

The owner of a submission is its submitter's principal (``JobRecord.principal``, taken
from API Gateway's authorizer, ``docs/design.md``, "Trust model"); their Slack user id is the
record's ``ownerSlackUserId`` or, for records written before it existed, the
``slackUserId`` of the team member with that principal in the policy.
"""

from __future__ import annotations

from quotagov.governance.model.job import JobRecord
from quotagov.policy.models import Policy


def owner_of(job: JobRecord) -> str:
    """Who owns the job: the submitter's principal, else ``team:<team>``."""
    return job.principal or f"team:{job.team}"


def owner_slack_id(job: JobRecord, policy: Policy) -> str | None:
    """The owner's Slack user id (``U...``): the record's, else the team member's with
    the owner's principal (or Slack id) in the policy; None when unknown."""
    if job.ownerSlackUserId:
        return job.ownerSlackUserId
    owner = owner_of(job)
    team = policy.teams.get(job.team)
    if team is None:
        return None
    for member in team.members:
        if owner in (member.principal, member.slackUserId) and member.slackUserId:
            return member.slackUserId
    return None
