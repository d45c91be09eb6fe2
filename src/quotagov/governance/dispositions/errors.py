"""Every error the disposition use cases raise, in one module.

The request errors subclass the kinds of :mod:`quotagov.governance.errors` (the API
layer maps each kind to one status code); none carries an HTTP status.
:class:`DispositionInProgressError` is a retry signal, not a request error, and
:class:`IllegalMoveError` is a bug.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quotagov.governance.errors import (
    ConflictError,
    ForbiddenError,
    GovernanceError,
    InvalidRequestError,
    NotFoundError,
)


class DispositionError(GovernanceError):
    """Base of the errors :func:`~quotagov.governance.dispositions.decide_disposition`
    raises."""


class DispositionNotFoundError(DispositionError, NotFoundError):
    """No job record with that submission id."""


class DispositionForbiddenError(DispositionError, ForbiddenError):
    """The actor may not decide for this job (rule:
    :func:`quotagov.governance.access.may_decide_disposition`)."""


class InvalidChoiceError(DispositionError, InvalidRequestError):
    """The choice is not one of the choices offered for this job.

    The message reads ``choice: <fault>``; ``faults`` is ``[("choice", "<fault>")]``.
    """

    def __init__(self, message: str) -> None:
        path, _, fault = message.partition(": ")
        super().__init__(message, [(path, fault)])


class DispositionConflictError(DispositionError, ConflictError):
    """No decision is pending, or another decision was already taken.

    Attributes:
        current: the disposition as recorded (the stored camelCase map), or None when
            there is none.
    """

    def __init__(self, message: str, current: Mapping[str, Any] | None) -> None:
        super().__init__(message)
        self.current = dict(current) if current else None

    def facts(self) -> dict[str, Any]:
        """``{"disposition": <the recorded map or None>}``."""
        return {"disposition": self.current}


class DispositionInProgressError(Exception):
    """Another call holds the lease on an ``applying`` disposition (retry the event later).

    Not a :class:`DispositionError`: the job-state handler lets it fail the event so that
    EventBridge/SQS redelivers it, which finishes the work if the other call died.
    """


class IllegalMoveError(RuntimeError):
    """A use case tried a move :data:`~quotagov.governance.dispositions.record.MOVES`
    does not allow (a bug in quotagov, not a bad request); nothing was written."""
