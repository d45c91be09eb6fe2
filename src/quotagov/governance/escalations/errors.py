"""The errors an escalation request is refused with, by kind (governance/errors.py).

Every refusal is an :class:`EscalationRefusedError` (so callers can catch them all)
and also one of the use-case error kinds of :mod:`quotagov.governance.errors`:

- :class:`EscalationPolicyRefusedError` (a :class:`~quotagov.governance.errors.RefusedError`):
  a rule of the policy or of the job's state refuses it: an empty reason, a job that
  is not quotagov's, unknown to Batch, terminal or in another queue, an unknown level
  or one not higher than the current priority or not open to the team, a requester
  without ``slackUserId`` for an approval level, a spent budget, an open escalation
  of the same job.
- :class:`EscalationForbiddenError` (a :class:`~quotagov.governance.errors.ForbiddenError`):
  the caller is not a member of the job's team (``governance.access.team_member``).
- :class:`EscalationUnavailableError` (an :class:`~quotagov.governance.errors.UnavailableError`):
  Batch or Slack could not be reached; nothing was left changed, the same request
  may succeed later.

None of them carries an HTTP status: the API layer maps classes to codes.
"""

from __future__ import annotations

from collections.abc import Mapping

from quotagov.governance.errors import (
    ForbiddenError,
    GovernanceError,
    RefusedError,
    UnavailableError,
)


class EscalationRefusedError(GovernanceError):
    """Base of every refusal of an escalation request; nothing was stored or changed.

    Attributes:
        reason: why, naming the field or rule, e.g. ``"reason: must not be empty"``
            (also ``str(error)``).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class EscalationPolicyRefusedError(EscalationRefusedError, RefusedError):
    """The policy, or the job's state in Batch, refuses the request (see module docstring)."""


class EscalationForbiddenError(EscalationRefusedError, ForbiddenError):
    """The caller is not a member of the job's team (``teams.<team>.members``)."""


class EscalationUnavailableError(EscalationRefusedError, UnavailableError):
    """Batch (``DescribeServiceJob``, ``UpdateServiceJob``, the impact preview's reads)
    or Slack (``chat.postMessage``) failed; nothing was left changed."""


#: The ``statusCode`` detail of the ``EscalationRefused`` audit record, by refusal
#: class. It is part of the audit record's format (the status the API has answered
#: each refusal with since escalations exist), so it stays as it is.
_AUDITED_STATUS: Mapping[type[EscalationRefusedError], int] = {
    EscalationForbiddenError: 403,
    EscalationUnavailableError: 503,
}


def audited_status(error: EscalationRefusedError) -> int:
    """The ``statusCode`` recorded in the audit for ``error``: 403, 503, else 422."""
    for kind, status in _AUDITED_STATUS.items():
        if isinstance(error, kind):
            return status
    return 422
