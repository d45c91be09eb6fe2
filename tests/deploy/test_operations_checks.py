"""The ``operations`` rule: planted on the fixture project, then on the real template."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from quotagov_tools.deploy.checks import Finding, check_operations, dead_letter_queues
from quotagov_tools.deploy.checks.run import default_template
from quotagov_tools.deploy.checks.seals import queue_seal
from quotagov_tools.deploy.template import FUNCTION_TYPE, load_template, resources_of_type

from .conftest import FixtureProject

ROOT = Path(__file__).resolve().parents[2]


def _resources(project: FixtureProject) -> dict[str, Any]:
    resources: dict[str, Any] = project.template["Resources"]
    return resources


def test_clean_fixture_has_no_operations_findings(fixture_project: FixtureProject) -> None:
    assert check_operations(fixture_project.template) == []
    assert dead_letter_queues(fixture_project.template) == {"Dlq"}


def test_a_dead_letter_queue_without_alarm_is_a_finding(fixture_project: FixtureProject) -> None:
    del _resources(fixture_project)["DlqAlarm"]
    assert check_operations(fixture_project.template) == [
        Finding(
            "operations",
            "Dlq",
            "dead-letter target without an alarm on ApproximateNumberOfMessagesVisible > 0 "
            "that notifies someone",
        )
    ]


def test_an_alarm_that_waits_for_five_messages_or_tells_nobody_does_not_count(
    fixture_project: FixtureProject,
) -> None:
    alarm = _resources(fixture_project)["DlqAlarm"]["Properties"]
    alarm["Threshold"] = 5
    assert [f.resource for f in check_operations(fixture_project.template)] == ["Dlq"]
    alarm["Threshold"] = 0
    del alarm["AlarmActions"]
    assert [f.resource for f in check_operations(fixture_project.template)] == ["Dlq"]
    alarm["AlarmActions"] = ["arn:aws:sns:eu-west-1:111122223333:oncall"]
    alarm["ComparisonOperator"] = "GreaterThanOrEqualToThreshold"
    alarm["Threshold"] = 1
    assert check_operations(fixture_project.template) == []


def test_a_new_function_without_alarms_or_logs_is_caught(fixture_project: FixtureProject) -> None:
    """Generic over functions: one added by another branch must bring its own."""
    resources = _resources(fixture_project)
    resources["DigestFunction"] = copy.deepcopy(resources["WorkerFunction"])
    assert check_operations(fixture_project.template) == [
        Finding("operations", "DigestFunction", "no alarm on AWS/Lambda Errors > 0"),
        Finding("operations", "DigestFunction", "no alarm on AWS/Lambda Throttles > 0"),
        Finding(
            "operations",
            "DigestFunction",
            "no log group with RetentionInDays (LoggingConfig.LogGroup or /aws/lambda/<function>)",
        ),
    ]


def test_logging_config_log_group_counts_only_with_retention(
    fixture_project: FixtureProject,
) -> None:
    resources = _resources(fixture_project)
    del resources["WorkerFunctionLogs"]
    resources["WorkerLogGroup"] = {"Type": "AWS::Logs::LogGroup", "Properties": {}}
    worker = resources["WorkerFunction"]["Properties"]
    worker["LoggingConfig"] = {"LogGroup": {"Ref": "WorkerLogGroup"}}
    assert [f.resource for f in check_operations(fixture_project.template)] == ["WorkerFunction"]
    resources["WorkerLogGroup"]["Properties"]["RetentionInDays"] = {"Ref": "LogRetentionDays"}
    assert check_operations(fixture_project.template) == []


def test_failure_destinations_and_event_dead_letters_are_dead_letter_targets(
    fixture_project: FixtureProject,
) -> None:
    resources = _resources(fixture_project)
    resources["Failed"] = {"Type": "AWS::SQS::Queue"}
    resources["AuditFunction"]["Properties"]["EventInvokeConfig"] = {
        "DestinationConfig": {
            "OnFailure": {"Type": "SQS", "Destination": {"Fn::GetAtt": ["Failed", "Arn"]}}
        }
    }
    calls = resources["AuditFunction"]["Properties"]["Events"]["Calls"]["Properties"]
    calls["DeadLetterConfig"] = {"Type": "SQS"}  # SAM makes AuditFunctionCallsQueue
    assert dead_letter_queues(fixture_project.template) == {
        "Dlq",
        "Failed",
        "AuditFunctionCallsQueue",
    }
    assert {f.resource for f in check_operations(fixture_project.template)} == {
        "Failed",
        "AuditFunctionCallsQueue",
    }


def test_api_stages_need_access_logs_with_retention(fixture_project: FixtureProject) -> None:
    resources = _resources(fixture_project)
    api = resources["Api"]["Properties"]
    del api["AccessLogSetting"]
    resources["Stage"] = {
        "Type": "AWS::ApiGateway::Stage",
        "Properties": {"AccessLogSetting": {"DestinationArn": "arn:aws:logs:r:1:log-group:x"}},
    }
    message = (
        "API stage without access logs (AccessLogSetting.DestinationArn) to a log group "
        "with RetentionInDays"
    )
    assert check_operations(fixture_project.template) == [
        Finding("operations", "Api", message),
        Finding("operations", "Stage", message),
    ]


def test_implicit_api_and_missing_dashboard_are_findings(fixture_project: FixtureProject) -> None:
    resources = _resources(fixture_project)
    del resources["Dashboard"]
    get = resources["JobsApiFunction"]["Properties"]["Events"]["Get"]["Properties"]
    del get["RestApiId"]
    assert check_operations(fixture_project.template) == [
        Finding("operations", "(template)", "no AWS::CloudWatch::Dashboard"),
        Finding(
            "operations",
            "JobsApiFunction",
            "event Get: an Api event without RestApiId uses SAM's implicit API, "
            "which has no access logs",
        ),
    ]


# ------------------------------------------------------------------ the project itself


def test_project_template_alarms_every_dead_letter_target_and_function() -> None:
    """On the built template (``make test`` builds it first)."""
    template = load_template(default_template(ROOT))
    assert check_operations(template) == []
    assert dead_letter_queues(template) >= {
        "SubmissionDeadLetterQueue",
        "FailedEventsQueue",
        "JobStateEventsDeadLetterQueue",
        "AuditEventsDeadLetterQueue",
    }
    resources = template["Resources"]
    for function in resources_of_type(template, FUNCTION_TYPE):
        group = resources[f"{function}LogGroup"]["Properties"]
        assert group["RetentionInDays"] == {"Ref": "LogRetentionDays"}


def test_project_alarms_notify_the_alarm_topic_and_someone_must_be_named() -> None:
    template = load_template(ROOT / "template.yaml")
    target = {"Fn::If": ["CreateAlarmTopic", {"Ref": "AlarmTopic"}, {"Ref": "AlarmTopicArn"}]}
    alarms = resources_of_type(template, "AWS::CloudWatch::Alarm")
    assert alarms
    for alarm in alarms.values():
        assert alarm["Properties"]["AlarmActions"] == [target]
    assert "RiskAlertsNotPostedAlarm" in alarms
    stale = alarms["StaleSubmissionsFailedAlarm"]["Properties"]
    assert (stale["Namespace"], stale["MetricName"]) == ("quotagov", "SubmissionsFailedStale")
    risk = alarms["RiskAlertsNotPostedAlarm"]["Properties"]
    assert (risk["Namespace"], risk["MetricName"]) == ("quotagov", "RiskAlertsNotPosted")
    # the dimension Powertools Metrics adds: service = POWERTOOLS_SERVICE_NAME
    service = template["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]
    assert risk["Dimensions"] == [{"Name": "service", "Value": service}]
    rule = template["Rules"]["AlarmsReachSomeone"]["Assertions"][0]["Assert"]
    assert "AlarmEmail" in str(rule)
    assert "AlarmTopicArn" in str(rule)
    topic = template["Resources"]["AlarmTopic"]
    assert topic["Condition"] == "CreateAlarmTopic"


@pytest.mark.parametrize(
    ("alarm", "metric"),
    [
        ("AuditEventsRejectedAlarm", "AuditEventsRejected"),
        ("HandoffsDroppedAlarm", "HandoffsDropped"),
        ("UnauthenticatedMessagesAlarm", "UnauthenticatedMessages"),
        ("AuditDigestsRefusedAlarm", "AuditDigestsRefused"),
    ],
)
def test_inputs_dropped_without_a_retry_are_alarmed_on_the_first(alarm: str, metric: str) -> None:
    """What a function counts and drops (a retry cannot fix it) parks in no queue, so
    the count itself is alarmed: a rejected CloudTrail event, an unusable hand-off, a
    chain the digest function refuses."""
    template = load_template(ROOT / "template.yaml")
    properties = template["Resources"][alarm]["Properties"]
    service = template["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]
    namespace = template["Globals"]["Function"]["Environment"]["Variables"][
        "POWERTOOLS_METRICS_NAMESPACE"
    ]
    assert (properties["Namespace"], properties["MetricName"]) == (namespace, metric)
    assert properties["Dimensions"] == [{"Name": "service", "Value": service}]
    assert (properties["Statistic"], properties["Threshold"]) == ("Sum", 0)
    assert properties["ComparisonOperator"] == "GreaterThanThreshold"
    assert properties["TreatMissingData"] == "notBreaching"
    source = (ROOT / "src/quotagov/handlers").glob("*.py")
    assert any(f'"{metric}"' in path.read_text(encoding="utf-8") for path in source)


def _dashboard_body(template: dict[str, Any]) -> dict[str, Any]:
    sub = template["Resources"]["OperationsDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    text, variables = sub
    for name in [*variables, "AWS::Region"]:
        text = text.replace("${" + name + "}", f"placeholder-{name}")
    body: dict[str, Any] = json.loads(text)
    return body


def test_dashboard_shows_what_issue_19_asks_from_metrics_the_code_emits() -> None:
    template = load_template(ROOT / "template.yaml")
    body = _dashboard_body(template)
    titles = [w["properties"]["title"] for w in body["widgets"]]
    assert titles == [
        "Submissions",
        "Queue wait per share (submit to first start, s)",
        "Preemptions per team",
        "Lost GPU-hours per team",
        "Escalations",
        "Dead-letter and failed-events depth",
    ]
    expressions = [
        m[0]["expression"]
        for w in body["widgets"]
        for m in w["properties"]["metrics"]
        if isinstance(m[0], dict)
    ]
    names = {n for e in expressions for n in re.findall(r'MetricName="(\w+)"', e)}
    handlers = ROOT / "src" / "quotagov" / "handlers"
    source = "\n".join(p.read_text() for p in handlers.rglob("*.py"))
    for name in sorted(names):
        assert f'"{name}"' in source, f"the dashboard shows {name}, which no handler emits"
    depth = body["widgets"][-1]["properties"]["metrics"]
    assert len(depth) == len(dead_letter_queues(template))


def test_escalation_requests_are_one_metric_shown_by_the_dimensions_emitted() -> None:
    """One metric per escalation request (no second name counting the same event), and
    the dashboard searches it by exactly the dimensions the handler writes."""
    from quotagov.handlers.escalation_metrics import REQUESTED, REQUESTED_DIMENSIONS

    body = _dashboard_body(load_template(ROOT / "template.yaml"))
    [widget] = [w for w in body["widgets"] if w["properties"]["title"] == "Escalations"]
    searches = [m[0]["expression"] for m in widget["properties"]["metrics"]]
    schema = "{" + ",".join(("quotagov", "service", *REQUESTED_DIMENSIONS)) + "}"
    expected = f"SEARCH('{schema} MetricName=" + f'"{REQUESTED}"' + "', 'Sum', 3600)"
    assert expected in searches
    handlers = ROOT / "src" / "quotagov" / "handlers"
    source = "\n".join(p.read_text() for p in handlers.rglob("*.py"))
    assert "EscalationRequests" not in source


def test_only_the_functions_failing_over_to_failed_events_may_write_to_it() -> None:
    """redrive replays FailedEventsQueue into the functions: nobody else may write there."""
    template = load_template(ROOT / "template.yaml")
    resources = template["Resources"]
    senders = {
        f"{function}Role"
        for function in resources_of_type(template, FUNCTION_TYPE)
        if (
            (
                (resources[function]["Properties"].get("EventInvokeConfig") or {}).get(
                    "DestinationConfig"
                )
                or {}
            )
            .get("OnFailure", {})
            .get("Destination")
            == {"Fn::GetAtt": ["FailedEventsQueue", "Arn"]}
        )
    }
    assert senders == {"JobStateFunctionRole", "AuditFunctionRole", "AuditDigestFunctionRole"}
    allowed, consumers = queue_seal(template, "FailedEventsQueue")
    assert allowed == senders
    # replayed by `quotagov redrive --queue failed-events`: the operator role alone reads it
    assert consumers == {"OperatorRoleArn"}


@pytest.mark.parametrize("environment", ["default", "prod"])
def test_each_samconfig_environment_names_who_gets_the_alarms(environment: str) -> None:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())
    overrides = config[environment]["deploy"]["parameters"]["parameter_overrides"]
    given = {item.split("=", 1)[0] for item in overrides if item.split("=", 1)[1]}
    assert given & {"AlarmEmail", "AlarmTopicArn"}
