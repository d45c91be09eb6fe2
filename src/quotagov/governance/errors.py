"""The errors every use case raises, by what went wrong (not by HTTP status).

Use cases raise subclasses of these; the API layer maps each class to one status code
in one table (``quotagov.handlers.api_errors``), the same for every route. A use-case
error never carries an HTTP status itself.

- :class:`InvalidRequestError`: the request is malformed; ``faults`` names each field.
- :class:`NotAuthenticatedError`: the request carries no caller identity.
- :class:`ForbiddenError`: the caller may not do this.
- :class:`NotFoundError`: no such resource (or the caller may not know it exists).
- :class:`ConflictError`: the resource is not in a state that allows it.
- :class:`RefusedError`: the governance policy refuses it; ``reasons`` says why.
- :class:`UnavailableError`: a dependency failed; the same request may succeed later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class GovernanceError(Exception):
    """Base of every use-case error. ``str(error)`` is the message for the caller."""

    def facts(self) -> dict[str, Any]:
        """What the caller needs besides the message to act on the error (JSON values)."""
        return {}


class InvalidRequestError(GovernanceError, ValueError):
    """A malformed request.

    Attributes:
        faults: ``(path, fault)`` pairs, e.g. ``("body.level", "unknown priority level")``.
    """

    def __init__(self, message: str, faults: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.faults = list(faults)


class NotAuthenticatedError(GovernanceError):
    """The request carries no caller identity (no IAM principal, no Slack user)."""


class ForbiddenError(GovernanceError):
    """The caller is known but may not do this."""


class NotFoundError(GovernanceError):
    """No such resource, or none the caller may see."""


class ConflictError(GovernanceError):
    """The resource's current state does not allow the request (e.g. already decided)."""


class RefusedError(GovernanceError):
    """The governance policy refuses the request.

    Attributes:
        reasons: every reason, each naming the rule or field.
    """

    def __init__(self, message: str, reasons: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.reasons = list(reasons) or [message]


class UnavailableError(GovernanceError):
    """A dependency (queue, table, Batch) failed; retry the same request later."""
