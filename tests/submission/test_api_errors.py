"""The one HTTP error contract (``quotagov.handlers.api_errors``) and missing callers."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from quotagov import composition
from quotagov.governance.dispositions import (
    DispositionConflictError,
    DispositionForbiddenError,
    DispositionNotFoundError,
    InvalidChoiceError,
)
from quotagov.governance.errors import (
    ConflictError,
    ForbiddenError,
    InvalidRequestError,
    NotAuthenticatedError,
    NotFoundError,
    RefusedError,
    UnavailableError,
)
from quotagov.governance.ports import BatchThrottledError
from quotagov.governance.routing import NotATeamMemberError
from quotagov.governance.submission import SubmissionUnavailableError, TransientSubmitError
from quotagov.handlers.api_errors import error_body, error_response, status_for
from quotagov.handlers.identity import NO_CALLER, caller_of
from support.compose import wire

from .conftest import LambdaContext, load_event


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (InvalidRequestError("bad"), 400),
        (NotAuthenticatedError(NO_CALLER), 401),
        (ForbiddenError("no"), 403),
        (NotFoundError("none"), 404),
        (ConflictError("taken"), 409),
        (RefusedError("policy says no"), 422),
        (UnavailableError("later"), 503),
        (NotATeamMemberError("arn:x", "research"), 403),
        (SubmissionUnavailableError("SQS down", "sub-1"), 503),
        (InvalidChoiceError("choice: not offered"), 400),
        (DispositionForbiddenError("not yours"), 403),
        (DispositionNotFoundError("jobId: no job"), 404),
        (DispositionConflictError("decided", {"choice": "abandon"}), 409),
    ],
)
def test_each_kind_of_error_has_one_status_code(error: Exception, status: int) -> None:
    assert status_for(error) == status
    assert error_response(error).status_code == status


def test_a_subclass_answers_with_its_kind() -> None:
    class TooLate(ConflictError):
        pass

    assert status_for(TooLate("x")) == 409
    throttled = BatchThrottledError("SubmitServiceJob", "TooManyRequestsException", "slow")
    assert status_for(TransientSubmitError("sub-1", throttled)) == 503


def test_answer_bodies() -> None:
    assert error_body(ForbiddenError("no"), 403) == {"message": "no"}
    assert error_body(InvalidRequestError("bad", [("body.level", "unknown")]), 400) == {
        "message": "bad",
        "faults": [{"path": "body.level", "fault": "unknown"}],
    }
    assert error_body(InvalidChoiceError("choice: x"), 400) == {
        "message": "choice: x",
        "faults": [{"path": "choice", "fault": "x"}],
    }
    assert error_body(SubmissionUnavailableError("SQS down", "sub-1"), 503) == {
        "message": "try again later: SQS down",
        "submissionId": "sub-1",
    }
    assert error_body(DispositionConflictError("decided", {"choice": "abandon"}), 409) == {
        "message": "decided",
        "disposition": {"choice": "abandon"},
    }


def test_caller_of_refuses_a_request_without_a_caller() -> None:
    assert caller_of({"requestContext": {"identity": {"userArn": "arn:x"}}}) == "arn:x"
    with pytest.raises(NotAuthenticatedError, match=NO_CALLER):
        caller_of({"requestContext": {"identity": {"userArn": None}}})


def _anonymous(name: str) -> dict[str, Any]:
    event = load_event(name)
    event["requestContext"]["identity"]["userArn"] = None
    return event


@pytest.mark.parametrize(
    ("module", "event"),
    [
        ("jobs_api", "jobs_api-submit"),
        ("jobs_api", "jobs_api-get"),
        ("jobs_api", "jobs_api-disposition"),
        ("escalations_api", "escalations_api-request"),
    ],
)
def test_every_route_answers_401_without_a_caller(module: str, event: str) -> None:
    handler = importlib.import_module(f"quotagov.handlers.{module}").handler
    wire()  # every setting named, no resource behind any: nothing may be read
    try:
        reply = handler(_anonymous(event), LambdaContext())
    finally:
        composition.reset()
    assert reply["statusCode"] == 401
    assert json.loads(reply["body"]) == {"message": NO_CALLER}
