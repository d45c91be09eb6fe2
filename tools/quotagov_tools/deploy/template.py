"""Read a CloudFormation/SAM template with its short-form intrinsic functions.

CloudFormation YAML allows ``!Ref X``, ``!GetAtt X.Attr``, ``!Sub '...'``, ``!If [...]``
and so on (AWS CloudFormation User Guide, "Intrinsic function reference"). PyYAML's safe
loader rejects those tags; :func:`load_template` turns each into the long form a JSON
template would hold, so ``!GetAtt JobsTable.Arn`` reads as
``{"Fn::GetAtt": ["JobsTable", "Arn"]}`` and ``!Ref Api`` as ``{"Ref": "Api"}``.

The same loader reads ``template.yaml`` and the template ``sam build`` writes to
``.aws-sam/build/template.yaml`` (where the functions' ``CodeUri`` point at the build
artifacts). The local runtime uses it to create its moto resources from the template.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

#: Short-form tags and the long-form key each one becomes.
INTRINSIC_TAGS: Mapping[str, str] = {
    "Ref": "Ref",
    "Condition": "Condition",
    "GetAtt": "Fn::GetAtt",
    "Sub": "Fn::Sub",
    "Join": "Fn::Join",
    "Select": "Fn::Select",
    "Split": "Fn::Split",
    "If": "Fn::If",
    "Equals": "Fn::Equals",
    "Not": "Fn::Not",
    "And": "Fn::And",
    "Or": "Fn::Or",
    "FindInMap": "Fn::FindInMap",
    "Base64": "Fn::Base64",
    "Cidr": "Fn::Cidr",
    "GetAZs": "Fn::GetAZs",
    "ImportValue": "Fn::ImportValue",
    "Transform": "Fn::Transform",
    "ToJsonString": "Fn::ToJsonString",
    "Length": "Fn::Length",
}

#: Resource type of a SAM function.
FUNCTION_TYPE = "AWS::Serverless::Function"


class TemplateError(ValueError):
    """The template file is missing, is not YAML, or has no ``Resources`` mapping."""


#: libyaml's safe loader when PyYAML was built with it (about 10x faster), else PyYAML's.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CloudFormationLoader(_SafeLoader):  # type: ignore[valid-type,misc]
    """Safe YAML loader plus the CloudFormation short-form tags (see module doc)."""


def _intrinsic(long_name: str) -> Callable[[yaml.SafeLoader, yaml.Node], dict[str, Any]]:
    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> dict[str, Any]:
        value: Any
        if isinstance(node, yaml.ScalarNode):
            value = loader.construct_scalar(node)
            if long_name == "Fn::GetAtt":
                # "Resource.Attribute" (the attribute itself may contain dots).
                value = str(value).split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
        return {long_name: value}

    return construct


for _tag, _long in INTRINSIC_TAGS.items():
    _CloudFormationLoader.add_constructor(f"!{_tag}", _intrinsic(_long))


def parse_template(text: str, *, source: str = "<template>") -> dict[str, Any]:
    """Parse template ``text`` (YAML or JSON) with intrinsics in long form.

    Raises:
        TemplateError: naming ``source`` when the text is not YAML or has no
            ``Resources`` mapping.
    """
    try:
        document = yaml.load(text, Loader=_CloudFormationLoader)
    except yaml.YAMLError as exc:
        raise TemplateError(f"{source}: not a YAML template: {exc}") from exc
    if not isinstance(document, dict):
        raise TemplateError(
            f"{source}: a template must be a mapping, got {type(document).__name__}"
        )
    if not isinstance(document.get("Resources"), dict):
        raise TemplateError(f"{source}: template has no Resources mapping")
    return document


def load_template(path: str | Path) -> dict[str, Any]:
    """Read the template at ``path``; ``!Ref``/``!GetAtt``/``!Sub``... in long form.

    Example:
        >>> template = load_template("template.yaml")  # doctest: +SKIP
        >>> template["Resources"]["JobsTable"]["Type"]  # doctest: +SKIP
        'AWS::DynamoDB::Table'

    Raises:
        TemplateError: when the file cannot be read, is not YAML, or has no
            ``Resources`` mapping.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TemplateError(f"{path}: cannot read template: {exc}") from exc
    return parse_template(text, source=str(path))


def resources_of_type(template: Mapping[str, Any], resource_type: str) -> dict[str, dict[str, Any]]:
    """Logical id -> resource for every resource of ``resource_type`` (template order)."""
    return {
        logical_id: resource
        for logical_id, resource in template["Resources"].items()
        if isinstance(resource, dict) and resource.get("Type") == resource_type
    }


def function_property(template: Mapping[str, Any], logical_id: str, name: str) -> Any:
    """Property ``name`` of function ``logical_id``, falling back to ``Globals.Function``.

    ``Environment.Variables`` is merged the way SAM merges it (function values win).
    Returns None when neither the function nor the globals set it.
    """
    own = template["Resources"][logical_id].get("Properties") or {}
    globals_ = (template.get("Globals") or {}).get("Function") or {}
    if name == "Environment":
        merged = {
            **((globals_.get("Environment") or {}).get("Variables") or {}),
            **((own.get("Environment") or {}).get("Variables") or {}),
        }
        return {"Variables": merged}
    return own.get(name, globals_.get(name))


def function_role(template: Mapping[str, Any], logical_id: str) -> str:
    """Logical id of the execution role of function ``logical_id``.

    The ``AWS::IAM::Role`` of the template its ``Role`` names (``!GetAtt <Role>.Arn``),
    else the role SAM generates from its ``Policies``, ``<Function>Role`` (AWS SAM
    Developer Guide, "Generated AWS CloudFormation resources for AWS SAM",
    https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/sam-specification-generated-resources-function.html).
    """
    props = template["Resources"][logical_id].get("Properties") or {}
    role = props.get("Role")
    if isinstance(role, Mapping) and "Fn::GetAtt" in role:
        target = role["Fn::GetAtt"]
        name = target[0] if isinstance(target, list) else str(target).split(".", 1)[0]
        if name in template["Resources"]:
            return str(name)
    return f"{logical_id}Role"


def role_functions(template: Mapping[str, Any]) -> dict[str, str]:
    """Execution role logical id -> the function that runs as it (see :func:`function_role`)."""
    return {
        function_role(template, logical_id): logical_id
        for logical_id in resources_of_type(template, FUNCTION_TYPE)
    }


def _policy_statements(document: Any) -> list[Any]:
    statements = (document or {}).get("Statement") if isinstance(document, Mapping) else None
    if statements is None:
        return []
    return statements if isinstance(statements, list) else [statements]


def function_statements(template: Mapping[str, Any], logical_id: str) -> list[Any]:
    """Every IAM statement function ``logical_id`` holds, as written in the template.

    Its ``Policies`` statements (SAM puts them in the role it generates), or the inline
    policies of the explicit ``AWS::IAM::Role`` its ``Role`` names; then the statements
    of every ``AWS::IAM::Policy`` attached to that role (``Roles: [!Ref <Role>]``).
    SAM policy templates and managed policy ARNs are not statements and are left out.
    """
    resources = template["Resources"]
    role = function_role(template, logical_id)
    statements: list[Any] = []
    if role in resources and resources[role].get("Type") == "AWS::IAM::Role":
        for policy in (resources[role].get("Properties") or {}).get("Policies") or []:
            if isinstance(policy, Mapping):
                statements.extend(_policy_statements(policy.get("PolicyDocument")))
    else:
        props = resources[logical_id].get("Properties") or {}
        policies = props.get("Policies") or []
        for policy in policies if isinstance(policies, list) else [policies]:
            if isinstance(policy, Mapping) and "Statement" in policy:
                statements.extend(_policy_statements(policy))
    for resource in resources.values():
        if not isinstance(resource, Mapping) or resource.get("Type") != "AWS::IAM::Policy":
            continue
        props = resource.get("Properties") or {}
        if {"Ref": role} in (props.get("Roles") or []):
            statements.extend(_policy_statements(props.get("PolicyDocument")))
    return statements


def references(value: Any) -> Iterator[str]:
    """Logical ids and parameters that ``value`` points at through Ref/GetAtt/Sub.

    ``{"Fn::Sub": "${Table.Arn}/index/x"}`` yields ``Table``; pseudo parameters
    (``AWS::Region``) are included as written.
    """
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "Ref" and isinstance(inner, str):
                yield inner
            elif key == "Fn::GetAtt":
                target = inner[0] if isinstance(inner, list) else str(inner).split(".", 1)[0]
                yield str(target)
            elif key == "Fn::Sub":
                text, variables = (inner[0], inner[1]) if isinstance(inner, list) else (inner, {})
                local = set(variables) if isinstance(variables, dict) else set()
                for name in _sub_names(str(text)):
                    base = name.split(".", 1)[0]
                    if base not in local:
                        yield base
                if isinstance(variables, dict):
                    for inner_value in variables.values():
                        yield from references(inner_value)
            else:
                yield from references(inner)
    elif isinstance(value, list):
        for item in value:
            yield from references(item)


def _sub_names(text: str) -> Iterator[str]:
    """Variable names in a ``Fn::Sub`` string (``${!Literal}`` escapes are skipped)."""
    start = text.find("${")
    while start != -1:
        end = text.find("}", start)
        if end == -1:
            return
        name = text[start + 2 : end]
        if not name.startswith("!"):
            yield name.strip()
        start = text.find("${", end)
