"""Error replies shared by the REST handlers (Powertools ``APIGatewayRestResolver``).

* Request validation (``enable_validation=True``) answers HTTP **400** (Powertools'
  default is 422) with ``{"message": ..., "faults": ["<field path>: <fault>", ...]}``,
  one entry per fault; the ``body``/``path``/``query`` prefix of the location is dropped
  for the body (``team``, ``serviceRequestPayload.ResourceConfig.InstanceCount``) and
  kept for the others (``path.jobId``).
* A body nested too deeply for the JSON decoder (``RecursionError``, e.g. a 2 KB body
  of 1000 ``[``) answers **400** ``{"message": "invalid request", "faults": ["(body):
  nested too deeply to decode"]}`` instead of escaping as a Lambda error (API Gateway 502).
* 422 is kept for policy refusals; 403 for callers without the right.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from quotagov.governance.submission_request import error_path


def json_response(status_code: int, body: dict[str, Any]) -> Response[str]:
    """A JSON reply with ``status_code``."""
    return Response(
        status_code=status_code,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps(body, separators=(",", ":")),
    )


def validation_faults(errors: list[Any]) -> list[str]:
    """``path: message`` per Powertools/pydantic validation error."""
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
    return json_response(400, {"message": "invalid request", "faults": [TOO_DEEP_FAULT]})


def install_error_handlers(app: APIGatewayRestResolver) -> None:
    """Answer request validation errors and too-deeply nested bodies with 400.

    Validation errors list the faults' field paths; a ``RecursionError`` (raised while
    the body is decoded or validated) names the body.
    """
    app.exception_handler(RequestValidationError)(bad_request)
    app.exception_handler(RecursionError)(too_deep)
