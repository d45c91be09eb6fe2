"""The errors the submission use cases raise (typed by kind, ``governance/errors.py``).

- :class:`SubmissionUnavailableError`: the submission queue refused the message;
  :func:`~quotagov.governance.submission.receive_submission` left the record
  ``FAILED`` (enqueue failure) and the same request may succeed later.
- :class:`IdempotencyMismatchError`: the ``clientRequestId`` was used before by the same
  caller for a different request (nothing stored, nothing queued).
- :class:`TransientSubmitError`: Batch throttled or failed on its side;
  :func:`~quotagov.governance.submission.submit_to_batch` left the record ``QUEUED``.

A caller who may not submit for the team gets
:class:`quotagov.governance.routing.NotATeamMemberError` (a ``ForbiddenError``).
None of them carries an HTTP status: ``quotagov.handlers.api_errors`` maps the kinds.
"""

from __future__ import annotations

from typing import Any

from quotagov.governance.errors import ConflictError, UnavailableError
from quotagov.governance.ports import BatchError


class SubmissionUnavailableError(UnavailableError):
    """The submission queue did not take the submission; send the same request again.

    The message is ``"try again later: <why>"``.

    Attributes:
        submission_id: the submission, stored ``FAILED`` with the enqueue-failure
            kind (``failureKind`` ``enqueue-refused``) so that a retry can queue it.
    """

    def __init__(self, cause: str, submission_id: str) -> None:
        super().__init__(f"try again later: {cause}")
        self.submission_id = submission_id

    def facts(self) -> dict[str, Any]:
        """``{"submissionId": ...}``: the submission to send again."""
        return {"submissionId": self.submission_id}


class TransientSubmitError(UnavailableError):
    """Batch throttled or failed on its side; the submission stays ``QUEUED`` (retry later).

    Attributes:
        submission_id: the submission.
        cause: the :class:`~quotagov.governance.ports.BatchError`; a
            :class:`~quotagov.governance.ports.BatchThrottledError` when Batch throttled.
    """

    def __init__(self, submission_id: str, cause: BatchError) -> None:
        super().__init__(f"submission {submission_id}: {cause}")
        self.submission_id = submission_id
        self.cause = cause


class IdempotencyMismatchError(ConflictError):
    """The same caller sent the same ``clientRequestId`` with a different request.

    AWS APIs answer a reused idempotency token with other parameters with an error
    (e.g. EC2 ``IdempotentParameterMismatch``); so does quotagov: the first submission
    stands, the new request is neither stored nor queued.

    Attributes:
        client_request_id: the reused key.
        field: the first member that differs, as a body path
            (``serviceRequestPayload.ResourceConfig.InstanceCount``).
        submission_id: the submission the key belongs to.
    """

    def __init__(self, client_request_id: str, field: str, submission_id: str) -> None:
        super().__init__(
            f"clientRequestId {client_request_id!r} was used for a different request "
            f"({field} differs); use a new clientRequestId for a new request"
        )
        self.client_request_id = client_request_id
        self.field = field
        self.submission_id = submission_id

    def facts(self) -> dict[str, Any]:
        """``{"clientRequestId", "field", "submissionId"}``."""
        return {
            "clientRequestId": self.client_request_id,
            "field": self.field,
            "submissionId": self.submission_id,
        }
