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


def test_reconciler_threshold_comes_from_the_environment_and_is_checked() -> None:
    values = {"jobs": object(), "submission_queue": object(), "batch": object()}
    services = wiring.Services(Settings(job_queue="q", stale_submission_seconds="1200"))
    for name, value in values.items():
        services.set(name, value)
    assert services.reconcile.stale_after_seconds == 1200
    default = wiring.Services(Settings(job_queue="q"))
    for name, value in values.items():
        default.set(name, value)
    assert default.reconcile.stale_after_seconds == 900
    bad = wiring.Services(Settings(job_queue="q", stale_submission_seconds="15m"))
    for name, value in values.items():
        bad.set(name, value)
    with pytest.raises(ValueError, match="STALE_SUBMISSION_SECONDS: '15m' is not a whole number"):
        _ = bad.reconcile
    zero = wiring.Services(Settings(job_queue="q", stale_submission_seconds="0"))
    for name, value in values.items():
        zero.set(name, value)
    with pytest.raises(ValueError, match="stale_after_seconds: 0 is not >= 1"):
        _ = zero.reconcile
