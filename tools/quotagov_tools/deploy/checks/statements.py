"""Reading IAM statements out of a template, for the ``iam`` rule.

:func:`template_statements` yields every statement the template writes (function
``Policies``, ``AWS::IAM::*`` resources), and a marker for every policy whose content
cannot be seen (a SAM policy template, a managed policy, an external role).
:func:`renderings` turns a ``Resource`` value with intrinsics into the strings it can
become, so a wildcard hidden in an ``Fn::Sub`` or a branch of an ``Fn::If`` is found.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from quotagov_tools.deploy.template import FUNCTION_TYPE, function_role, role_functions

#: What a reference (``!Ref``, ``!GetAtt``, an undefined ``${...}``) renders as.
_PLACEHOLDER = "PLACEHOLDER"

#: Key of the marker yielded for a policy the checker cannot read (value: what it is).
OPAQUE = "__opaque__"

_POLICY_RESOURCES = ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::RolePolicy")


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a list, else ``[value]`` (IAM accepts a string or a list)."""
    return value if isinstance(value, list) else [value]


def _sub_renderings(inner: Any) -> list[str]:
    """``Fn::Sub``: its variables substituted, every other ``${...}`` a placeholder."""
    text, variables = (inner[0], inner[1]) if isinstance(inner, list) else (inner, {})
    results = [str(text)]
    for name, variable in (variables or {}).items():
        options = renderings(variable)
        results = [r.replace("${" + name + "}", o) for r in results for o in options]
    return [re.sub(r"\$\{[^!][^}]*\}", _PLACEHOLDER, r) for r in results]


def _join_renderings(inner: list[Any]) -> list[str]:
    """``Fn::Join``: every combination of its parts' renderings, joined."""
    separator, parts = str(inner[0]), as_list(inner[1])
    joined = [""]
    for index, part in enumerate(parts):
        options = renderings(part)
        prefix = separator if index else ""
        joined = [j + prefix + o for j in joined for o in options]
    return joined


def renderings(value: Any) -> list[str]:
    """The strings a resource value can become; references become a placeholder.

    ``Fn::If`` yields both branches, ``Fn::Join`` joins the renderings of its parts and
    ``Fn::Sub`` substitutes the placeholder for every ``${...}`` it does not define;
    ``!Ref AWS::NoValue`` yields nothing.
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping) and len(value) == 1:
        key, inner = next(iter(value.items()))
        if key == "Fn::If" and isinstance(inner, list) and len(inner) == 3:
            return [*renderings(inner[1]), *renderings(inner[2])]
        if key == "Fn::Sub":
            return _sub_renderings(inner)
        if key == "Fn::Join" and isinstance(inner, list) and len(inner) == 2:
            return _join_renderings(inner)
        if key == "Ref" and inner == "AWS::NoValue":
            return []
    return [_PLACEHOLDER]


def _function_statements(properties: Mapping[str, Any]) -> Iterator[Any]:
    """The statements of an ``AWS::Serverless::Function``'s ``Policies`` (and opaque ones)."""
    if properties.get("Role") is not None:
        yield {OPAQUE: "an external Role instead of Policies"}
    for policy in as_list(properties.get("Policies") or []):
        if isinstance(policy, Mapping) and "Statement" in policy:
            yield from as_list(policy["Statement"])
        elif isinstance(policy, Mapping):
            names = ", ".join(str(name) for name in policy)
            yield {OPAQUE: f"SAM policy template {names}"}
        else:
            yield {OPAQUE: f"managed policy {policy}"}


def _role_statements(properties: Mapping[str, Any]) -> Iterator[Any]:
    """The inline statements of an ``AWS::IAM::Role`` (and its managed policies, opaque)."""
    for policy in as_list(properties.get("Policies") or []):
        document = policy.get("PolicyDocument") if isinstance(policy, Mapping) else None
        yield from as_list((document or {}).get("Statement") or [])
    for arn in as_list(properties.get("ManagedPolicyArns") or []):
        yield {OPAQUE: f"managed policy {arn}"}


def _policy_owner(properties: Mapping[str, Any], owners: Mapping[str, str], default: str) -> str:
    """The function an ``AWS::IAM::Policy`` is attached to (through its role), else ``default``."""
    for role in as_list(properties.get("Roles") or []):
        if isinstance(role, Mapping) and role.get("Ref") in owners:
            return owners[str(role["Ref"])]
    return default


def template_statements(template: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(owner logical id, statement or opaque policy) for every policy the template writes.

    A function's execution role written out as an ``AWS::IAM::Role`` (its ``Role`` is
    ``!GetAtt <Role>.Arn``), and policies attached to a function's role, are owned by
    that function, so the rules that name functions apply to them. Opaque entries (a
    SAM policy template, a managed policy, a role from outside the template) are yielded
    as ``{OPAQUE: description}``. A statement is yielded as written, which may be
    something other than a mapping (the rules report that).
    """
    owners = role_functions(template)
    resources = template["Resources"]
    for logical_id, resource in resources.items():
        if not isinstance(resource, Mapping):
            continue
        kind = resource.get("Type")
        properties = resource.get("Properties") or {}
        owner = logical_id
        if kind == FUNCTION_TYPE:
            if function_role(template, logical_id) in resources:
                continue  # its statements are its role's, yielded with the role
            statements = _function_statements(properties)
        elif kind == "AWS::IAM::Role":
            owner = owners.get(logical_id, logical_id)
            statements = _role_statements(properties)
        elif kind in _POLICY_RESOURCES:
            owner = _policy_owner(properties, owners, logical_id)
            document = properties.get("PolicyDocument") or {}
            statements = iter(as_list(document.get("Statement") or []))
        else:
            continue
        for statement in statements:
            yield owner, statement
