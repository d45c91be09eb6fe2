"""Error replies shared by the REST handlers (Powertools ``APIGatewayRestResolver``).

* Request validation (``enable_validation=True``) answers HTTP **400** (Powertools'
  default is 422) with ``{"message": ..., "faults": ["<field path>: <fault>", ...]}``,
  one entry per fault; the ``body``/``path``/``query`` prefix of the location is dropped
  for the body (``team``, ``serviceRequestPayload.ResourceConfig.InstanceCount``) and
  kept for the others (``path.jobId``).
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


def install_error_handlers(app: APIGatewayRestResolver) -> None:
    """Answer request validation errors with 400 and the faults' field paths."""
    app.exception_handler(RequestValidationError)(bad_request)
