"""The composition root: typed dependencies, overrides, and what "not configured" means."""

from __future__ import annotations

from typing import Any

import pytest

from quotagov import wiring
from quotagov.governance.ports import NullAuditSink
from quotagov.settings import Settings

SECRET = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:quotagov/slack"


def test_an_unreadable_slack_secret_raises_instead_of_meaning_no_slack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreadable(secret_arn: str, **_: Any) -> Any:
        raise PermissionError(f"AccessDenied on {secret_arn}")

    monkeypatch.setattr("quotagov.adapters.slack.load_slack_credentials", unreadable)
    with pytest.raises(PermissionError, match="AccessDenied"):
        wiring.Services(Settings(slack_secret_arn=SECRET)).optional_chat()
    assert wiring.Services(Settings()).optional_chat() is None


def test_no_audit_table_is_an_in_memory_sink_only_where_the_audit_is_optional() -> None:
    assert isinstance(wiring.Services(Settings()).optional_audit(), NullAuditSink)
    with pytest.raises(RuntimeError, match="AUDIT_TABLE"):
        _ = wiring.Services(Settings()).audit


def test_override_refuses_an_unknown_dependency_and_keeps_injected_values() -> None:
    with pytest.raises(KeyError, match="no dependency named 'batchh'"):
        wiring.override(Settings(), batchh=object())
    marker = object()
    try:
        services = wiring.override(Settings(), batch=marker)
        assert services.batch is marker
        assert wiring.services() is services
    finally:
        wiring.reset()
