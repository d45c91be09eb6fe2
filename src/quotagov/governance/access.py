"""Who may see and act on a submission: the access rules, written once.

``docs/design.md``, "Trust model": identity comes from the API's authorizer (an IAM or JWT
principal) or from a verified Slack request (a Slack user id); authority is bound in
the governance policy. Every route and use case asks these functions, never its own
copy of the rule.

- :func:`team_member`: the policy's member of a team with this principal.
- :func:`may_view`: the submitter and the members of the job's team may see a
  submission (its record, its Batch view, its chain).
- :func:`may_decide_disposition`: the submitter, the members of the job's team (by
  principal or Slack user id), and the approvers of the team and of the job's share
  may decide what happens to a job whose retries ran out.
"""

from __future__ import annotations

import contextlib

from quotagov.policy.models import Member, Policy


def team_member(policy: Policy, team_name: str, principal: str) -> Member | None:
    """The member of team ``team_name`` whose ``principal`` is ``principal``, or None.

    None too for an unknown team or an empty principal.
    """
    team = policy.teams.get(team_name)
    if team is None or not principal:
        return None
    return next((m for m in team.members if m.principal == principal), None)


def may_view(policy: Policy, *, team: str, submitter: str, caller: str) -> bool:
    """True when ``caller`` (a principal ARN) submitted the job or is in its ``team``."""
    if not caller:
        return False
    return caller == submitter or team_member(policy, team, caller) is not None


def may_decide_disposition(
    policy: Policy,
    *,
    team: str,
    quota_share: str,
    submitter: str,
    owner_slack_user_id: str | None,
    actor: str,
) -> bool:
    """True when ``actor`` (a principal ARN or a Slack user id) may decide a disposition.

    Allowed: the submitter (principal or recorded Slack id), the members of ``team``
    (principal or Slack id), the team's approvers and ``quota_share``'s approvers.
    """
    allowed = {submitter, owner_slack_user_id or ""} - {""}
    found = policy.teams.get(team)
    if found is not None:
        for member in found.members:
            allowed.add(member.principal)
            if member.slackUserId:
                allowed.add(member.slackUserId)
        allowed.update(found.approvers)
    with contextlib.suppress(KeyError):
        allowed.update(policy.share(quota_share).approvers)
    return bool(actor) and actor in allowed
