"""The SAM template as the local runtime sees it: functions, their triggers, resources.

``template.yaml`` is the single source of truth for what the local runtime builds:
each ``AWS::Serverless::Function`` becomes a :class:`FunctionSpec` (handler path,
environment, triggers) and every other resource is provisioned in moto by
:mod:`quotagov_tools.local.provision`. Intrinsic functions are kept in their long form
(``{"Ref": ...}``, ``{"Fn::GetAtt": [...]}``, ``{"Fn::Sub": ...}``) by the loader and
resolved here against the physical names moto gave the resources.

Rules follow the CloudFormation intrinsic function reference and the SAM
specification (``Globals``, ``Events`` of type ``Api``, ``SQS``, ``EventBridgeRule``,
``Schedule``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quotagov_tools.deploy.template import TemplateError

#: The account and Region the local runtime pretends to run in (the policy examples use them).
ACCOUNT_ID = "111122223333"
REGION = "eu-west-1"
STACK_NAME = "quotagov-local"


@dataclass(frozen=True)
class ApiRoute:
    """One ``Api`` event of a function: ``method`` (upper case) and ``path`` (``/jobs/{jobId}``)."""

    function: str
    method: str
    path: str
    rest_api: str
    iam_auth: bool

    def match(self, method: str, path: str) -> dict[str, str] | None:
        """Return the path parameters when ``method path`` hits this route, else ``None``."""
        if self.method not in ("ANY", method.upper()):
            return None
        pattern = "^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(self.path)) + "$"
        found = re.match(pattern, path)
        return dict(found.groupdict()) if found else None


@dataclass(frozen=True)
class SqsTrigger:
    """An ``SQS`` event: the queue's logical id, batch size and partial-failure reporting."""

    function: str
    queue: str
    batch_size: int
    partial_failures: bool


@dataclass(frozen=True)
class RuleTrigger:
    """An ``EventBridgeRule`` event, or an explicit ``AWS::Events::Rule`` targeting a function."""

    function: str
    name: str
    pattern: dict[str, Any]


@dataclass(frozen=True)
class ScheduleTrigger:
    """A ``Schedule`` event: ``rate(N minutes)`` as ``every_seconds``."""

    function: str
    name: str
    every_seconds: int


@dataclass
class FunctionSpec:
    """A function of the template: logical id, ``module.attr`` handler, environment."""

    logical_id: str
    handler: str
    environment: dict[str, Any] = field(default_factory=dict)
    timeout_seconds: int = 3
    #: ``MemorySize`` (MB; SAM's default 128), reported by the Lambda context.
    memory_mb: int = 128
    #: ``EventInvokeConfig.MaximumRetryAttempts`` (Lambda's default for async invokes: 2).
    async_retries: int = 2
    #: logical id of the SQS queue of ``EventInvokeConfig.DestinationConfig.OnFailure``.
    on_failure_queue: str | None = None


def _rate_seconds(expression: str) -> int:
    found = re.fullmatch(
        r"rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)", expression.strip()
    )
    if not found:
        raise TemplateError(f"Schedule: only rate(N unit) is supported locally, got {expression!r}")
    unit = found.group(2).rstrip("s")
    return int(found.group(1)) * {"minute": 60, "hour": 3600, "day": 86400}[unit]


class Stack:
    """A parsed template with parameter values and the resolver for intrinsic functions.

    Args:
        template: the loaded template (long-form intrinsics).
        parameters: parameter values overriding the template defaults.

    Physical ids of resources are filled in by the provisioner through
    :meth:`set_physical`; until then ``Ref``/``GetAtt`` to them raise :class:`TemplateError`.
    """

    def __init__(self, template: Mapping[str, Any], parameters: Mapping[str, str] | None = None):
        self.template = template
        self.resources: dict[str, dict[str, Any]] = dict(template["Resources"])
        self.parameters: dict[str, Any] = {}
        for name, spec in (template.get("Parameters") or {}).items():
            if parameters and name in parameters:
                self.parameters[name] = parameters[name]
            elif "Default" in spec:
                self.parameters[name] = spec["Default"]
        self._refs: dict[str, str] = {}
        self._attrs: dict[tuple[str, str], str] = {}
        self.conditions: dict[str, bool] = {}
        for name, expression in (template.get("Conditions") or {}).items():
            self.conditions[name] = bool(self.resolve(expression))

    # -- physical ids -------------------------------------------------------------

    def set_physical(self, logical_id: str, ref: str, **attributes: str) -> None:
        """Record what ``!Ref logical_id`` and ``!GetAtt logical_id.<attr>`` resolve to."""
        self._refs[logical_id] = ref
        for attr, value in attributes.items():
            self._attrs[(logical_id, attr)] = value

    def is_set(self, logical_id: str) -> bool:
        """True once :meth:`set_physical` recorded ``logical_id``."""
        return logical_id in self._refs

    def role_arns(self) -> dict[str, str]:
        """Role name -> role ARN of every execution role recorded (``<Function>Role``)."""
        return {
            ref: self._attrs[(logical_id, "Arn")]
            for logical_id, ref in self._refs.items()
            if (logical_id, "Arn") in self._attrs and ":role/" in self._attrs[(logical_id, "Arn")]
        }

    def of_type(self, resource_type: str) -> dict[str, dict[str, Any]]:
        """Return the resources of ``resource_type`` whose condition holds, by logical id."""
        return {
            logical_id: resource
            for logical_id, resource in self.resources.items()
            if resource.get("Type") == resource_type and self._enabled(resource)
        }

    def _enabled(self, resource: Mapping[str, Any]) -> bool:
        condition = resource.get("Condition")
        return condition is None or self.conditions.get(str(condition), False)

    # -- intrinsic functions ------------------------------------------------------

    def _pseudo(self, name: str) -> str | None:
        return {
            "AWS::AccountId": ACCOUNT_ID,
            "AWS::Region": REGION,
            "AWS::StackName": STACK_NAME,
            "AWS::StackId": (
                f"arn:aws:cloudformation:{REGION}:{ACCOUNT_ID}:stack/{STACK_NAME}/local"
            ),
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
        }.get(name)

    def ref(self, name: str) -> Any:
        """Resolve ``!Ref name`` (parameter, pseudo parameter or provisioned resource)."""
        pseudo = self._pseudo(name)
        if pseudo is not None:
            return pseudo
        if name in self.parameters:
            return self.parameters[name]
        if name in self._refs:
            return self._refs[name]
        raise TemplateError(f"Ref: {name!r} is not a parameter or a provisioned resource")

    def get_att(self, logical_id: str, attribute: str) -> str:
        """Resolve ``!GetAtt logical_id.attribute``."""
        try:
            return self._attrs[(logical_id, attribute)]
        except KeyError:
            raise TemplateError(f"GetAtt: {logical_id}.{attribute} is not known locally") from None

    def _sub(self, text: str, variables: Mapping[str, Any]) -> str:
        def replace(found: re.Match[str]) -> str:
            name = found.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in variables:
                return str(self.resolve(variables[name]))
            if "." in name and name.split(".", 1)[0] in self.resources:
                logical_id, attribute = name.split(".", 1)
                return self.get_att(logical_id, attribute)
            return str(self.ref(name))

        return re.sub(r"\$\{([^}]+)\}", replace, text)

    def resolve(self, value: Any) -> Any:
        """Resolve every intrinsic function inside ``value`` (recursively).

        Raises:
            TemplateError: for an unknown reference or an unsupported function.
        """
        if isinstance(value, list):
            resolved = [self.resolve(item) for item in value]
            return [item for item in resolved if item is not _NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref":
                return _NO_VALUE if argument == "AWS::NoValue" else self.ref(str(argument))
            if key == "Condition":
                return self.conditions[str(argument)]
            if key.startswith("Fn::"):
                return self._function(key[4:], argument)
        resolved_map = {key: self.resolve(item) for key, item in value.items()}
        return {key: item for key, item in resolved_map.items() if item is not _NO_VALUE}

    def _function(self, name: str, argument: Any) -> Any:
        if name == "GetAtt":
            parts = argument.split(".", 1) if isinstance(argument, str) else argument
            return self.get_att(str(parts[0]), str(self.resolve(parts[1])))
        if name == "Sub":
            if isinstance(argument, list):
                return self._sub(str(argument[0]), argument[1])
            return self._sub(str(argument), {})
        if name == "Join":
            separator, items = argument
            return str(separator).join(str(item) for item in self.resolve(items))
        if name == "Select":
            index, items = argument
            return self.resolve(items)[int(self.resolve(index))]
        if name == "Split":
            separator, text = argument
            return str(self.resolve(text)).split(str(separator))
        if name == "Equals":
            left, right = (self.resolve(item) for item in argument)
            return str(left) == str(right)
        if name == "Not":
            return not self.resolve(argument[0])
        if name == "And":
            return all(self.resolve(item) for item in argument)
        if name == "Or":
            return any(self.resolve(item) for item in argument)
        if name == "If":
            condition, when_true, when_false = argument
            chosen = when_true if self.conditions.get(str(condition), False) else when_false
            return self.resolve(chosen)
        if name == "FindInMap":
            mapping, top, second = (self.resolve(item) for item in argument)
            return self.resolve(self.template["Mappings"][mapping][top][second])
        raise TemplateError(f"Fn::{name} is not supported by the local runtime")

    # -- functions and their triggers ---------------------------------------------

    def _globals(self) -> dict[str, Any]:
        globals_: dict[str, Any] = (self.template.get("Globals") or {}).get("Function") or {}
        return globals_

    def functions(self) -> dict[str, FunctionSpec]:
        """Every enabled ``AWS::Serverless::Function`` with its resolved environment.

        Function environment variables override ``Globals.Function.Environment``.
        """
        global_env = dict((self._globals().get("Environment") or {}).get("Variables") or {})
        specs: dict[str, FunctionSpec] = {}
        for logical_id, resource in self.of_type("AWS::Serverless::Function").items():
            properties = resource.get("Properties") or {}
            handler = properties.get("Handler") or self._globals().get("Handler")
            if not handler:
                raise TemplateError(f"{logical_id}: function has no Handler")
            env = dict(global_env)
            env.update((properties.get("Environment") or {}).get("Variables") or {})
            timeout = properties.get("Timeout", self._globals().get("Timeout", 3))
            memory = properties.get("MemorySize", self._globals().get("MemorySize", 128))
            invoke_config = properties.get("EventInvokeConfig") or {}
            on_failure = ((invoke_config.get("DestinationConfig") or {}).get("OnFailure")) or {}
            destination = on_failure.get("Destination")
            failure_queue = None
            if on_failure.get("Type") == "SQS" and isinstance(destination, dict):
                attr = destination.get("Fn::GetAtt")
                if attr:
                    failure_queue = str(attr.split(".")[0] if isinstance(attr, str) else attr[0])
            specs[logical_id] = FunctionSpec(
                logical_id=logical_id,
                handler=str(handler),
                environment=env,
                timeout_seconds=int(self.resolve(timeout)),
                memory_mb=int(self.resolve(memory)),
                async_retries=int(invoke_config.get("MaximumRetryAttempts", 2)),
                on_failure_queue=failure_queue,
            )
        return specs

    def _events(self, event_type: str) -> list[tuple[str, str, dict[str, Any]]]:
        found: list[tuple[str, str, dict[str, Any]]] = []
        for logical_id, resource in self.of_type("AWS::Serverless::Function").items():
            events = (resource.get("Properties") or {}).get("Events") or {}
            for event_name, event in events.items():
                if event.get("Type") == event_type:
                    found.append((logical_id, event_name, event.get("Properties") or {}))
        return found

    def api_routes(self) -> list[ApiRoute]:
        """The REST routes (``Api`` events), with whether IAM auth protects each."""
        routes = []
        for function, _name, props in self._events("Api"):
            rest_api = props.get("RestApiId")
            api_id = rest_api.get("Ref") if isinstance(rest_api, dict) else rest_api
            auth = props.get("Auth") or {}
            authorizer = auth.get("Authorizer")
            if authorizer is None and api_id:
                api_auth = ((self.resources.get(str(api_id)) or {}).get("Properties") or {}).get(
                    "Auth"
                ) or {}
                authorizer = api_auth.get("DefaultAuthorizer")
            routes.append(
                ApiRoute(
                    function=function,
                    method=str(props["Method"]).upper(),
                    path=str(props["Path"]),
                    rest_api=str(api_id or "ServerlessRestApi"),
                    iam_auth=authorizer == "AWS_IAM",
                )
            )
        return routes

    def binary_media_types(self, rest_api: str) -> list[str]:
        """``BinaryMediaTypes`` of the API, with SAM's ``~1`` written back as ``/``."""
        props = (self.resources.get(rest_api) or {}).get("Properties") or {}
        types = self.resolve(props.get("BinaryMediaTypes") or [])
        return [str(media).replace("~1", "/") for media in types]

    def stage_name(self, rest_api: str) -> str:
        """The API stage (``StageName`` of the ``AWS::Serverless::Api``; SAM's default is Prod)."""
        props = (self.resources.get(rest_api) or {}).get("Properties") or {}
        return str(self.resolve(props.get("StageName", "Prod")))

    def sqs_triggers(self) -> list[SqsTrigger]:
        """The ``SQS`` event source mappings (queue logical id from ``!GetAtt Q.Arn``)."""
        triggers = []
        for function, _name, props in self._events("SQS"):
            queue = props.get("Queue")
            if not (isinstance(queue, dict) and "Fn::GetAtt" in queue):
                raise TemplateError(f"{function}: SQS Queue must be !GetAtt <Queue>.Arn")
            attr = queue["Fn::GetAtt"]
            logical = attr.split(".")[0] if isinstance(attr, str) else attr[0]
            response_types = props.get("FunctionResponseTypes") or []
            triggers.append(
                SqsTrigger(
                    function=function,
                    queue=str(logical),
                    batch_size=int(props.get("BatchSize", 10)),
                    partial_failures="ReportBatchItemFailures" in response_types,
                )
            )
        return triggers

    def rule_triggers(self) -> list[RuleTrigger]:
        """EventBridge rules that invoke a function, with their resolved patterns."""
        rules = [
            RuleTrigger(
                function=function, name=f"{function}{name}", pattern=self.resolve(p["Pattern"])
            )
            for function, name, p in self._events("EventBridgeRule")
        ]
        rules += [
            RuleTrigger(
                function=function, name=f"{function}{name}", pattern=self.resolve(p["Pattern"])
            )
            for function, name, p in self._events("CloudWatchEvent")
        ]
        for logical_id, resource in self.of_type("AWS::Events::Rule").items():
            props = resource.get("Properties") or {}
            if "EventPattern" not in props:
                continue
            for target in props.get("Targets") or []:
                arn = target.get("Arn")
                if isinstance(arn, dict) and "Fn::GetAtt" in arn:
                    attr = arn["Fn::GetAtt"]
                    function = attr.split(".")[0] if isinstance(attr, str) else attr[0]
                    if function in self.resources:
                        rules.append(
                            RuleTrigger(
                                function=str(function),
                                name=logical_id,
                                pattern=self.resolve(props["EventPattern"]),
                            )
                        )
        return rules

    def schedule_triggers(self) -> list[ScheduleTrigger]:
        """``Schedule``/``ScheduleV2`` events with ``rate(...)`` expressions."""
        triggers = []
        for kind in ("Schedule", "ScheduleV2"):
            for function, name, props in self._events(kind):
                expression = props.get("Schedule") or props.get("ScheduleExpression")
                triggers.append(
                    ScheduleTrigger(
                        function=function,
                        name=f"{function}{name}",
                        every_seconds=_rate_seconds(str(self.resolve(expression))),
                    )
                )
        return triggers


class _NoValue:
    """``AWS::NoValue``: removes the property that holds it."""


_NO_VALUE: Any = _NoValue()


#: Where a built wheel carries ``template.yaml`` (copied there by the repository's
#: ``setup.py``); absent from the checkout and from an editable install.
BUNDLED_TEMPLATE = Path(__file__).resolve().parents[1] / "_bundled" / "template.yaml"


def default_template_path() -> Path:
    """Find ``template.yaml`` when no ``--template`` names one.

    In order: ``./template.yaml`` (the current directory), the copy bundled in the
    installed wheel (:data:`BUNDLED_TEMPLATE`), the source checkout's root (an editable
    install). Returns the first that is a file.

    Raises:
        TemplateError: when none exists.
    """
    candidates = [
        Path.cwd() / "template.yaml",
        BUNDLED_TEMPLATE,
        Path(__file__).resolve().parents[3] / "template.yaml",
    ]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise TemplateError("template.yaml not found (run from the project root or pass --template)")
