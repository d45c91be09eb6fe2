"""The ``operations`` rule: operators hear about trouble, and logs do not pile up forever.

Generic over the template, so functions, queues and APIs added later are covered:

- every queue that is a **dead-letter target** (a queue's ``RedrivePolicy``
  ``deadLetterTargetArn``, a function's ``EventInvokeConfig`` ``OnFailure`` SQS
  destination, a SAM event's ``DeadLetterConfig`` / ``DestinationConfig.OnFailure``)
  has an ``AWS::CloudWatch::Alarm`` on its ``AWS/SQS``
  ``ApproximateNumberOfMessagesVisible`` (dimension ``QueueName`` naming the queue)
  that fires on the first message (``> 0`` or ``>= 1``) and notifies someone
  (``AlarmActions``);
- every function has such alarms on its ``AWS/Lambda`` ``Errors`` and ``Throttles``
  (dimension ``FunctionName``);
- every function writes to a log group with ``RetentionInDays``: its
  ``LoggingConfig.LogGroup`` names an ``AWS::Logs::LogGroup`` of the template, or a log
  group's ``LogGroupName`` refers to the function (``/aws/lambda/${Function}``);
- every API stage (``AWS::Serverless::Api``, ``AWS::ApiGateway::Stage``) has access
  logs (``AccessLogSetting.DestinationArn``) going to a log group with retention;
  a function with an ``Api`` event but no ``RestApiId`` (SAM's implicit API, which
  cannot have them) is a finding;
- the template has at least one ``AWS::CloudWatch::Dashboard``.

Rule sources: CloudWatch alarm and Lambda/SQS metric names from the CloudWatch user
guide ("AWS services that publish CloudWatch metrics"); SAM's ``LoggingConfig``,
``AccessLogSetting`` and event ``DeadLetterConfig`` from the SAM specification.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from quotagov_tools.deploy.checks.findings import Finding
from quotagov_tools.deploy.template import (
    FUNCTION_TYPE,
    function_property,
    references,
    resources_of_type,
)

ALARM_TYPE = "AWS::CloudWatch::Alarm"
LOG_GROUP_TYPE = "AWS::Logs::LogGroup"
_FIRST_MESSAGE = {("GreaterThanThreshold", 0.0), ("GreaterThanOrEqualToThreshold", 1.0)}


def check_operations(template: Mapping[str, Any]) -> list[Finding]:
    """Every ``operations`` finding of ``template`` (sorted); empty when it passes."""
    alarms = [_Alarm(props) for props in _properties_of(template, ALARM_TYPE)]
    findings: list[Finding] = []
    depth = ("AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName")
    for queue in sorted(dead_letter_queues(template)):
        if not any(a.watches(*depth, queue) for a in alarms):
            findings.append(
                Finding(
                    "operations",
                    queue,
                    "dead-letter target without an alarm on ApproximateNumberOfMessagesVisible > 0 "
                    "that notifies someone",
                )
            )
    retained = _retained_log_groups(template)
    for function in resources_of_type(template, FUNCTION_TYPE):
        for metric in ("Errors", "Throttles"):
            if not any(a.watches("AWS/Lambda", metric, "FunctionName", function) for a in alarms):
                findings.append(
                    Finding("operations", function, f"no alarm on AWS/Lambda {metric} > 0")
                )
        if not _has_retained_logs(template, function, retained):
            findings.append(
                Finding(
                    "operations",
                    function,
                    "no log group with RetentionInDays (LoggingConfig.LogGroup or "
                    "/aws/lambda/<function>)",
                )
            )
    findings.extend(_stage_findings(template, retained))
    if not resources_of_type(template, "AWS::CloudWatch::Dashboard"):
        findings.append(Finding("operations", "(template)", "no AWS::CloudWatch::Dashboard"))
    return sorted(findings)


class _Alarm:
    """What matters of one alarm: metric, dimension targets, threshold, actions."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        self.namespace = props.get("Namespace")
        self.metric = props.get("MetricName")
        self.dimensions = {
            str(d.get("Name")): set(references(d.get("Value")))
            for d in props.get("Dimensions") or []
            if isinstance(d, Mapping)
        }
        try:
            threshold = float(props.get("Threshold", "nan"))
        except (TypeError, ValueError):
            threshold = float("nan")
        self.first_event = (str(props.get("ComparisonOperator")), threshold) in _FIRST_MESSAGE
        self.notifies = bool(props.get("AlarmActions"))

    def watches(self, namespace: str, metric: str, dimension: str, target: str) -> bool:
        """True when this alarm fires on the first ``metric`` of ``target`` and notifies."""
        return (
            self.namespace == namespace
            and self.metric == metric
            and target in self.dimensions.get(dimension, set())
            and self.first_event
            and self.notifies
        )


def _properties_of(template: Mapping[str, Any], resource_type: str) -> Iterator[Mapping[str, Any]]:
    for resource in resources_of_type(template, resource_type).values():
        yield resource.get("Properties") or {}


def _queue_of(value: Any) -> set[str]:
    """The queue logical ids an ARN/URL value refers to."""
    return set(references(value))


def dead_letter_queues(template: Mapping[str, Any]) -> set[str]:
    """Logical ids of every queue the template uses as a dead-letter or failure target."""
    queues: set[str] = set()
    for props in _properties_of(template, "AWS::SQS::Queue"):
        redrive = props.get("RedrivePolicy")
        if isinstance(redrive, Mapping):
            queues |= _queue_of(redrive.get("deadLetterTargetArn"))
    for function in resources_of_type(template, FUNCTION_TYPE):
        invoke = function_property(template, function, "EventInvokeConfig") or {}
        on_failure = ((invoke.get("DestinationConfig") or {}).get("OnFailure")) or {}
        if on_failure.get("Type") == "SQS":
            queues |= _queue_of(on_failure.get("Destination"))
        events = function_property(template, function, "Events") or {}
        for name, event in events.items():
            props = (event or {}).get("Properties") or {}
            dead_letter = props.get("DeadLetterConfig") or {}
            if dead_letter.get("Arn") is not None:
                queues |= _queue_of(dead_letter["Arn"])
            elif dead_letter.get("Type") == "SQS":
                # SAM creates the queue: QueueLogicalId, else <function><event>Queue.
                queues.add(str(dead_letter.get("QueueLogicalId") or f"{function}{name}Queue"))
            failure = ((props.get("DestinationConfig") or {}).get("OnFailure")) or {}
            if failure.get("Destination") is not None:
                queues |= _queue_of(failure["Destination"])
    sqs = set(resources_of_type(template, "AWS::SQS::Queue"))
    # Only SQS queues (an OnFailure may be an SNS topic or a function).
    return {q for q in queues if q in sqs or q not in template["Resources"]}


def _retained_log_groups(template: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Log groups with ``RetentionInDays``, by logical id."""
    return {
        logical_id: resource.get("Properties") or {}
        for logical_id, resource in resources_of_type(template, LOG_GROUP_TYPE).items()
        if (resource.get("Properties") or {}).get("RetentionInDays") is not None
    }


def _has_retained_logs(
    template: Mapping[str, Any], function: str, retained: Mapping[str, Mapping[str, Any]]
) -> bool:
    logging_config = function_property(template, function, "LoggingConfig") or {}
    if set(references(logging_config.get("LogGroup"))) & set(retained):
        return True
    return any(function in set(references(p.get("LogGroupName"))) for p in retained.values())


def _stage_findings(
    template: Mapping[str, Any], retained: Mapping[str, Mapping[str, Any]]
) -> Iterator[Finding]:
    stages = {
        **resources_of_type(template, "AWS::Serverless::Api"),
        **resources_of_type(template, "AWS::ApiGateway::Stage"),
    }
    for logical_id, resource in stages.items():
        setting = (resource.get("Properties") or {}).get("AccessLogSetting") or {}
        if not set(references(setting.get("DestinationArn"))) & set(retained):
            yield Finding(
                "operations",
                logical_id,
                "API stage without access logs (AccessLogSetting.DestinationArn) to a log "
                "group with RetentionInDays",
            )
    for function in resources_of_type(template, FUNCTION_TYPE):
        for name, event in (function_property(template, function, "Events") or {}).items():
            props = (event or {}).get("Properties") or {}
            if (event or {}).get("Type") == "Api" and "RestApiId" not in props:
                yield Finding(
                    "operations",
                    function,
                    f"event {name}: an Api event without RestApiId uses SAM's implicit API, "
                    "which has no access logs",
                )
