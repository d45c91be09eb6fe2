"""``quotagov report escalations``: who escalates how often, who loses how much work.

From the escalation records and the job records (both read by the caller through the
ports), for the window ``[since, until)``:

* **per team** and **per requester**: escalation ``requests`` (every request created in
  the window, direct levels included), ``approvals`` (APPROVED, APPLIED, APPLY_FAILED
  or SUPERSEDED: an approver said yes, or a direct level was applied), ``denials``,
  ``expired``, and ``budgetUsed``: requests that needed approval (direct levels use no
  budget) in the team's current budget period, against its ``escalationBudget.count``
  (periods aligned to the epoch, as :func:`quotagov.governance.escalations.requesting.budget_key`);
* **per team**: ``preemptions`` whose attempt stopped in the window, their lost work
  in instance-hours and ``lostGpuHours`` (instance-seconds x GPUs per instance,
  :mod:`.gpus`; null when an instance type's GPU count is unknown).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from quotagov.governance.model.escalation import Escalation, EscalationStatus
from quotagov.governance.model.job import JobRecord
from quotagov.governance.reports.gpus import gpus_per_instance
from quotagov.policy.models import Policy

_APPROVED = frozenset(
    {
        EscalationStatus.APPROVED,
        EscalationStatus.APPLIED,
        EscalationStatus.APPLY_FAILED,
        EscalationStatus.SUPERSEDED,
    }
)


@dataclass
class EscalationCounts:
    """Escalation counts of one team or requester."""

    requests: int = 0
    approvals: int = 0
    denials: int = 0
    expired: int = 0
    pending: int = 0

    def add(self, escalation: Escalation) -> None:
        """Count ``escalation`` by its status."""
        self.requests += 1
        if escalation.status in _APPROVED:
            self.approvals += 1
        elif escalation.status is EscalationStatus.DENIED:
            self.denials += 1
        elif escalation.status is EscalationStatus.EXPIRED:
            self.expired += 1
        elif escalation.status is EscalationStatus.PENDING:
            self.pending += 1


@dataclass
class Losses:
    """Preemptions of one team's jobs and the work they lost."""

    preemptions: int = 0
    lost_instance_seconds: float = 0.0
    lost_gpu_seconds: float = 0.0
    unknown_gpu_types: set[str] = field(default_factory=set)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (hours)."""
        return {
            "preemptions": self.preemptions,
            "lostInstanceHours": round(self.lost_instance_seconds / 3600, 3),
            "lostGpuHours": None
            if self.unknown_gpu_types
            else round(self.lost_gpu_seconds / 3600, 3),
            "unknownGpuTypes": sorted(self.unknown_gpu_types),
        }


def escalation_report(
    escalations: Iterable[Escalation],
    jobs: Iterable[JobRecord],
    policy: Policy,
    *,
    since: float,
    until: float,
) -> dict[str, Any]:
    """The report for ``[since, until)`` (epoch seconds); see the module docstring.

    Returns:
        ``{"since", "until", "teams": {team: {requests, approvals, denials, expired,
        pending, budgetUsed, budget, budgetPeriodStart, preemptions,
        lostInstanceHours, lostGpuHours, unknownGpuTypes}}, "requesters":
        {principal: {team, requests, approvals, denials, expired, pending}}}``.

    Raises:
        ValueError: ``until`` is not after ``since``.
    """
    if until <= since:
        raise ValueError(f"--until ({until}) must be after --since ({since})")
    teams: dict[str, EscalationCounts] = defaultdict(EscalationCounts)
    requesters: dict[str, EscalationCounts] = defaultdict(EscalationCounts)
    requester_team: dict[str, str] = {}
    budget_used: dict[str, int] = defaultdict(int)
    for escalation in escalations:
        team = escalation.team
        budget = policy.teams[team].escalationBudget if team in policy.teams else None
        if budget is not None and not escalation.direct:
            start = until // budget.periodSeconds * budget.periodSeconds
            if start <= escalation.created_at < until:
                budget_used[team] += 1
        if not since <= escalation.created_at < until:
            continue
        teams[team].add(escalation)
        requesters[escalation.requester].add(escalation)
        requester_team[escalation.requester] = team
    losses: dict[str, Losses] = defaultdict(Losses)
    for job in jobs:
        _add_losses(losses[job.team], job, since, until)
    names = sorted(set(policy.teams) | set(teams) | {t for t, v in losses.items() if v.preemptions})
    out_teams: dict[str, Any] = {}
    for name in names:
        counts = teams.get(name, EscalationCounts())
        team_budget = policy.teams[name].escalationBudget if name in policy.teams else None
        out_teams[name] = {
            **_counts(counts),
            "budgetUsed": budget_used.get(name, 0),
            "budget": team_budget.count if team_budget else None,
            "budgetPeriodStart": (
                until // team_budget.periodSeconds * team_budget.periodSeconds
                if team_budget
                else None
            ),
            **losses.get(name, Losses()).to_dict(),
        }
    return {
        "since": since,
        "until": until,
        "teams": out_teams,
        "requesters": {
            who: {"team": requester_team[who], **_counts(c)}
            for who, c in sorted(requesters.items())
        },
    }


def _counts(counts: EscalationCounts) -> dict[str, int]:
    return {
        "requests": counts.requests,
        "approvals": counts.approvals,
        "denials": counts.denials,
        "expired": counts.expired,
        "pending": counts.pending,
    }


def _add_losses(losses: Losses, job: JobRecord, since: float, until: float) -> None:
    """Add ``job``'s preemptions that stopped in the window (record ``jobState``)."""
    count = job.instanceCount or 1
    gpus = gpus_per_instance(job.instanceType) if job.instanceType else None
    for preemption in job.jobState.preemptions if job.jobState else []:
        stopped = preemption.stoppedAt
        if stopped is None or not since <= float(stopped) / 1000 < until:
            continue
        losses.preemptions += 1
        lost = preemption.lostInstanceSeconds
        if lost is None:
            lost = float(preemption.lostWorkSeconds or 0) * count
        losses.lost_instance_seconds += float(lost)
        if gpus is None:
            losses.unknown_gpu_types.add(job.instanceType or "(unknown)")
        else:
            losses.lost_gpu_seconds += float(lost) * gpus


def render(report: dict[str, Any]) -> list[str]:
    """The report as text lines: one table per team, one per requester."""
    lines = [
        "team          requests approvals denials expired pending budget  preemptions "
        "lost-instance-h lost-GPU-h"
    ]
    for team, row in report["teams"].items():
        budget = f"{row['budgetUsed']}/{row['budget']}" if row["budget"] is not None else "-"
        gpu = "unknown" if row["lostGpuHours"] is None else f"{row['lostGpuHours']:g}"
        lines.append(
            f"{team:<13} {row['requests']:>8} {row['approvals']:>9} {row['denials']:>7} "
            f"{row['expired']:>7} {row['pending']:>7} {budget:>6}  {row['preemptions']:>11} "
            f"{row['lostInstanceHours']:>15g} {gpu:>10}"
        )
    lines.append("")
    lines.append("requester (team): requests approvals denials expired pending")
    for who, row in report["requesters"].items():
        lines.append(
            f"{who} ({row['team']}): {row['requests']} {row['approvals']} {row['denials']} "
            f"{row['expired']} {row['pending']}"
        )
    return lines
