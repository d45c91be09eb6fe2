"""The HTTP error contract of the REST APIs: one table, one answer shape, every route.

Use cases raise typed errors (:mod:`quotagov.governance.errors`); routes let them
propagate. :func:`install_error_handlers` registers :func:`error_response` as a
Powertools Event Handler exception handler on a resolver (``jobs_api`` and
``escalations_api``), so every route answers a kind of error with the same code:

==============================  ====  ==============================================
error (and its subclasses)      code  e.g.
==============================  ====  ==============================================
``InvalidRequestError``          400  a disposition choice not offered for the job
``NotAuthenticatedError``        401  no caller in the request context (every route)
``ForbiddenError``               403  not a member of the team; may not see the job
``NotFoundError``                404  no such submission
``ConflictError``                409  the disposition was already decided otherwise
``RefusedError``                 422  the policy refuses the escalation
``UnavailableError``             503  the submission queue refused the message
==============================  ====  ==============================================

Answer body: ``{"message": str(error)}``; a 400 adds ``"faults"`` (``"<path>: <fault>"``
per :attr:`~quotagov.governance.errors.InvalidRequestError.faults`, else the message);
an error's :meth:`~quotagov.governance.errors.GovernanceError.facts` add their own fields
(``submissionId``, ``disposition``).

Requests the resolver cannot use (Powertools request validation, a body nested too
deeply for the JSON decoder) are answered here too, see :func:`install_error_handlers`.
Outcomes that are not errors (a ``REFUSED`` submission, a recorded disposition whose
successor is not submitted yet) are shaped by their routes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from quotagov.governance.errors import (
    ConflictError,
    ForbiddenError,
    GovernanceError,
    InvalidRequestError,
    NotAuthenticatedError,
    NotFoundError,
    RefusedError,
    UnavailableError,
)
from quotagov.governance.submission_request import error_path

logger = Logger(child=True)

#: The status code of each kind of use-case error (the most derived listed class wins).
ERROR_STATUS: Mapping[type[Exception], int] = {
    InvalidRequestError: 400,
    NotAuthenticatedError: 401,
    ForbiddenError: 403,
    NotFoundError: 404,
    ConflictError: 409,
    RefusedError: 422,
    UnavailableError: 503,
}

#: Every class :func:`error_response` is registered for.
HANDLED_ERRORS: tuple[type[Exception], ...] = (GovernanceError, *ERROR_STATUS)


def json_response(status_code: int, body: dict[str, Any]) -> Response[str]:
    """A JSON reply with ``status_code``."""
    return Response(
        status_code=status_code,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps(body, separators=(",", ":")),
    )


def status_for(error: Exception) -> int:
    """The status code of ``error``: the :data:`ERROR_STATUS` row of its most derived
    listed class.

    Raises:
        LookupError: ``error`` is none of the listed kinds (a bug: it is not an answer).
    """
    for cls in type(error).__mro__:
        if cls in ERROR_STATUS:
            return ERROR_STATUS[cls]
    raise LookupError(f"no status code for {type(error).__name__}")


def error_body(error: Exception, status: int) -> dict[str, Any]:
    """The answer body of ``error`` answered with ``status`` (see the module docstring)."""
    body: dict[str, Any] = {"message": str(error)}
    if status == 400:
        faults = getattr(error, "faults", None) or []
        body["faults"] = [f"{path}: {fault}" for path, fault in faults] or [str(error)]
    if isinstance(error, GovernanceError):
        body.update(error.facts())
    return body


def error_response(error: Exception) -> Response[str]:
    """The answer to a use-case error: :func:`status_for` and :func:`error_body`."""
    status = status_for(error)
    logger.info(
        "request not done",
        extra={"status": status, "error": type(error).__name__, "reason": str(error)},
    )
    return json_response(status, error_body(error, status))


def validation_faults(errors: list[Any]) -> list[str]:
    """``path: message`` per Powertools/pydantic validation error.

    The ``body`` prefix of the location is dropped (``team``,
    ``serviceRequestPayload.ResourceConfig.InstanceCount``); ``path``/``query`` are
    kept (``path.jobId``).
    """
    faults = []
    for error in errors:
        loc = list(error.get("loc", ()))
        if loc and loc[0] == "body":
            loc = loc[1:]
        message = str(error.get("msg", "invalid"))
        if error.get("type") == "json_invalid":
            message = "the body is not valid JSON"
        faults.append(f"{error_path(loc)}: {message}")
    return faults


def bad_request(exc: RequestValidationError) -> Response[str]:
    """The 400 reply for a request validation error, listing each fault's field path."""
    return json_response(
        400, {"message": "invalid request", "faults": validation_faults(list(exc.errors()))}
    )


#: The fault reported for a body the JSON decoder cannot nest into.
TOO_DEEP_FAULT = "(body): nested too deeply to decode"


def too_deep(exc: RecursionError) -> Response[str]:
    """The 400 reply for a body nested too deeply to decode (``RecursionError``)."""
    logger.warning("request body nested too deeply", extra={"error": str(exc)})
    return json_response(400, {"message": "invalid request", "faults": [TOO_DEEP_FAULT]})


def too_deep_message(exc: RecursionError) -> Response[str]:
    """The escalations API's 400 reply for a body nested too deeply to decode.

    ``{"message": "body: JSON is nested too deeply to decode"}`` (its tests pin it).
    """
    logger.warning("request body nested too deeply", extra={"error": str(exc)})
    return json_response(400, {"message": "body: JSON is nested too deeply to decode"})


def install_error_handlers(app: APIGatewayRestResolver, *, listed_faults: bool = True) -> None:
    """Answer use-case errors with :func:`error_response`, and unusable requests with 400.

    Powertools looks a handler up along the raised exception's MRO, so one registration
    per class in :data:`HANDLED_ERRORS` covers their subclasses.

    Args:
        app: the resolver.
        listed_faults: True (jobs API): request validation errors answer 400
            ``{"message": "invalid request", "faults": ["<field path>: <fault>", ...]}``
            (Powertools' default is 422) and a body nested too deeply for the JSON
            decoder (``RecursionError``, e.g. 2 KB of ``[``) answers 400 with the fault
            :data:`TOO_DEEP_FAULT`, instead of escaping as a Lambda error (API Gateway
            502). False (escalations API, as its answers stand): validation errors keep
            Powertools' 422 detail, and a too deeply nested body answers
            :func:`too_deep_message`.
    """
    app.exception_handler(list(HANDLED_ERRORS))(error_response)
    if listed_faults:
        app.exception_handler(RequestValidationError)(bad_request)
        app.exception_handler(RecursionError)(too_deep)
    else:
        app.exception_handler(RecursionError)(too_deep_message)
