"""Checks of the SAM template that ``sam validate --lint`` cannot make.

Run after ``sam build`` on ``.aws-sam/build/template.yaml`` (or on ``template.yaml``)::

    python -m quotagov.deploy.checks [TEMPLATE] [--events DIR]

Three families of rules (issue 9; docs/architecture.md for the names):

``handler``
    Every ``AWS::Serverless::Function``'s ``Handler`` (``package.module.attribute``)
    imports from the function's code directory (``CodeUri``) and names a callable. Each
    code directory is imported in a fresh interpreter with only the function's own
    environment, so a module that works only because another one was imported first,
    or that sits outside the artifact, is caught.
``event``
    Every function has a sample event ``events/<handler module>[-<variant>].json``
    (for ``sam local invoke -e`` and ``quotagov invoke``), each file is a JSON object of
    the kind of one of the function's triggers (REST proxy, SQS, EventBridge,
    schedule), an API event hits one of the function's routes and an EventBridge event
    matches one of its rule patterns.
``iam``
    Every Allow statement the template writes (function ``Policies``, ``AWS::IAM::*``
    resources) lists its actions and resources explicitly (no ``NotAction``, no
    ``NotResource``, no SAM policy template or managed policy whose content the checker
    cannot see); no action contains ``*``; a resource is ``*`` only for actions without
    resource-level permissions (:data:`NO_RESOURCE_LEVEL_ACTIONS`, from the AWS Service
    Authorization Reference; reference facts 5.2 for Batch); the append-only tables
    (:data:`APPEND_ONLY_TABLES`) get no update or delete action; and the actions in
    :data:`EXCLUSIVE_ACTIONS` go only to the functions listed there.

Every rule reports :class:`Finding` values; an empty list means the template passes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quotagov.deploy.template import (
    FUNCTION_TYPE,
    TemplateError,
    function_property,
    load_template,
    references,
    resources_of_type,
)

#: Actions that support no resource-level permissions, so ``"Resource": "*"`` is the only
#: valid resource (AWS Service Authorization Reference; Batch: reference facts 5.2).
NO_RESOURCE_LEVEL_ACTIONS: frozenset[str] = frozenset(
    {
        "batch:DescribeServiceJob",
        "batch:ListServiceJobs",
        "batch:DescribeJobQueues",
        "batch:DescribeComputeEnvironments",
        "batch:DescribeJobDefinitions",
        "batch:DescribeJobs",
        "batch:ListJobs",
        "batch:DescribeServiceEnvironments",
        "batch:ListSchedulingPolicies",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
        "xray:GetSamplingRules",
        "xray:GetSamplingTargets",
        "cloudwatch:PutMetricData",
        "sqs:ListQueues",
        "dynamodb:ListTables",
        "ssm:DescribeParameters",
        "secretsmanager:ListSecrets",
        "secretsmanager:GetRandomPassword",
    }
)

#: Tables whose items are written once and never changed (the hash-chained audit log).
APPEND_ONLY_TABLES: frozenset[str] = frozenset({"AuditTable"})

#: Actions that would change or remove items (or the table) of an append-only table.
#: ``BatchWriteItem`` can delete; ``TransactWriteItems`` is authorised per contained
#: PutItem/UpdateItem/DeleteItem, so it needs no entry of its own.
MUTATING_TABLE_ACTIONS: frozenset[str] = frozenset(
    {
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:PartiQLUpdate",
        "dynamodb:PartiQLDelete",
        "dynamodb:DeleteTable",
        "dynamodb:UpdateTable",
        "dynamodb:UpdateTimeToLive",
        "dynamodb:RestoreTableFromBackup",
        "dynamodb:ImportTable",
    }
)

#: Action -> the only functions (logical ids) that may hold it. Raising a service job's
#: priority is what the Slack approval governs (design.md, "Priority-escalation
#: approvals"): only the escalation functions apply it (the approval click, and the
#: scheduled retry of an approved change whose first UpdateServiceJob failed).
EXCLUSIVE_ACTIONS: Mapping[str, frozenset[str]] = {
    "batch:UpdateServiceJob": frozenset(
        {"EscalationsApiFunction", "SlackInteractionsFunction", "EscalationExpiryFunction"}
    ),
}

_PLACEHOLDER = "PLACEHOLDER"
_ROUTE_PARAM = re.compile(r"\\\{[^/]+?\\\}")


@dataclass(frozen=True, order=True)
class Finding:
    """One broken rule: ``rule`` (handler, event or iam), the resource, and what is wrong."""

    rule: str
    resource: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.resource}: {self.message}"


# --------------------------------------------------------------------------- handlers

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


def _literal_environment(variables: Mapping[str, Any]) -> dict[str, str]:
    """The function's environment with intrinsic values replaced by a placeholder."""
    return {
        str(name): value if isinstance(value, str) else f"{_PLACEHOLDER}-{name}"
        for name, value in variables.items()
    }


def check_handlers(
    template: Mapping[str, Any],
    base_dir: str | Path,
    *,
    python: str = sys.executable,
    timeout: float = 180.0,
) -> list[Finding]:
    """Import every function's handler from its ``CodeUri`` directory.

    Args:
        template: a template from :func:`~quotagov.deploy.template.load_template`.
        base_dir: the directory ``CodeUri`` is relative to (the template's directory).
        python: interpreter that has the functions' dependencies installed.
        timeout: seconds allowed for one code directory's imports.

    Returns:
        One ``handler`` finding per function whose handler does not resolve.
    """
    findings: list[Finding] = []
    groups: dict[tuple[Path, tuple[tuple[str, str], ...]], list[tuple[str, str, str]]] = {}
    for logical_id in resources_of_type(template, FUNCTION_TYPE):
        handler = function_property(template, logical_id, "Handler")
        code_uri = function_property(template, logical_id, "CodeUri")
        if not isinstance(handler, str) or handler.count(".") < 1:
            findings.append(
                Finding("handler", logical_id, f"Handler {handler!r} is not module.attr")
            )
            continue
        if not isinstance(code_uri, str) or "://" in code_uri:
            findings.append(Finding("handler", logical_id, f"CodeUri {code_uri!r} is not local"))
            continue
        code_dir = (Path(base_dir) / code_uri).resolve()
        if not code_dir.is_dir():
            findings.append(Finding("handler", logical_id, f"CodeUri {code_dir} does not exist"))
            continue
        module_name, attribute = handler.rsplit(".", 1)
        variables = function_property(template, logical_id, "Environment")["Variables"]
        env_key = tuple(sorted(_literal_environment(variables).items()))
        groups.setdefault((code_dir, env_key), []).append((logical_id, module_name, attribute))

    # Names any function sets are dropped from the inherited environment, so a handler
    # sees only what its own function sets (plus PATH, HOME, ... for the interpreter).
    template_names = {name for key in groups for name, _value in key[1]}
    processes = []
    for (code_dir, env_key), entries in groups.items():
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
        command = [python, "-c", _IMPORT_PROBE, str(code_dir), json.dumps(entries)]
        process = subprocess.Popen(
            command,
            cwd=code_dir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        processes.append((process, entries))
    for process, entries in processes:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            out, err = "", f"import took longer than {timeout} s"
        try:
            results = json.loads(out.strip().splitlines()[-1]) if out.strip() else None
        except json.JSONDecodeError:
            results = None
        for function, module_name, _attribute in entries:
            if results is None:
                reason = (err.strip().splitlines() or ["no output"])[-1]
                message = f"import probe for {module_name} failed: {reason}"
                findings.append(Finding("handler", function, message))
            elif results.get(function):
                findings.append(Finding("handler", function, results[function]))
    return sorted(findings)


# --------------------------------------------------------------------------- events


def _event_kind(event: Mapping[str, Any]) -> str:
    """Which trigger an event looks like: Api, SQS, Schedule, EventBridgeRule or unknown."""
    if "httpMethod" in event and "requestContext" in event:
        return "Api"
    records = event.get("Records")
    if isinstance(records, list) and records and isinstance(records[0], Mapping):
        return "SQS" if records[0].get("eventSource") == "aws:sqs" else "unknown"
    if "detail-type" in event and "source" in event:
        return "Schedule" if event.get("detail-type") == "Scheduled Event" else "EventBridgeRule"
    return "unknown"


def _pattern_matches(pattern: Any, event: Any) -> bool:
    """EventBridge pattern matching for literal value lists (other filters match anything).

    Leaves of a pattern are arrays; a leaf matches when the event's value (or any item of
    an event array) equals one literal. Content filters (``prefix``, ``anything-but``,
    ...) and CloudFormation intrinsics inside a leaf count as matching.
    """
    if isinstance(pattern, Mapping):
        if not isinstance(event, Mapping):
            return False
        return all(
            key in event and _pattern_matches(sub, event[key]) for key, sub in pattern.items()
        )
    if isinstance(pattern, list):
        if any(isinstance(item, Mapping) for item in pattern):
            return True
        values = event if isinstance(event, list) else [event]
        return any(value in pattern for value in values)
    return bool(pattern == event)


def _route_matches(route: Mapping[str, Any], event: Mapping[str, Any]) -> bool:
    method = str(route.get("Method", "")).upper()
    if method not in ("ANY", str(event.get("httpMethod", "")).upper()):
        return False
    path = str(route.get("Path", ""))
    if event.get("resource") == path:
        return True
    regex = "^" + _ROUTE_PARAM.sub("[^/]+", re.escape(path)) + "$"
    return re.match(regex, str(event.get("path", ""))) is not None


def _event_fits(kind: str, event: Mapping[str, Any], triggers: Sequence[Mapping[str, Any]]) -> str:
    """Empty when ``event`` fits one of the function's ``triggers``, else the reason."""
    same_kind = [t for t in triggers if t.get("Type") == kind]
    if not same_kind:
        kinds = sorted({str(t.get("Type")) for t in triggers}) or ["none"]
        return f"is an event of type {kind} but the function's triggers are {', '.join(kinds)}"
    if kind == "Api":
        routes = [t.get("Properties") or {} for t in same_kind]
        if not any(_route_matches(route, event) for route in routes):
            listed = ", ".join(f"{r.get('Method', '')} {r.get('Path', '')}" for r in routes)
            hit = f"{event.get('httpMethod')} {event.get('resource') or event.get('path')}"
            return f"{hit} hits none of the function's routes ({listed})"
    if kind == "EventBridgeRule":
        patterns = [(t.get("Properties") or {}).get("Pattern") or {} for t in same_kind]
        if not any(_pattern_matches(p, event) for p in patterns):
            return "matches none of the function's EventBridge rule patterns"
    return ""


def check_events(template: Mapping[str, Any], events_dir: str | Path) -> list[Finding]:
    """Every function has fitting sample events ``<module>[-<variant>].json`` in ``events_dir``.

    Returns:
        ``event`` findings: no sample for a function, a file that is not a JSON object,
        or one that fits none of the function's triggers.
    """
    events_dir = Path(events_dir)
    findings: list[Finding] = []
    for logical_id in resources_of_type(template, FUNCTION_TYPE):
        handler = function_property(template, logical_id, "Handler")
        if not isinstance(handler, str) or "." not in handler:
            continue  # reported by check_handlers
        module = handler.rsplit(".", 2)[-2]
        files = sorted(
            path
            for path in events_dir.glob(f"{module}*.json")
            if path.stem == module or path.stem.startswith(f"{module}-")
        )
        if not files:
            message = f"no sample event {events_dir.name}/{module}.json or {module}-<variant>.json"
            findings.append(Finding("event", logical_id, message))
            continue
        events = function_property(template, logical_id, "Events") or {}
        triggers = [t for t in events.values() if isinstance(t, Mapping)]
        for path in files:
            try:
                event = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                findings.append(Finding("event", logical_id, f"{path.name}: not JSON ({exc})"))
                continue
            if not isinstance(event, Mapping):
                findings.append(Finding("event", logical_id, f"{path.name}: not a JSON object"))
                continue
            reason = _event_fits(_event_kind(event), event, triggers)
            if reason:
                findings.append(Finding("event", logical_id, f"{path.name} {reason}"))
    return sorted(findings)


# --------------------------------------------------------------------------- IAM


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _renderings(value: Any) -> list[str]:
    """The strings a resource value can become; references become a placeholder.

    ``Fn::If`` yields both branches, ``Fn::Join`` joins the renderings of its parts and
    ``Fn::Sub`` substitutes the placeholder for every ``${...}`` it does not define.
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping) and len(value) == 1:
        key, inner = next(iter(value.items()))
        if key == "Fn::If" and isinstance(inner, list) and len(inner) == 3:
            return [*_renderings(inner[1]), *_renderings(inner[2])]
        if key == "Fn::Sub":
            text, variables = (inner[0], inner[1]) if isinstance(inner, list) else (inner, {})
            results = [str(text)]
            for name, variable in (variables or {}).items():
                options = _renderings(variable)
                results = [r.replace("${" + name + "}", o) for r in results for o in options]
            return [re.sub(r"\$\{[^!][^}]*\}", _PLACEHOLDER, r) for r in results]
        if key == "Fn::Join" and isinstance(inner, list) and len(inner) == 2:
            separator, parts = str(inner[0]), _as_list(inner[1])
            joined = [""]
            for index, part in enumerate(parts):
                options = _renderings(part)
                prefix = separator if index else ""
                joined = [j + prefix + o for j in joined for o in options]
            return joined
        if key == "Ref" and inner == "AWS::NoValue":
            return []
    return [_PLACEHOLDER]


def _is_wildcard_resource(text: str) -> bool:
    """``*``, or an ARN whose resource part is only ``*`` (``arn:aws:dynamodb:r:a:*``)."""
    if text.strip() == "*":
        return True
    parts = text.split(":", 5)
    return len(parts) == 6 and parts[0] == "arn" and parts[5] == "*"


def _statements(template: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(owner logical id, statement or opaque policy) for every policy the template writes.

    Opaque entries (a SAM policy template, a managed policy) are yielded as
    ``{"__opaque__": description}``.
    """
    for logical_id, resource in template["Resources"].items():
        if not isinstance(resource, Mapping):
            continue
        kind = resource.get("Type")
        properties = resource.get("Properties") or {}
        if kind == FUNCTION_TYPE:
            if properties.get("Role") is not None:
                yield logical_id, {"__opaque__": "an external Role instead of Policies"}
            for policy in _as_list(properties.get("Policies") or []):
                if isinstance(policy, Mapping) and "Statement" in policy:
                    for statement in _as_list(policy["Statement"]):
                        yield logical_id, statement
                elif isinstance(policy, Mapping):
                    names = ", ".join(str(name) for name in policy)
                    yield logical_id, {"__opaque__": f"SAM policy template {names}"}
                else:
                    yield logical_id, {"__opaque__": f"managed policy {policy}"}
        elif kind == "AWS::IAM::Role":
            for policy in _as_list(properties.get("Policies") or []):
                document = policy.get("PolicyDocument") if isinstance(policy, Mapping) else None
                for statement in _as_list((document or {}).get("Statement") or []):
                    yield logical_id, statement
            for arn in _as_list(properties.get("ManagedPolicyArns") or []):
                yield logical_id, {"__opaque__": f"managed policy {arn}"}
        elif kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::RolePolicy"):
            document = properties.get("PolicyDocument") or {}
            for statement in _as_list(document.get("Statement") or []):
                yield logical_id, statement


def _check_statement(owner: str, statement: Any) -> Iterator[Finding]:
    if not isinstance(statement, Mapping):
        yield Finding("iam", owner, f"statement {statement!r} is not a mapping")
        return
    if "__opaque__" in statement:
        opaque = statement["__opaque__"]
        yield Finding("iam", owner, f"{opaque}: write the statements out so they can be checked")
        return
    if statement.get("Effect") != "Allow":
        return
    label = f"statement {statement.get('Sid', '(no Sid)')}"
    for key in ("NotAction", "NotResource"):
        if key in statement:
            yield Finding("iam", owner, f"{label}: {key} grants everything not listed")
    actions = [a for a in _as_list(statement.get("Action") or []) if a is not None]
    resources = _as_list(statement.get("Resource") or [])
    if not actions or not all(isinstance(a, str) for a in actions):
        yield Finding("iam", owner, f"{label}: actions must be listed as literal strings")
        return
    for action in actions:
        if "*" in action or "?" in action:
            yield Finding("iam", owner, f"{label}: wildcard action {action!r}")
    if not resources:
        yield Finding("iam", owner, f"{label}: no Resource")
    wildcard = any(_is_wildcard_resource(t) for r in resources for t in _renderings(r))
    if wildcard:
        scoped = sorted(a for a in actions if a not in NO_RESOURCE_LEVEL_ACTIONS)
        if scoped:
            message = (
                f"{label}: Resource '*' for {', '.join(scoped)}, which support "
                "resource-level permissions; name the resources"
            )
            yield Finding("iam", owner, message)
    targets = {name for r in resources for name in references(r)}
    for table in sorted(APPEND_ONLY_TABLES & targets):
        for action in actions:
            if action in MUTATING_TABLE_ACTIONS:
                message = f"{label}: {action} on append-only table {table}"
                yield Finding("iam", owner, message)
    for action in actions:
        allowed = EXCLUSIVE_ACTIONS.get(action)
        if allowed is not None and owner not in allowed:
            message = f"{label}: {action} is reserved for {', '.join(sorted(allowed))}"
            yield Finding("iam", owner, message)


def check_iam(template: Mapping[str, Any]) -> list[Finding]:
    """Apply the IAM rules of the module doc to every statement the template writes.

    Returns:
        ``iam`` findings, sorted; the SAM-added execution policies (basic logging,
        X-Ray, SQS polling, event destinations) are SAM's and not checked here.
    """
    findings: set[Finding] = set()
    for owner, statement in _statements(template):
        findings.update(_check_statement(owner, statement))
    return sorted(findings)


# --------------------------------------------------------------------------- all


def default_template(root: str | Path) -> Path:
    """``<root>/.aws-sam/build/template.yaml`` when ``sam build`` ran, else ``template.yaml``."""
    built = Path(root) / ".aws-sam" / "build" / "template.yaml"
    return built if built.is_file() else Path(root) / "template.yaml"


def check_template(
    path: str | Path,
    *,
    events_dir: str | Path | None = None,
    python: str = sys.executable,
) -> list[Finding]:
    """Run every rule on the template at ``path``.

    Args:
        path: a source or built template.
        events_dir: sample events; default ``events/`` of the project, found upwards
            from the template (``.aws-sam/build`` sits two levels below it).
        python: interpreter for the handler imports.

    Raises:
        TemplateError: when the template cannot be read.
    """
    path = Path(path).resolve()
    template = load_template(path)
    if events_dir is None:
        events_dir = next(
            (p / "events" for p in path.parents if (p / "events").is_dir()),
            path.parent / "events",
        )
    return [
        *check_handlers(template, path.parent, python=python),
        *check_events(template, events_dir),
        *check_iam(template),
    ]


def main(argv: Iterable[str] | None = None) -> int:
    """Command line: print the findings, exit 1 when there are any (2: unreadable template)."""
    parser = argparse.ArgumentParser(prog="python -m quotagov.deploy.checks", description=__doc__)
    parser.add_argument("template", nargs="?", help="default: built template, else template.yaml")
    parser.add_argument("--events", help="sample events directory (default: events/)")
    args = parser.parse_args(None if argv is None else list(argv))
    path = Path(args.template) if args.template else default_template(Path.cwd())
    try:
        findings = check_template(path, events_dir=args.events)
    except TemplateError as exc:
        print(exc, file=sys.stderr)
        return 2
    for finding in findings:
        print(finding)
    count = len(list(resources_of_type(load_template(path), FUNCTION_TYPE)))
    verdict = "FAILED" if findings else "passed"
    print(f"{path}: {count} functions, {len(findings)} findings: {verdict}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
