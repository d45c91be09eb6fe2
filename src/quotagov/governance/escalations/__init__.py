"""Priority escalations (placeholder, see service)."""

from quotagov.governance.escalations.errors import (
    EscalationForbiddenError,
    EscalationPolicyRefusedError,
    EscalationRefusedError,
    EscalationUnavailableError,
)
from quotagov.governance.escalations.job_lookup import JobRecordLookup
from quotagov.governance.escalations.service import (
    MAX_APPLY_ATTEMPTS,
    QUOTAGOV,
    STALE_APPROVAL_SECONDS,
    DecisionResult,
    EscalationRequest,
    Escalations,
)

__all__ = [
    "MAX_APPLY_ATTEMPTS",
    "QUOTAGOV",
    "STALE_APPROVAL_SECONDS",
    "DecisionResult",
    "EscalationForbiddenError",
    "EscalationPolicyRefusedError",
    "EscalationRefusedError",
    "EscalationRequest",
    "EscalationUnavailableError",
    "Escalations",
    "JobRecordLookup",
]
