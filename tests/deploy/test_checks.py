"""The template checker itself: passes a clean project, catches each planted fault."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from quotagov_tools.deploy.checks import (
    Finding,
    check_events,
    check_handlers,
    check_iam,
    check_template,
    main,
)
from quotagov_tools.deploy.template import load_template

from .conftest import API_EVENT, CLOUDTRAIL_EVENT, FixtureProject


def _iam_with(project: FixtureProject, function: str, statement: dict[str, Any]) -> list[Finding]:
    project.statements(function).append(statement)
    return check_iam(project.template)


JOBS_ARN = {"Fn::GetAtt": ["JobsTable", "Arn"]}


def test_clean_fixture_passes_every_rule(fixture_project: FixtureProject) -> None:
    findings = check_template(fixture_project.root / "template.yaml")
    assert findings == []


# ------------------------------------------------------------------------ IAM


def test_planted_wildcard_action_fails(fixture_project: FixtureProject) -> None:
    planted = {"Sid": "Planted", "Effect": "Allow", "Action": "*", "Resource": JOBS_ARN}
    assert _iam_with(fixture_project, "JobsApiFunction", planted) == [
        Finding("iam", "JobsApiFunction", "statement Planted: wildcard action '*'")
    ]


@pytest.mark.parametrize("action", ["dynamodb:*", "dynamodb:Get*", "dynamodb:?etItem"])
def test_planted_service_and_partial_wildcards_fail(
    fixture_project: FixtureProject, action: str
) -> None:
    planted = {"Sid": "Planted", "Effect": "Allow", "Action": [action], "Resource": JOBS_ARN}
    assert _iam_with(fixture_project, "WorkerFunction", planted) == [
        Finding("iam", "WorkerFunction", f"statement Planted: wildcard action {action!r}")
    ]


def test_star_action_on_star_resource_reports_both_faults(fixture_project: FixtureProject) -> None:
    planted = {"Sid": "Planted", "Effect": "Allow", "Action": "*", "Resource": "*"}
    messages = [f.message for f in _iam_with(fixture_project, "JobsApiFunction", planted)]
    assert messages == [
        "statement Planted: Resource '*' for *, which support resource-level permissions; "
        "name the resources",
        "statement Planted: wildcard action '*'",
    ]


@pytest.mark.parametrize(
    "resource",
    [
        "*",
        {"Fn::If": ["CreateQueue", "*", {"Fn::GetAtt": ["JobsTable", "Arn"]}]},
        {"Fn::Sub": "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:*"},
        {
            "Fn::Join": [
                ":",
                ["arn", "aws", "dynamodb", "eu-west-1", {"Ref": "AWS::AccountId"}, "*"],
            ]
        },
        {"Fn::Sub": ["${Any}", {"Any": "*"}]},
    ],
)
def test_planted_wildcard_resource_fails_for_scoped_actions(
    fixture_project: FixtureProject, resource: Any
) -> None:
    planted = {
        "Sid": "Planted",
        "Effect": "Allow",
        "Action": ["dynamodb:GetItem", "batch:ListServiceJobs"],
        "Resource": resource,
    }
    assert _iam_with(fixture_project, "JobsApiFunction", planted) == [
        Finding(
            "iam",
            "JobsApiFunction",
            "statement Planted: Resource '*' for dynamodb:GetItem, which support "
            "resource-level permissions; name the resources",
        )
    ]


def test_star_resource_is_fine_for_actions_without_resource_level_permissions(
    fixture_project: FixtureProject,
) -> None:
    planted = {
        "Sid": "Reads",
        "Effect": "Allow",
        "Action": ["batch:ListServiceJobs", "batch:DescribeServiceJob"],
        "Resource": "*",
    }
    assert _iam_with(fixture_project, "AuditFunction", planted) == []


def test_scoped_resource_with_a_type_wildcard_passes(fixture_project: FixtureProject) -> None:
    planted = {
        "Sid": "Terminate",
        "Effect": "Allow",
        "Action": "batch:TerminateServiceJob",
        "Resource": "arn:aws:batch:eu-west-1:111122223333:service-job/*",
    }
    assert _iam_with(fixture_project, "WorkerFunction", planted) == []


@pytest.mark.parametrize(
    ("action", "resource"),
    [
        ("dynamodb:UpdateItem", {"Fn::GetAtt": ["AuditTable", "Arn"]}),
        ("dynamodb:DeleteItem", {"Fn::Sub": "${AuditTable.Arn}"}),
        ("dynamodb:BatchWriteItem", {"Fn::Sub": ["${T}", {"T": {"Fn::GetAtt": "AuditTable.Arn"}}]}),
    ],
)
def test_planted_update_or_delete_on_the_audit_table_fails(
    fixture_project: FixtureProject, action: str, resource: Any
) -> None:
    planted = {"Sid": "Planted", "Effect": "Allow", "Action": [action], "Resource": resource}
    assert _iam_with(fixture_project, "AuditFunction", planted) == [
        Finding(
            "iam", "AuditFunction", f"statement Planted: {action} on append-only table AuditTable"
        )
    ]


def test_update_item_on_another_table_is_allowed(fixture_project: FixtureProject) -> None:
    planted = {
        "Sid": "Jobs",
        "Effect": "Allow",
        "Action": "dynamodb:UpdateItem",
        "Resource": JOBS_ARN,
    }
    assert _iam_with(fixture_project, "AuditFunction", planted) == []


def test_planted_update_service_job_outside_the_apply_function_fails(
    fixture_project: FixtureProject,
) -> None:
    planted = {
        "Sid": "Planted",
        "Effect": "Allow",
        "Action": "batch:UpdateServiceJob",
        "Resource": "arn:aws:batch:eu-west-1:111122223333:service-job/*",
    }
    assert _iam_with(fixture_project, "JobsApiFunction", planted) == [
        Finding(
            "iam",
            "JobsApiFunction",
            "statement Planted: batch:UpdateServiceJob is reserved for ApplyDecisionsFunction",
        )
    ]


@pytest.mark.parametrize(
    ("policy", "described"),
    [
        (
            {"DynamoDBCrudPolicy": {"TableName": {"Ref": "AuditTable"}}},
            "SAM policy template DynamoDBCrudPolicy",
        ),
        ("AmazonDynamoDBFullAccess", "managed policy AmazonDynamoDBFullAccess"),
    ],
)
def test_policies_the_checker_cannot_see_into_fail(
    fixture_project: FixtureProject, policy: Any, described: str
) -> None:
    fixture_project.template["Resources"]["JobsApiFunction"]["Properties"]["Policies"].append(
        policy
    )
    assert check_iam(fixture_project.template) == [
        Finding(
            "iam",
            "JobsApiFunction",
            f"{described}: write the statements out so they can be checked",
        )
    ]


def test_not_action_and_not_resource_fail(fixture_project: FixtureProject) -> None:
    planted = {
        "Sid": "Planted",
        "Effect": "Allow",
        "NotAction": "iam:*",
        "NotResource": "arn:aws:iam::111122223333:role/admin",
    }
    messages = [f.message for f in _iam_with(fixture_project, "WorkerFunction", planted)]
    assert messages == [
        "statement Planted: NotAction grants everything not listed",
        "statement Planted: NotResource grants everything not listed",
        "statement Planted: actions must be listed as literal strings",
    ]


def test_iam_resources_outside_functions_are_checked(fixture_project: FixtureProject) -> None:
    fixture_project.template["Resources"]["ExtraPolicy"] = {
        "Type": "AWS::IAM::Policy",
        "Properties": {
            "PolicyDocument": {
                "Statement": [{"Sid": "X", "Effect": "Allow", "Action": "sqs:*", "Resource": "*"}]
            }
        },
    }
    messages = [f"{f.resource}: {f.message}" for f in check_iam(fixture_project.template)]
    assert messages == [
        "ExtraPolicy: statement X: Resource '*' for sqs:*, which support resource-level "
        "permissions; name the resources",
        "ExtraPolicy: statement X: wildcard action 'sqs:*'",
    ]


# ------------------------------------------------------------------------ handlers


def _handlers(project: FixtureProject) -> list[Finding]:
    return check_handlers(project.template, project.root, python=sys.executable)


def test_missing_handler_module_fails(fixture_project: FixtureProject) -> None:
    (fixture_project.handlers / "worker.py").unlink()
    assert _handlers(fixture_project) == [
        Finding(
            "handler",
            "WorkerFunction",
            "cannot import fakeapp.handlers.worker: ModuleNotFoundError: "
            "No module named 'fakeapp.handlers.worker'",
        )
    ]


def test_missing_or_non_callable_handler_attribute_fails(fixture_project: FixtureProject) -> None:
    (fixture_project.handlers / "worker.py").write_text("def main(event, context): ...\n")
    (fixture_project.handlers / "audit_trail.py").write_text("handler = 'not a function'\n")
    assert _handlers(fixture_project) == [
        Finding(
            "handler", "AuditFunction", "fakeapp.handlers.audit_trail has no callable 'handler'"
        ),
        Finding("handler", "WorkerFunction", "fakeapp.handlers.worker has no callable 'handler'"),
    ]


def test_handler_failing_at_import_time_fails(fixture_project: FixtureProject) -> None:
    (fixture_project.handlers / "jobs_api.py").write_text(
        "import os\nTABLE = os.environ['JOBS_TABLE']\nMODE = os.environ['MODE']\n"
        "import fakeapp.not_shipped\n" + "def handler(event, context): ...\n"
    )
    assert _handlers(fixture_project) == [
        Finding(
            "handler",
            "JobsApiFunction",
            "cannot import fakeapp.handlers.jobs_api: ModuleNotFoundError: "
            "No module named 'fakeapp.not_shipped'",
        )
    ]


def test_handler_sees_only_its_own_environment(fixture_project: FixtureProject) -> None:
    # WorkerFunction has no JOBS_TABLE: reading it at import time must fail there.
    (fixture_project.handlers / "worker.py").write_text(
        "import os\nTABLE = os.environ['JOBS_TABLE']\ndef handler(event, context): ...\n"
    )
    (fixture_project.handlers / "jobs_api.py").write_text(
        "import os\nassert os.environ['MODE'] == 'strict'\nTABLE = os.environ['JOBS_TABLE']\n"
        "AUDIT = os.environ['AUDIT_TABLE']\ndef handler(event, context): ...\n"
    )
    assert _handlers(fixture_project) == [
        Finding(
            "handler",
            "WorkerFunction",
            "cannot import fakeapp.handlers.worker: KeyError: 'JOBS_TABLE'",
        )
    ]


def test_handler_from_outside_the_code_directory_fails(fixture_project: FixtureProject) -> None:
    properties = fixture_project.template["Resources"]["WorkerFunction"]["Properties"]
    properties["Handler"] = "json.dumps"
    [finding] = _handlers(fixture_project)
    assert finding.resource == "WorkerFunction"
    assert finding.message.startswith("json imports from ")
    assert finding.message.endswith(", outside the code directory")


def test_code_uri_that_is_not_a_directory_fails(fixture_project: FixtureProject) -> None:
    properties = fixture_project.template["Resources"]["WorkerFunction"]["Properties"]
    properties["CodeUri"] = "missing/"
    properties_s3 = fixture_project.template["Resources"]["AuditFunction"]["Properties"]
    properties_s3["CodeUri"] = "s3://bucket/key.zip"
    assert _handlers(fixture_project) == [
        Finding("handler", "AuditFunction", "CodeUri 's3://bucket/key.zip' is not local"),
        Finding(
            "handler",
            "WorkerFunction",
            f"CodeUri {(fixture_project.root / 'missing').resolve()} does not exist",
        ),
    ]


# ------------------------------------------------------------------------ events


def _events(project: FixtureProject) -> list[Finding]:
    return check_events(project.template, project.events)


def test_function_without_sample_event_fails(fixture_project: FixtureProject) -> None:
    (fixture_project.events / "worker.json").unlink()
    # A name that only starts with the module name is not its event.
    fixture_project.write_event("workers.json", {"Records": []})
    assert _events(fixture_project) == [
        Finding(
            "event", "WorkerFunction", "no sample event events/worker.json or worker-<variant>.json"
        )
    ]


def test_sample_event_of_the_wrong_kind_fails(fixture_project: FixtureProject) -> None:
    fixture_project.write_event("worker-api.json", API_EVENT)
    assert _events(fixture_project) == [
        Finding(
            "event",
            "WorkerFunction",
            "worker-api.json is an event of type Api but the function's triggers are SQS",
        )
    ]


def test_sample_event_missing_the_route_fails(fixture_project: FixtureProject) -> None:
    fixture_project.write_event("jobs_api-post.json", {**API_EVENT, "httpMethod": "POST"})
    fixture_project.write_event(
        "jobs_api-path.json", {**API_EVENT, "resource": None, "path": "/jobs/j-1/escalations"}
    )
    fixture_project.write_event("jobs_api-by-path.json", {**API_EVENT, "resource": None})
    assert _events(fixture_project) == [
        Finding(
            "event",
            "JobsApiFunction",
            "jobs_api-path.json GET /jobs/j-1/escalations hits none of the function's routes "
            "(GET /jobs/{jobId})",
        ),
        Finding(
            "event",
            "JobsApiFunction",
            "jobs_api-post.json POST /jobs/{jobId} hits none of the function's routes "
            "(GET /jobs/{jobId})",
        ),
    ]


def test_payload_2_events_count_as_the_same_api_request(fixture_project: FixtureProject) -> None:
    """HTTP API (v2) and function URL samples of an Api-triggered function are checked
    against its routes like REST ones."""
    v2 = {
        "version": "2.0",
        "rawPath": "/jobs/j-1",
        "requestContext": {"http": {"method": "GET", "path": "/jobs/j-1"}},
        "body": None,
        "isBase64Encoded": False,
    }
    fixture_project.write_event("jobs_api-v2.json", v2)
    fixture_project.write_event(
        "jobs_api-v2-post.json", {**v2, "requestContext": {"http": {"method": "POST"}}}
    )
    assert _events(fixture_project) == [
        Finding(
            "event",
            "JobsApiFunction",
            "jobs_api-v2-post.json POST /jobs/j-1 hits none of the function's routes "
            "(GET /jobs/{jobId})",
        )
    ]


def test_eventbridge_sample_must_match_the_rule_pattern(fixture_project: FixtureProject) -> None:
    other_call = {
        **CLOUDTRAIL_EVENT,
        "detail": {"eventName": "SubmitServiceJob", "eventSource": "x"},
    }
    fixture_project.write_event("audit_trail-submit.json", other_call)
    fixture_project.write_event("audit_trail-broken.json", ["not", "an", "object"])  # type: ignore[arg-type]
    (fixture_project.events / "audit_trail-truncated.json").write_text('{"detail-type": ')
    messages = [f.message for f in _events(fixture_project)]
    assert messages[0] == "audit_trail-broken.json: not a JSON object"
    assert (
        messages[1]
        == "audit_trail-submit.json matches none of the function's EventBridge rule patterns"
    )
    assert messages[2].startswith("audit_trail-truncated.json: not JSON (")
    assert len(messages) == 3


# ------------------------------------------------------------------------ command line


def test_command_line_reports_a_planted_wildcard_and_exits_1(
    fixture_project: FixtureProject, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture_project.statements("WorkerFunction").append(
        {
            "Sid": "Planted",
            "Effect": "Allow",
            "Action": "sqs:*",
            "Resource": {"Fn::GetAtt": ["Queue", "Arn"]},
        }
    )
    path = fixture_project.root / "template.yaml"
    path.write_text(_dump(fixture_project.template), encoding="utf-8")
    assert main([str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "[iam] WorkerFunction: statement Planted: wildcard action 'sqs:*'",
        f"{path}: 4 functions, 1 findings: FAILED",
    ]


def test_command_line_passes_a_clean_template_and_rejects_a_missing_one(
    fixture_project: FixtureProject, capsys: pytest.CaptureFixture[str]
) -> None:
    path = fixture_project.root / "template.yaml"
    assert main([str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: 4 functions, 0 findings: passed\n"
    assert main([str(fixture_project.root / "nope.yaml")]) == 2
    assert "cannot read template" in capsys.readouterr().err


def _dump(template: dict[str, Any]) -> str:
    """The template back as YAML (long-form intrinsics are valid CloudFormation too)."""
    return yaml.safe_dump(template, sort_keys=False)


def test_dump_round_trip_keeps_the_fixture(fixture_project: FixtureProject, tmp_path: Path) -> None:
    copy = tmp_path / "copy.yaml"
    copy.write_text(_dump(fixture_project.template), encoding="utf-8")
    assert load_template(copy) == fixture_project.template
