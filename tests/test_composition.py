"""Each function's composition against the template: the template is the source of
each function's environment, and the code asks for exactly what the template gives.

(a) every function's composition builds, with every dependency of its own, from exactly
its template environment as the local runtime resolves it (moto behind every name);
(b) without any one required variable it fails at cold start naming the function and
the variable; (c) the variables the code reads (``Settings``) and the template's agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from quotagov import composition
from quotagov.settings import Settings
from quotagov.wiring import _Dependency
from quotagov_tools.deploy.template import load_template
from quotagov_tools.local.runtime import LocalRuntime
from support.runtime import quiet_runtime

TEMPLATE = Path(__file__).resolve().parents[1] / "template.yaml"

#: Settings no template function gets, with who sets them instead.
LOCAL_ONLY = {
    "POLICY_FILE": "the CLI (a policy file instead of SSM)",
    "SLACK_API_URL": "the local runtime (the loopback fake Slack)",
    "AUDIT_DIGEST_PUBLIC_KEY": "quotagov audit verify --public-key",
}


def _template_environments() -> dict[str, set[str]]:
    """Each function's variable names (its own and the ``Globals``), by logical id."""
    template = load_template(TEMPLATE)
    common = set(template["Globals"]["Function"]["Environment"]["Variables"])
    return {
        logical_id: common
        | set((resource["Properties"].get("Environment") or {}).get("Variables") or {})
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def _globals() -> set[str]:
    return set(load_template(TEMPLATE)["Globals"]["Function"]["Environment"]["Variables"])


def _own_dependencies(kind: type[composition.Composition]) -> list[str]:
    """The dependencies a function's class adds to the shared leaves (its use cases)."""
    return [name for name, value in vars(kind).items() if isinstance(value, _Dependency)]


def test_every_template_function_has_a_composition_and_no_other() -> None:
    assert set(composition.COMPOSITIONS) == set(_template_environments())


@pytest.fixture(scope="module")
def runtime() -> Iterator[LocalRuntime]:
    with quiet_runtime() as started:
        yield started


@pytest.mark.parametrize("function", sorted(composition.COMPOSITIONS))
def test_each_composition_builds_from_exactly_its_template_environment(
    runtime: LocalRuntime, function: str
) -> None:
    kind = composition.COMPOSITIONS[function]
    environment = runtime.environments[function]
    settings = Settings.from_env(environment)

    built = kind(settings, clock=runtime.clock)
    values: dict[str, Any] = {name: getattr(built, name) for name in _own_dependencies(kind)}

    assert values, f"{function} builds no use case of its own"
    assert all(value is not None for value in values.values())
    # it sees only its own variables: another function's are blanked
    for field in dataclasses.fields(Settings):
        if field.name.upper() not in kind.variables():
            assert getattr(built.settings, field.name) == ""
    assert {v for v in kind.requires if environment.get(v)} == set(kind.requires)


def test_the_slack_function_builds_no_batch_client_nor_previewer(runtime: LocalRuntime) -> None:
    """SlackInteractionsFunction records clicks and hands them off: its use cases are
    built without a Batch client (none is cached) and any Batch call is a loud fault."""
    kind = composition.SlackInteractions
    built = kind(Settings.from_env(runtime.environments[kind.function]), clock=runtime.clock)

    escalations, dispositions = built.escalations, built.dispositions

    assert "batch" not in built._values
    assert isinstance(escalations.deps.batch, composition._NoBatch)
    assert escalations.deps.previewer is escalations.deps.batch
    assert isinstance(dispositions.batch, composition._NoBatch)
    assert escalations.deps.handoff is not None and dispositions.handoff is not None
    with pytest.raises(RuntimeError, match=r"no_batch: .* \(update_service_job\)"):
        escalations.deps.batch.update_service_job(jobId="j", schedulingPriority=1)
    assert "batch" not in built._values


_CASES = [
    (function, variable)
    for function, kind in sorted(composition.COMPOSITIONS.items())
    for variable in sorted(kind.requires)
]


@pytest.mark.parametrize(("function", "variable"), _CASES)
def test_a_missing_required_variable_fails_at_cold_start_naming_it(
    function: str, variable: str
) -> None:
    kind = composition.COMPOSITIONS[function]
    present = {name: f"value-of-{name}" for name in _template_environments()[function]}
    present.pop(variable)

    with pytest.raises(composition.MissingSettingsError) as caught:
        kind(Settings.from_env(present))

    assert caught.value.function == function
    assert caught.value.missing == [variable]
    assert str(caught.value) == (
        f"{function}: required environment variable(s) not set: {variable}"
    )


@pytest.mark.parametrize("value", ["", "five minutes"])
def test_the_audit_function_without_a_settling_window_never_writes_unsettled(
    runtime: LocalRuntime, value: str
) -> None:
    """Without a usable ``AUDIT_SETTLE_SECONDS`` the audit function fails before its
    first record rather than writing calls in arrival order (no settling, no
    ``RECORDED_LATE``): unset is a missing setting, a non-number names the variable."""
    environment = dict(runtime.environments["AuditFunction"])
    assert environment["AUDIT_SETTLE_SECONDS"] == "300"  # the template's window
    environment["AUDIT_SETTLE_SECONDS"] = value
    if not value:
        with pytest.raises(composition.MissingSettingsError, match="AUDIT_SETTLE_SECONDS"):
            composition.Audit(Settings.from_env(environment), clock=runtime.clock)
        return
    built = composition.Audit(Settings.from_env(environment), clock=runtime.clock)
    with pytest.raises(ValueError, match=r"^AUDIT_SETTLE_SECONDS: 'five minutes' is not a number"):
        _ = built.audit_trail


def test_a_handler_fails_its_first_invocation_before_any_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from quotagov.handlers import reconciler
    from support.lambda_context import LambdaContext

    composition.reset()
    for name in Settings.variables():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JOBS_TABLE", "quotagov-jobs")
    try:
        with pytest.raises(composition.MissingSettingsError) as caught:
            reconciler.handler({}, LambdaContext())
    finally:
        composition.reset()
    assert caught.value.missing == sorted(composition.Reconciler.requires - {"JOBS_TABLE"})


def test_the_code_reads_what_the_template_gives_and_nothing_else() -> None:
    environments = _template_environments()
    common = _globals()
    settings = set(Settings.variables())
    given = set().union(*environments.values()) & settings
    read = set().union(*(kind.variables() for kind in composition.COMPOSITIONS.values()))

    # every setting is given to some function or is set by a local command
    assert settings - given == set(LOCAL_ONLY)
    # every template variable quotagov defines is read by some function
    assert given - read == set()
    for function, kind in composition.COMPOSITIONS.items():
        template = environments[function] & settings
        # what a function reads it is given (locally set variables aside) ...
        assert kind.variables() - template <= set(LOCAL_ONLY), function
        # ... and what the template gives it alone (not the Globals) it reads
        assert template - common <= kind.variables(), function
