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


@pytest.mark.parametrize(
    ("kind", "base", "status"),
    [
        (EscalationPolicyRefusedError, RefusedError, 422),
        (EscalationForbiddenError, ForbiddenError, 403),
        (EscalationUnavailableError, UnavailableError, 503),
    ],
)
def test_each_refusal_has_one_kind_and_a_derived_status(
    kind: type[EscalationRefusedError], base: type[Exception], status: int
) -> None:
    error = kind("level: unknown priority level 'x'")
    assert isinstance(error, EscalationRefusedError)
    assert isinstance(error, base)
    assert error.reason == str(error) == "level: unknown priority level 'x'"
    assert error.status_code == status
    others = {RefusedError, ForbiddenError, UnavailableError} - {base}
    assert not any(isinstance(error, other) for other in others)


def test_a_policy_refusal_lists_its_reason() -> None:
    error = EscalationPolicyRefusedError("reason: must not be empty")
    assert error.reasons == ["reason: must not be empty"]


def test_status_code_is_read_only() -> None:
    error = EscalationForbiddenError("caller is not a member of team 'research'")
    with pytest.raises(AttributeError):
        error.status_code = 422  # type: ignore[misc]
