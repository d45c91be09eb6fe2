"""The ``handler`` rule: every function's ``Handler`` imports from its own ``CodeUri``.

Each code directory is imported in a fresh interpreter with only the function's own
environment (template values, intrinsics replaced by a placeholder), so a module that
works only because another one was imported first, or that sits outside the artifact,
is caught. Functions sharing a code directory and an environment share one interpreter;
the interpreters run in parallel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quotagov_tools.deploy.checks.findings import Finding
from quotagov_tools.deploy.template import FUNCTION_TYPE, function_property, resources_of_type

#: What an intrinsic environment value becomes in the probe (``PLACEHOLDER-<NAME>``).
_PLACEHOLDER = "PLACEHOLDER"

_IMPORT_PROBE = r"""
import importlib, json, os, sys, traceback
root = os.path.realpath(sys.argv[1])
results = {}
for function, module_name, attribute in json.loads(sys.argv[2]):
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        results[function] = "cannot import " + module_name + ": " + last
        continue
    where = os.path.realpath(getattr(module, "__file__", "") or "")
    if not where.startswith(root + os.sep):
        results[function] = module_name + " imports from " + where + ", outside the code directory"
    elif not callable(getattr(module, attribute, None)):
        results[function] = module_name + " has no callable " + repr(attribute)
    else:
        results[function] = ""
print(json.dumps(results))
"""

#: (function logical id, module name, attribute) of one handler to import.
_Entry = tuple[str, str, str]
#: A code directory and the sorted literal environment its functions share.
_GroupKey = tuple[Path, tuple[tuple[str, str], ...]]


@dataclass
class _Probe:
    """One running import probe and the handlers it imports."""

    process: subprocess.Popen[str]
    entries: list[_Entry]


def _literal_environment(variables: Mapping[str, Any]) -> dict[str, str]:
    """The function's environment with intrinsic values replaced by a placeholder."""
    return {
        str(name): value if isinstance(value, str) else f"{_PLACEHOLDER}-{name}"
        for name, value in variables.items()
    }


def _locate(
    template: Mapping[str, Any], logical_id: str, base_dir: Path
) -> Finding | tuple[Path, _Entry]:
    """The code directory and import entry of one function, or why there is none."""
    handler = function_property(template, logical_id, "Handler")
    code_uri = function_property(template, logical_id, "CodeUri")
    if not isinstance(handler, str) or handler.count(".") < 1:
        return Finding("handler", logical_id, f"Handler {handler!r} is not module.attr")
    if not isinstance(code_uri, str) or "://" in code_uri:
        return Finding("handler", logical_id, f"CodeUri {code_uri!r} is not local")
    code_dir = (base_dir / code_uri).resolve()
    if not code_dir.is_dir():
        return Finding("handler", logical_id, f"CodeUri {code_dir} does not exist")
    module_name, attribute = handler.rsplit(".", 1)
    return code_dir, (logical_id, module_name, attribute)


def _group_handlers(
    template: Mapping[str, Any], base_dir: Path
) -> tuple[list[Finding], dict[_GroupKey, list[_Entry]]]:
    """Findings for functions that cannot be probed; the others by code dir and environment."""
    findings: list[Finding] = []
    groups: dict[_GroupKey, list[_Entry]] = {}
    for logical_id in resources_of_type(template, FUNCTION_TYPE):
        located = _locate(template, logical_id, base_dir)
        if isinstance(located, Finding):
            findings.append(located)
            continue
        code_dir, entry = located
        variables = function_property(template, logical_id, "Environment")["Variables"]
        env_key = tuple(sorted(_literal_environment(variables).items()))
        groups.setdefault((code_dir, env_key), []).append(entry)
    return findings, groups


def _probe_environment(key: _GroupKey, template_names: set[str]) -> dict[str, str]:
    """The probe's environment: the function's own variables, not those of the others.

    Names any function sets are dropped from the inherited environment, so a handler
    sees only what its own function sets (plus PATH, HOME, ... for the interpreter).
    """
    code_dir, env_key = key
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYTHON") and k not in template_names
    }
    env.update(dict(env_key))
    env.update(
        PYTHONPATH=str(code_dir),
        PYTHONDONTWRITEBYTECODE="1",
        POWERTOOLS_TRACE_DISABLED="true",
        AWS_DEFAULT_REGION=env.get("AWS_DEFAULT_REGION", "eu-west-1"),
    )
    return env


def _start_probe(python: str, key: _GroupKey, entries: list[_Entry], env: dict[str, str]) -> _Probe:
    """Start importing ``entries`` in a fresh ``python`` inside the code directory."""
    code_dir = key[0]
    command = [python, "-c", _IMPORT_PROBE, str(code_dir), json.dumps(entries)]
    process = subprocess.Popen(
        command,
        cwd=code_dir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return _Probe(process, entries)


def _probe_findings(probe: _Probe, timeout: float) -> list[Finding]:
    """Wait for one probe; a finding per handler it could not import (or all, if it broke)."""
    try:
        out, err = probe.process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        probe.process.kill()
        probe.process.communicate()
        out, err = "", f"import took longer than {timeout} s"
    try:
        results = json.loads(out.strip().splitlines()[-1]) if out.strip() else None
    except json.JSONDecodeError:
        results = None
    findings: list[Finding] = []
    for function, module_name, _attribute in probe.entries:
        if results is None:
            reason = (err.strip().splitlines() or ["no output"])[-1]
            message = f"import probe for {module_name} failed: {reason}"
            findings.append(Finding("handler", function, message))
        elif results.get(function):
            findings.append(Finding("handler", function, results[function]))
    return findings


def check_handlers(
    template: Mapping[str, Any],
    base_dir: str | Path,
    *,
    python: str = sys.executable,
    timeout: float = 180.0,
) -> list[Finding]:
    """Import every function's handler from its ``CodeUri`` directory.

    Args:
        template: a template from :func:`~quotagov_tools.deploy.template.load_template`.
        base_dir: the directory ``CodeUri`` is relative to (the template's directory).
        python: interpreter that has the functions' dependencies installed.
        timeout: seconds allowed for one code directory's imports.

    Returns:
        One ``handler`` finding per function whose handler does not resolve, sorted.
    """
    findings, groups = _group_handlers(template, Path(base_dir))
    template_names = {name for key in groups for name, _value in key[1]}
    probes = [
        _start_probe(python, key, entries, _probe_environment(key, template_names))
        for key, entries in groups.items()
    ]
    for probe in probes:
        findings.extend(_probe_findings(probe, timeout))
    return sorted(findings)
