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
a retryable AWS fault            503  DynamoDB throttling or ``TransactionConflict``
                                      that outlived botocore's retries
==============================  ====  ==============================================

A botocore failure that reaches a route is classified once, by
:func:`quotagov.adapters.aws_clients.classify`: a retryable one (throttling, conflict,
lost response, server fault) answers 503 ``{"message": "<service> is busy (<code>);
nothing was changed: retry the same request", "retryable": true}`` (the writes are
conditional or transactional, so the request did all or nothing and its retry is
recognised); any other is a bug and stays a Lambda error (API Gateway 502).

Answer body, the same on every route (``docs/api.md``, "Errors"; ``docs/openapi.json``
``ErrorAnswer``): ``{"message": str}``; a 400 (and a 415) adds ``"faults"``, a list of
``{"path": "<field path>", "fault": "<what is wrong>"}`` (``path`` is ``(body)`` for the
body as a whole, ``headers.Content-Type`` for the media type); an error's
:meth:`~quotagov.governance.errors.GovernanceError.facts` add their own fields
(``submissionId``, ``disposition``, ``clientRequestId``, ``field``).

Requests the resolver cannot use are answered here too, see
:func:`install_error_handlers`: a body that fails the route's schema or is not JSON
(400), a media type other than JSON (415), a body nested too deeply for the JSON decoder
(400). Outcomes that are not errors (a ``REFUSED`` submission, a recorded disposition
whose successor is not submitted yet) are shaped by their routes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from botocore.exceptions import BotoCoreError, ClientError

from quotagov.adapters.aws_clients import classify
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
from quotagov.governance.submission.request import error_path

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


def fault_items(faults: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    """``[{"path", "fault"}, ...]`` of ``(path, fault)`` pairs, in order."""
    return [{"path": path, "fault": fault} for path, fault in faults]


def error_body(error: Exception, status: int) -> dict[str, Any]:
    """The answer body of ``error`` answered with ``status`` (see the module docstring)."""
    body: dict[str, Any] = {"message": str(error)}
    if status == 400:
        faults = list(getattr(error, "faults", None) or []) or [("(body)", str(error))]
        body["faults"] = fault_items(faults)
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


def aws_fault_response(error: Exception) -> Response[str]:
    """The 503 answer to a retryable AWS fault (see the module docstring).

    Raises:
        Exception: ``error`` itself when it is not retryable (a Lambda error).
    """
    kind = classify(error)
    if not kind.retryable:
        raise error
    response = getattr(error, "response", None) or {}
    code = str(response.get("Error", {}).get("Code") or type(error).__name__)
    service = str(getattr(error, "operation_name", "") or "AWS")
    logger.warning(
        "AWS fault answered 503", extra={"fault": kind.value, "code": code, "call": service}
    )
    return json_response(
        503,
        {
            "message": f"{service} is busy ({code}, {kind.value}); nothing was changed: "
            "retry the same request",
            "retryable": True,
        },
    )


def _json_fault(error: Mapping[str, Any], body: Any) -> str:
    """The fault of a body the JSON decoder refused, with where (line, column)."""
    ctx = error.get("ctx") or {}
    reason = str(ctx.get("error") or error.get("msg") or "invalid")
    loc = list(error.get("loc", ()))
    position = loc[-1] if loc and isinstance(loc[-1], int) else None
    if position is None:
        return f"not valid JSON: {reason}"
    text = body if isinstance(body, str) else ""
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f"not valid JSON: {reason} at line {line} column {column} (character {position})"


def validation_faults(errors: list[Any], body: Any = None) -> list[tuple[str, str]]:
    """``(path, fault)`` per Powertools/pydantic validation error.

    The ``body`` prefix of the location is dropped (``team``,
    ``serviceRequestPayload.ResourceConfig.InstanceCount``); ``path``/``query`` are
    kept (``path.jobId``). A body that is not JSON is one fault on ``(body)`` saying
    where the decoder stopped (``body``: the raw body, for the line and column).
    """
    faults = []
    for error in errors:
        loc = list(error.get("loc", ()))
        if error.get("type") == "json_invalid":
            faults.append(("(body)", _json_fault(error, body)))
            continue
        if loc and loc[0] == "body":
            loc = loc[1:]
        faults.append((error_path(loc), str(error.get("msg", "invalid"))))
    return faults


def invalid_request(faults: Iterable[tuple[str, str]], status: int = 400) -> Response[str]:
    """``{"message": "invalid request", "faults": [{"path", "fault"}, ...]}``."""
    return json_response(status, {"message": "invalid request", "faults": fault_items(faults)})


def bad_request(exc: RequestValidationError) -> Response[str]:
    """The 400 reply for a request validation error, listing each fault's field path."""
    return invalid_request(validation_faults(list(exc.errors()), getattr(exc, "body", None)))


#: Media types the JSON routes accept (API Gateway passes ``Content-Type`` through).
JSON_MEDIA_TYPES = ("application/json",)


def unsupported_media(content_type: str) -> Response[str]:
    """The 415 reply for a body that is not JSON (form data and text included)."""
    shown = content_type.split(";", 1)[0].strip() or "(none)"
    return invalid_request(
        [("headers.Content-Type", f"{shown!r} is not accepted: send the body as application/json")],
        415,
    )


#: The fault reported for a body the JSON decoder cannot nest into.
TOO_DEEP_FAULT = ("(body)", "nested too deeply to decode")


def too_deep(exc: RecursionError) -> Response[str]:
    """The 400 reply for a body nested too deeply to decode (``RecursionError``)."""
    logger.warning("request body nested too deeply", extra={"error": str(exc)})
    return invalid_request([TOO_DEEP_FAULT])


def install_error_handlers(app: APIGatewayRestResolver) -> None:
    """Answer use-case errors with :func:`error_response`, and unusable requests in the
    same format.

    Powertools looks a handler up along the raised exception's MRO, so one registration
    per class in :data:`HANDLED_ERRORS` covers their subclasses. Besides:

    - request validation errors answer 400 ``invalid request`` with every fault
      (Powertools' default is a 422 with its own detail);
    - a body that is not JSON by its ``Content-Type`` (``text/plain``, form data, which
      Powertools would otherwise read as fields) answers 415 with the fault on
      ``headers.Content-Type`` (also when its fields happened to validate: a middleware
      checks every request with a body);
    - a path no route of the resolver matches (an empty ``jobId``) answers 404
      ``{"message": "no route <method> <path> in this API"}`` (Powertools' own 404 body
      has another shape);
    - a body nested too deeply for the JSON decoder (``RecursionError``, e.g. 2 KB of
      ``[``) answers 400 with :data:`TOO_DEEP_FAULT`, instead of escaping as a Lambda
      error (API Gateway 502).
    """

    def content_type() -> str:
        headers = app.current_event.headers or {}
        return str(next((v for k, v in headers.items() if k.lower() == "content-type"), ""))

    def is_json(value: str) -> bool:
        media = value.split(";", 1)[0].strip().lower()
        return not media or media in JSON_MEDIA_TYPES or media.endswith("+json")

    def on_validation(exc: RequestValidationError) -> Response[str]:
        if not is_json(content_type()):
            return unsupported_media(content_type())
        return bad_request(exc)

    def on_unsupported(exc: RequestUnsupportedContentType) -> Response[str]:
        return unsupported_media(content_type())

    def json_only(resolver: Any, next_middleware: Callable[[Any], Response[Any]]) -> Response[Any]:
        # after validation: a form body whose fields happened to validate is refused too
        if resolver.current_event.body and not is_json(content_type()):
            return unsupported_media(content_type())
        return next_middleware(resolver)

    def no_route(exc: Exception) -> Response[str]:
        event = app.current_event
        return json_response(
            404, {"message": f"no route {event.http_method} {event.path} in this API"}
        )

    app.not_found(no_route)
    app.exception_handler(list(HANDLED_ERRORS))(error_response)
    app.exception_handler([ClientError, BotoCoreError])(aws_fault_response)
    app.exception_handler(RequestUnsupportedContentType)(on_unsupported)
    app.exception_handler(RequestValidationError)(on_validation)
    app.exception_handler(RecursionError)(too_deep)
    app.use(middlewares=[json_only])


def _text_map_faults(
    event: Mapping[str, Any], single_key: str, multi_key: str, prefix: str
) -> list[tuple[str, str]]:
    """Faults of ``event[single_key]`` (a map of strings) and ``event[multi_key]`` (a map
    of string lists), each path ``<prefix>.<name>``."""
    faults: list[tuple[str, str]] = []
    single = event.get(single_key)
    if single is not None and not isinstance(single, dict):
        faults.append((single_key, "must be an object of strings"))
    elif isinstance(single, dict):
        faults.extend(
            (f"{prefix}.{key}", "must be a string")
            for key, value in single.items()
            if not isinstance(value, str)
        )
    multi = event.get(multi_key)
    if multi is not None and not isinstance(multi, dict):
        faults.append((multi_key, "must be an object of string lists"))
    elif isinstance(multi, dict):
        faults.extend(
            (f"{prefix}.{key}", "must be a list of strings")
            for key, values in multi.items()
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values)
        )
    return faults


def query_fault_answer(event: Any) -> dict[str, Any] | None:
    """The 400 proxy answer (``statusCode``, ``headers``, ``body``) for a REST event whose
    query string parameters or headers are not text, or None when they are.

    API Gateway always sends ``queryStringParameters`` and ``headers`` as maps of
    strings (and ``multiValueQueryStringParameters``, ``multiValueHeaders`` of string
    lists); anything else (a direct invocation, a replay, a hand-built event) is refused
    here with the path of each fault (``query.<name>``, ``headers.<name>``), before
    Powertools' validation middleware, which would fail on it (a ``Content-Type`` of
    ``null`` raised ``AttributeError`` in its body parsing: a Lambda error, 502).
    """
    if not isinstance(event, dict):
        return None
    faults = _text_map_faults(
        event, "queryStringParameters", "multiValueQueryStringParameters", "query"
    )
    faults += _text_map_faults(event, "headers", "multiValueHeaders", "headers")
    if not faults:
        return None
    return {
        "statusCode": 400,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"message": "invalid request", "faults": fault_items(faults)}),
        "isBase64Encoded": False,
    }
