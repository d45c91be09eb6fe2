"""The governance policy: pydantic models, loading and validation."""

from quotagov.policy.models import Policy, PriorityLevel, QuotaShare, Team, WorkloadClass
from quotagov.policy.validation import PolicyError, load_policy, parse_policy

__all__ = [
    "Policy",
    "PolicyError",
    "PriorityLevel",
    "QuotaShare",
    "Team",
    "WorkloadClass",
    "load_policy",
    "parse_policy",
]
