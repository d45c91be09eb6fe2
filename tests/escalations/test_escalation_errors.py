"""The refusal kinds: each is an EscalationRefusedError and one governance error kind."""

from __future__ import annotations

import pytest

from quotagov.governance.errors import ForbiddenError, RefusedError, UnavailableError
from quotagov.governance.escalations import (
    EscalationForbiddenError,
    EscalationPolicyRefusedError,
    EscalationRefusedError,
    EscalationUnavailableError,
)
from quotagov.handlers.api_errors import status_for


@pytest.mark.parametrize(
    ("kind", "base", "status"),
    [
        (EscalationPolicyRefusedError, RefusedError, 422),
        (EscalationForbiddenError, ForbiddenError, 403),
        (EscalationUnavailableError, UnavailableError, 503),
    ],
)
def test_each_refusal_has_one_kind_and_the_apis_status_for_it(
    kind: type[EscalationRefusedError], base: type[Exception], status: int
) -> None:
    error = kind("level: unknown priority level 'x'")
    assert isinstance(error, EscalationRefusedError)
    assert isinstance(error, base)
    assert error.reason == str(error) == "level: unknown priority level 'x'"
    assert status_for(error) == status  # the API's one table
    others = {RefusedError, ForbiddenError, UnavailableError} - {base}
    assert not any(isinstance(error, other) for other in others)


def test_a_policy_refusal_lists_its_reason() -> None:
    error = EscalationPolicyRefusedError("reason: must not be empty")
    assert error.reasons == ["reason: must not be empty"]


def test_no_refusal_carries_an_http_status() -> None:
    error = EscalationForbiddenError("caller is not a member of team 'research'")
    assert not hasattr(error, "status_code")
