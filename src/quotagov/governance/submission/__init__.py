"""Submission use cases: receive a submission, then send it to Batch exactly once.

Two steps, so that ``SubmitServiceJob`` (5 transactions per second per account, AWS
Batch service quotas) is called at a controlled pace by the submit worker only:

1. :func:`receive_submission` (``POST /jobs``, or a message put straight on the
   submission queue): authorize the caller, route with the policy
   (:mod:`quotagov.governance.routing`), store a ``QUEUED`` or ``REFUSED``
   :class:`~quotagov.governance.model.job.JobRecord`, and, for the API, queue the
   submission id. Module :mod:`~quotagov.governance.submission.receive`.
2. :func:`submit_to_batch` (the submit worker): re-check the record against the current
   policy, build the ``SubmitServiceJob`` request with the deterministic
   ``clientToken``, call Batch and move the record ``QUEUED -> SUBMITTED`` with a
   conditional write. A submission that can never succeed (refused by the policy as it
   is now, a Batch ``ClientException``) ends ``FAILED`` with its reason; throttling and
   server errors raise :class:`TransientSubmitError` so the message is retried. Module
   :mod:`~quotagov.governance.submission.to_batch`.

Exactly once: the record's state is checked before calling Batch and changed only from
``QUEUED``; the ``clientToken`` is the same on every try; after an interrupted try
(``recheck=True``) the use case first looks for a service job already tagged with the
submission id. The submit worker adds Powertools Idempotency on the submission id.

Errors (:mod:`~quotagov.governance.submission.errors`, typed by kind in
``governance/errors.py``): :class:`SubmissionUnavailableError` (an ``UnavailableError``:
the queue refused the message), :class:`TransientSubmitError` (an ``UnavailableError``:
Batch throttled or failed), :class:`IdempotencyMismatchError` (a ``ConflictError``: a
``clientRequestId`` reused for another request), and routing's ``NotATeamMemberError``
(a ``ForbiddenError``).
This package is the public surface; import from it, not from its modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quotagov.governance.submission.deps import (
        SubmissionDeps,
        is_enqueue_failure,
    )
    from quotagov.governance.submission.errors import (
        IdempotencyMismatchError,
        SubmissionUnavailableError,
        TransientSubmitError,
    )
    from quotagov.governance.submission.receive import (
        SUBMISSION_NAMESPACE,
        ReceiveOutcome,
        receive_submission,
        record_unusable_message,
        submission_id_for,
    )
    from quotagov.governance.submission.to_batch import (
        SERVICE_JOB_TYPE,
        SUBMISSION_TAG,
        request_of,
        service_job_request,
        submit_to_batch,
    )

#: Each public name -> the module of this package that holds it. Loaded on first use
#: (PEP 562), so that importing one module of the package (``submission.request``, which
#: the API's error table reads) does not load the whole use case at a cold start.
_EXPORTS = {
    "SubmissionDeps": "deps",
    "is_enqueue_failure": "deps",
    "IdempotencyMismatchError": "errors",
    "SubmissionUnavailableError": "errors",
    "TransientSubmitError": "errors",
    "SUBMISSION_NAMESPACE": "receive",
    "ReceiveOutcome": "receive",
    "receive_submission": "receive",
    "record_unusable_message": "receive",
    "submission_id_for": "receive",
    "SERVICE_JOB_TYPE": "to_batch",
    "SUBMISSION_TAG": "to_batch",
    "request_of": "to_batch",
    "service_job_request": "to_batch",
    "submit_to_batch": "to_batch",
}


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "SERVICE_JOB_TYPE",
    "SUBMISSION_NAMESPACE",
    "SUBMISSION_TAG",
    "IdempotencyMismatchError",
    "ReceiveOutcome",
    "SubmissionDeps",
    "SubmissionUnavailableError",
    "TransientSubmitError",
    "is_enqueue_failure",
    "receive_submission",
    "record_unusable_message",
    "request_of",
    "service_job_request",
    "submission_id_for",
    "submit_to_batch",
]
