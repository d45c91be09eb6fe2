"""The leaf builders and the per-function compositions: typed dependencies, injection,
and what a missing or unreadable setting means (never a silent no-op)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from quotagov import composition, wiring
from quotagov.settings import Settings
from support.compose import complete

SECRET = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:quotagov/slack"


def test_an_unreadable_slack_secret_raises_instead_of_meaning_no_slack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreadable(secret_arn: str, **_: Any) -> Any:
        raise PermissionError(f"AccessDenied on {secret_arn}")

    monkeypatch.setattr("quotagov.adapters.slack.load_slack_credentials", unreadable)
    with pytest.raises(PermissionError, match="AccessDenied"):
        _ = wiring.Services(Settings(slack_secret_arn=SECRET)).chat
    with pytest.raises(RuntimeError, match="SLACK_SECRET_ARN is not set"):
        _ = wiring.Services(Settings()).chat


def test_the_audit_sink_is_the_audit_queue_and_nothing_else() -> None:
    with pytest.raises(RuntimeError, match="AUDIT_QUEUE_URL is not set"):
        _ = wiring.Services(Settings(audit_table="quotagov-audit")).audit
    assert not hasattr(wiring.Services, "optional_audit")


def test_inject_refuses_an_unknown_dependency_and_compositions_keep_injected_values() -> None:
    with pytest.raises(KeyError, match="no dependency named 'batchh'"):
        composition.inject(complete(), batchh=object())
    marker = object()
    try:
        composition.inject(complete(), batch=marker)
        built = composition.current(composition.JobsApi)
        assert built.batch is marker
        assert composition.current(composition.JobsApi) is built
        composition.cold_start()
        again = composition.current(composition.JobsApi)
        assert again is not built and again.batch is marker
    finally:
        composition.reset()


def test_reconciler_threshold_comes_from_the_environment_and_is_checked() -> None:
    values = {"jobs": object(), "submission_queue": object(), "batch": object()}
    values |= {"owner_notices": object(), "audit": object(), "message_mac": None}

    def reconciler(stale: str) -> composition.Reconciler:
        settings = dataclasses.replace(complete(), stale_submission_seconds=stale)
        return composition.Reconciler(settings, **values)

    assert reconciler("1200").reconcile.stale_after_seconds == 1200
    assert reconciler("").reconcile.stale_after_seconds == 900
    with pytest.raises(ValueError, match="STALE_SUBMISSION_SECONDS: '15m' is not a whole number"):
        _ = reconciler("15m").reconcile
    with pytest.raises(ValueError, match="stale_after_seconds: 0 is not >= 1"):
        _ = reconciler("0").reconcile
