"""Cold start: importing a handler module loads neither the tracer nor the scheduler.

The figures (CPU time against a bare ``import boto3``) are printed by
``benchmarks/submit_path.py``; this test pins what makes them: the X-Ray SDK (Powertools
Tracer), the local scheduler (impact preview) and slack_sdk are loaded when first
needed, never by ``import quotagov.handlers.<module>``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quotagov_tools.deploy.template import (
    FUNCTION_TYPE,
    function_property,
    load_template,
    resources_of_type,
)

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = load_template(ROOT / "template.yaml")
HANDLER_MODULES = sorted(
    {
        str(function_property(TEMPLATE, name, "Handler")).rpartition(".")[0]
        for name in resources_of_type(TEMPLATE, FUNCTION_TYPE)
    }
)
PROBE = (
    "import importlib, json, sys; importlib.import_module(sys.argv[1]); "
    "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
    "('aws_xray_sdk', 'slack_sdk') or m == 'quotagov.scheduler')))"
)


def _loaded_by(module: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, module], capture_output=True, text=True, check=True
    ).stdout
    loaded: list[str] = json.loads(out)
    return loaded


@pytest.mark.slow  # one interpreter per handler module
@pytest.mark.parametrize("module", HANDLER_MODULES)
def test_handler_import_defers_tracer_scheduler_and_slack(module: str) -> None:
    assert len(HANDLER_MODULES) >= 8
    assert _loaded_by(module) == []


@pytest.mark.slow
def test_impact_preview_loads_the_scheduler_only_to_compute_a_preview() -> None:
    assert _loaded_by("quotagov.governance.escalations.preview") == []


@pytest.mark.slow
def test_audit_handler_import_defers_the_policy_audit_and_the_batch_utility() -> None:
    """The audit function's commonest trigger is a CloudTrail event: its cold start
    loads neither the policy-parameter audit (policy models, findings) nor Powertools'
    batch utility (the audit queue's batches), which the first such event imports."""
    probe = (
        "import json, sys; import quotagov.handlers.audit_trail; "
        "print(json.dumps(sorted(m for m in sys.modules if m in "
        "('quotagov.governance.audit.policy_parameter', "
        "'aws_lambda_powertools.utilities.batch'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []
