"""The audit package's errors live in one module (governance/audit/errors.py) and stay
importable where callers imported them before; one base catches them all."""

from __future__ import annotations

import pytest

from quotagov.governance.audit import chain, cloudtrail_calls, digests, errors, trail


@pytest.mark.parametrize(
    ("module", "name", "builtin"),
    [
        (cloudtrail_calls, "AuditEventError", ValueError),
        (cloudtrail_calls, "ForeignCallError", ValueError),
        (trail, "AuditEventError", ValueError),
        (trail, "ForeignCallError", ValueError),
        (chain, "ChainIntegrityError", RuntimeError),
        (chain, "ChainContentionError", RuntimeError),
        (digests, "MalformedDigestError", ValueError),
    ],
)
def test_each_error_is_the_one_of_the_errors_module_under_its_old_import(
    module: object, name: str, builtin: type[Exception]
) -> None:
    cls = getattr(module, name)

    assert cls is getattr(errors, name)
    assert cls.__module__ == "quotagov.governance.audit.errors"
    assert issubclass(cls, errors.AuditError) and issubclass(cls, builtin)


def test_a_foreign_call_is_an_audit_event_error_and_one_except_catches_every_audit_error() -> None:
    raised: list[str] = []
    for error in (
        errors.ForeignCallError("detail: call e-1 was made in account 444455556666"),
        errors.ChainContentionError("chain q: no free slot after 60 attempts for k"),
        errors.MalformedDigestError("digest q/1.json: not JSON"),
    ):
        try:
            raise error
        except errors.AuditError as caught:
            raised.append(f"{type(caught).__name__}: {caught}")

    assert isinstance(errors.ForeignCallError("x"), errors.AuditEventError)
    assert raised == [
        "ForeignCallError: detail: call e-1 was made in account 444455556666",
        "ChainContentionError: chain q: no free slot after 60 attempts for k",
        "MalformedDigestError: digest q/1.json: not JSON",
    ]
