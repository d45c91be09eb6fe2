"""The project's template: the checker's rules, and what the installer must provide.

``make test`` runs ``sam build`` (target ``lint-template``) before the suite, so
:func:`test_built_template_passes_every_check` walks ``.aws-sam/build/template.yaml``:
handler paths import from the build artifacts, every function has sample events, and
every IAM statement passes the least-privilege rules. Without a build it walks
``template.yaml``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from quotagov.governance.pacing import SUBMIT_CALLS_PER_SECOND
from quotagov.policy import load_policy
from quotagov.settings import Settings
from quotagov_tools.deploy.checks import check_iam, check_template, default_template
from quotagov_tools.deploy.template import (
    FUNCTION_TYPE,
    function_property,
    function_statements,
    load_template,
    references,
    resources_of_type,
)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
GOVERNED_QUEUE = {"Fn::If": ["CreateBatch", {"Ref": "GovernedJobQueue"}, {"Ref": "JobQueueArn"}]}


def _properties(logical_id: str) -> dict[str, Any]:
    properties: dict[str, Any] = RESOURCES[logical_id]["Properties"]
    return properties


def _statements(function: str) -> list[dict[str, Any]]:
    return function_statements(TEMPLATE, function)


def _granted(function: str) -> set[tuple[str, str]]:
    """(action, referenced logical id or literal resource) pairs the function holds."""
    pairs = set()
    for statement in _statements(function):
        actions = (
            statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        )
        resources = (
            statement["Resource"]
            if isinstance(statement["Resource"], list)
            else [statement["Resource"]]
        )
        for resource in resources:
            targets = {"*"} if resource == "*" else set(references(resource))
            pairs.update((action, target) for action in actions for target in targets)
    return pairs


# ------------------------------------------------------------------------ the checker


def test_built_template_passes_every_check() -> None:
    """Needs the handler modules and events of every function (merged from all branches)."""
    path = default_template(ROOT)
    findings = [str(finding) for finding in check_template(path)]
    assert findings == [], f"{path} fails the template checks"


@pytest.mark.parametrize("path", [ROOT / "template.yaml", default_template(ROOT)])
def test_iam_statements_pass_the_least_privilege_rules(path: Path) -> None:
    assert check_iam(load_template(path)) == []


# ------------------------------------------------------------------------ functions


def _architecture_functions() -> dict[str, str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `(\w+Function)` \| `([\w.]+)` \|", text, flags=re.MULTILINE))


def test_functions_and_handlers_are_those_of_the_architecture_page() -> None:
    functions = resources_of_type(TEMPLATE, FUNCTION_TYPE)
    handlers = {name: function_property(TEMPLATE, name, "Handler") for name in functions}
    assert handlers == _architecture_functions()
    assert len(handlers) == 10  # + ApplyDecisions (15), Reconciler (19), AuditDigest (14)


@pytest.mark.parametrize("function", sorted(resources_of_type(TEMPLATE, FUNCTION_TYPE)))
def test_function_runtime_is_arm64_python_311_or_newer_with_the_pinned_layer(function: str) -> None:
    runtime = function_property(TEMPLATE, function, "Runtime")
    assert re.fullmatch(r"python3\.(1[1-9])", runtime)
    assert function_property(TEMPLATE, function, "Architectures") == ["arm64"]
    assert function_property(TEMPLATE, function, "Tracing") == "Active"
    assert function_property(TEMPLATE, function, "Layers") == [{"Ref": "DependenciesLayer"}]
    layer = RESOURCES["DependenciesLayer"]
    assert layer["Metadata"] == {"BuildMethod": runtime, "BuildArchitecture": "arm64"}


@pytest.mark.parametrize("function", sorted(resources_of_type(TEMPLATE, FUNCTION_TYPE)))
def test_environment_names_are_settings_and_backed_by_grants(function: str) -> None:
    variables = function_property(TEMPLATE, function, "Environment")["Variables"]
    settings = {name.upper() for name in Settings.__dataclass_fields__}
    powertools = {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE"}
    assert set(variables) <= settings | powertools
    assert powertools <= set(variables)
    granted = {target for _action, target in _granted(function)}
    # SAM gives a function the rights to poll the queues of its SQS event sources.
    events = function_property(TEMPLATE, function, "Events") or {}
    granted |= {
        target
        for event in events.values()
        if event.get("Type") == "SQS"
        for target in references(event["Properties"]["Queue"])
    }
    for name, value in variables.items():
        for target in references(value):
            kind = RESOURCES.get(target, {}).get("Type", "")
            if kind.startswith(("AWS::DynamoDB", "AWS::SQS", "AWS::SSM", "AWS::SecretsManager")):
                assert target in granted, f"{function}: {name} names {target} but no grant uses it"


def test_slack_secret_only_through_secrets_manager() -> None:
    secret = _properties("SlackSecret")
    assert "SecretString" not in secret
    assert set(TEMPLATE["Parameters"]).isdisjoint({"SlackBotToken", "SlackSigningSecret"})
    secret_of = {
        "SLACK_SECRET_ARN": "SlackSecret",
        "SLACK_SIGNING_SECRET_ARN": "SlackSigningSecret",
    }
    for function in resources_of_type(TEMPLATE, FUNCTION_TYPE):
        variables = function_property(TEMPLATE, function, "Environment")["Variables"]
        named = {secret for variable, secret in secret_of.items() if variable in variables}
        targets = {t for a, t in _granted(function) if a.startswith("secretsmanager:")}
        assert targets == named, function
    # The signing secret (whoever reads it can forge a click): the Slack function only.
    readers = [
        f
        for f in resources_of_type(TEMPLATE, FUNCTION_TYPE)
        if ("secretsmanager:GetSecretValue", "SlackSigningSecret") in _granted(f)
    ]
    assert readers == ["SlackInteractionsFunction"]
    assert ("secretsmanager:GetSecretValue", "SlackSecret") not in _granted(
        "SlackInteractionsFunction"
    )


def test_audit_table_is_put_only_and_update_service_job_only_for_the_apply_function() -> None:
    for function in resources_of_type(TEMPLATE, FUNCTION_TYPE):
        on_audit = {a for a, t in _granted(function) if t == "AuditTable"}
        assert on_audit <= {"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:Query"}
        # One writer: the others hand decisions over the audit queue.
        assert ("dynamodb:PutItem" in on_audit) == (function == "AuditFunction"), function
        hands_over = ("sqs:SendMessage", "AuditQueue") in _granted(function)
        assert hands_over == (function not in {"AuditFunction", "AuditDigestFunction"}), function
        holds_update = any(a == "batch:UpdateServiceJob" for a, _t in _granted(function))
        assert holds_update == (function == "ApplyDecisionsFunction")
    assert {a for a, _t in _granted("AuditFunction")} == {
        # its execution role written out (no managed policy): own logs, X-Ray, its queue,
        # its OnFailure destination
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:ChangeMessageVisibility",
        "sqs:GetQueueAttributes",
        "sqs:SendMessage",
        "dynamodb:PutItem",
        "dynamodb:GetItem",
        "dynamodb:Query",
        "batch:DescribeQuotaShare",
        "batch:ListServiceJobs",
        "batch:DescribeServiceJob",
        "kms:VerifyMac",
        "ssm:GetParameter",
        "ssm:GetParameterHistory",
        "secretsmanager:GetSecretValue",
    }


def test_submit_service_job_names_queue_service_jobs_and_quota_shares() -> None:
    service_jobs = "arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:service-job/*"
    for function in (
        "JobsApiFunction",
        "SubmitWorkerFunction",
        "JobStateFunction",
        "ApplyDecisionsFunction",
    ):
        [statement] = [s for s in _statements(function) if "batch:SubmitServiceJob" in s["Action"]]
        assert statement["Resource"] == [
            GOVERNED_QUEUE,
            {"Fn::Sub": service_jobs},
            {"Fn::Sub": ["${Queue}/quota-share/*", {"Queue": GOVERNED_QUEUE}]},
        ]
        [pass_role] = [s for s in _statements(function) if s["Action"] == "iam:PassRole"]
        assert pass_role["Condition"] == {
            "StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}
        }


# ------------------------------------------------------------------------ state


def _keys(table: str) -> dict[str, str]:
    return {k["AttributeName"]: k["KeyType"] for k in _properties(table)["KeySchema"]}


def _indexes(table: str) -> dict[str, dict[str, str]]:
    return {
        index["IndexName"]: {k["AttributeName"]: k["KeyType"] for k in index["KeySchema"]}
        for index in _properties(table).get("GlobalSecondaryIndexes", [])
    }


def test_tables_have_the_keys_indexes_and_ttl_of_the_architecture_page() -> None:
    assert _keys("JobsTable") == {"pk": "HASH"}
    assert _indexes("JobsTable") == {
        "byBatchJobId": {"batchJobId": "HASH"},
        "byTeam": {"teamKey": "HASH", "createdAt": "RANGE"},
        "byState": {"state": "HASH", "updatedAt": "RANGE"},
    }
    assert _keys("EscalationsTable") == {"pk": "HASH"}
    assert _indexes("EscalationsTable") == {"byStatus": {"status": "HASH", "expiresAt": "RANGE"}}
    assert _keys("AuditTable") == {"pk": "HASH", "sk": "RANGE"}
    assert _indexes("AuditTable") == {}
    assert _keys("IdempotencyTable") == {"id": "HASH"}
    assert _properties("IdempotencyTable")["TimeToLiveSpecification"] == {
        "AttributeName": "expiration",
        "Enabled": True,
    }
    ttl = _properties("EscalationsTable")["TimeToLiveSpecification"]
    assert ttl["Enabled"] is True
    assert ttl["AttributeName"] not in ("expiresAt", "status", "pk")
    types = {
        a["AttributeName"]: a["AttributeType"]
        for a in _properties("EscalationsTable")["AttributeDefinitions"]
    }
    assert types == {"pk": "S", "status": "S", "expiresAt": "N"}
    for table in resources_of_type(TEMPLATE, "AWS::DynamoDB::Table"):
        assert _properties(table)["PointInTimeRecoverySpecification"] == {
            "PointInTimeRecoveryEnabled": True
        }
    for kept in ("AuditTable", "JobsTable", "EscalationsTable"):
        resource = RESOURCES[kept]
        assert resource["DeletionPolicy"] == resource["UpdateReplacePolicy"] == "Retain"
    audit = RESOURCES["AuditTable"]
    assert audit["Properties"]["DeletionProtectionEnabled"] is True


def test_worker_stays_under_batch_submit_rate_and_queue_redrives_to_dlq() -> None:
    worker = _properties("SubmitWorkerFunction")
    [source] = worker["Events"].values()
    assert source["Type"] == "SQS"
    sqs = source["Properties"]
    assert sqs["Queue"] == {"Fn::GetAtt": ["SubmissionQueue", "Arn"]}
    assert sqs["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # The event source, not reserved concurrency, limits the workers (a throttled
    # function returns messages unprocessed, counting towards the DLQ); each worker paces
    # itself, so all of them together stay under the 5 SubmitServiceJob TPS account
    # limit (AWS Batch User Guide, "AWS Batch service quotas",
    # https://docs.aws.amazon.com/batch/latest/userguide/service_limits.html).
    assert "ReservedConcurrentExecutions" not in worker
    concurrency = sqs["ScalingConfig"]["MaximumConcurrency"]
    assert concurrency >= 2  # the lowest value SQS event sources accept
    assert concurrency * SUBMIT_CALLS_PER_SECOND <= 5
    assert sqs["MaximumBatchingWindowInSeconds"] > 0
    queue = _properties("SubmissionQueue")
    assert queue["VisibilityTimeout"] >= 6 * worker["Timeout"]
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": ["SubmissionDeadLetterQueue", "Arn"]},
        "maxReceiveCount": 5,
    }


# ------------------------------------------------------------------------ triggers


def _events(function: str) -> dict[str, Any]:
    events: dict[str, Any] = _properties(function)["Events"]
    return events


def test_api_uses_iam_by_default_and_no_auth_only_for_slack() -> None:
    auth = _properties("Api")["Auth"]
    assert auth["DefaultAuthorizer"] == "AWS_IAM"
    # Slack's form posts arrive base64-encoded: the exact bytes Slack signed.
    assert _properties("Api")["BinaryMediaTypes"] == ["application~1x-www-form-urlencoded"]
    routes = {}
    for function in resources_of_type(TEMPLATE, FUNCTION_TYPE):
        for event in _events(function).values() if "Events" in _properties(function) else []:
            if event["Type"] == "Api":
                p = event["Properties"]
                routes[(p["Method"], p["Path"])] = (function, p.get("Auth", {}).get("Authorizer"))
    assert routes == {
        ("POST", "/jobs"): ("JobsApiFunction", None),
        ("GET", "/jobs"): ("JobsApiFunction", None),
        ("GET", "/jobs/{jobId}"): ("JobsApiFunction", None),
        ("POST", "/jobs/{jobId}/disposition"): ("JobsApiFunction", None),
        ("POST", "/jobs/{jobId}/escalations"): ("EscalationsApiFunction", None),
        ("POST", "/slack/interactions"): ("SlackInteractionsFunction", "NONE"),
    }
    jwt = RESOURCES["JwtApi"]
    assert jwt["Condition"] == "HasUserPool"
    assert jwt["Properties"]["Auth"]["DefaultAuthorizer"] == "CognitoAuthorizer"
    assert "/slack/interactions" not in jwt["Properties"]["DefinitionBody"]["paths"]


def test_job_state_rule_matches_the_governed_queue_with_retries_and_dlq() -> None:
    [rule] = _events("JobStateFunction").values()
    assert rule["Type"] == "EventBridgeRule"
    assert rule["Properties"]["Pattern"] == {
        "source": ["aws.batch"],
        "detail-type": ["Batch Service Job State Change"],
        "detail": {"jobQueue": [GOVERNED_QUEUE]},
    }
    assert rule["Properties"]["DeadLetterConfig"] == {
        "Arn": {"Fn::GetAtt": ["JobStateEventsDeadLetterQueue", "Arn"]}
    }
    assert rule["Properties"]["RetryPolicy"]["MaximumRetryAttempts"] > 0


def test_audit_rule_lists_every_policy_changing_batch_call() -> None:
    rule = _events("AuditFunction")["BatchPolicyChange"]
    pattern = rule["Properties"]["Pattern"]
    assert pattern["source"] == ["aws.batch"]
    assert pattern["detail-type"] == ["AWS API Call via CloudTrail"]
    assert pattern["detail"]["eventSource"] == ["batch.amazonaws.com"]
    nouns = ("QuotaShare", "SchedulingPolicy", "JobQueue", "ServiceEnvironment")
    expected = {f"{verb}{noun}" for noun in nouns for verb in ("Create", "Update", "Delete")}
    expected |= {"UpdateServiceJob", "TerminateServiceJob"}
    expected |= {"SubmitServiceJob"}  # a job submitted around quotagov
    assert sorted(pattern["detail"]["eventName"]) == sorted(expected)
    # Mutating calls reach a rule in the default ENABLED state (Amazon EventBridge User
    # Guide, "AWS service events delivered via AWS CloudTrail",
    # https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-service-event-cloudtrail.html).
    assert "State" not in rule["Properties"]


def test_direct_invocations_of_every_function_reach_the_audit_writer() -> None:
    """CloudTrail data events of Lambda Invoke (a trail logging them), for each function
    of the stack and no other: the writer records those not made by a trigger."""
    rule = _events("AuditFunction")["DirectInvocations"]["Properties"]
    pattern = rule["Pattern"]
    assert (pattern["source"], pattern["detail-type"]) == (
        ["aws.lambda"],
        ["AWS API Call via CloudTrail"],
    )
    assert pattern["detail"]["eventSource"] == ["lambda.amazonaws.com"]
    assert pattern["detail"]["eventName"] == ["Invoke"]
    named = pattern["detail"]["requestParameters"]["functionName"]
    assert sorted(n["Fn::GetAtt"][0] for n in named) == sorted(
        resources_of_type(TEMPLATE, FUNCTION_TYPE)
    )
    assert rule["DeadLetterConfig"] == {
        "Arn": {"Fn::GetAtt": ["AuditEventsDeadLetterQueue", "Arn"]}
    }
    alarm = RESOURCES["DirectInvocationsAlarm"]["Properties"]
    assert (alarm["Namespace"], alarm["MetricName"]) == ("quotagov", "DirectInvocations")


def test_expiry_runs_every_five_minutes() -> None:
    [schedule] = _events("EscalationExpiryFunction").values()
    assert schedule == {"Type": "Schedule", "Properties": {"Schedule": "rate(5 minutes)"}}


# ------------------------------------------------------------------------ policy and Batch


def _default_policy_text() -> str:
    value = _properties("PolicyParameter")["Value"]
    condition, given, default = value["Fn::If"]
    assert (condition, given) == ("HasPolicyDocument", {"Ref": "PolicyDocument"})
    text, variables = default["Fn::Sub"]
    assert variables == {"GovernedQueueArn": GOVERNED_QUEUE}
    return str(text)


def test_default_policy_is_the_walkthrough_example_bound_to_the_governed_queue() -> None:
    example_text = (ROOT / "src" / "quotagov" / "examples" / "policy.yaml").read_text()
    example = load_policy(example_text)
    text = _default_policy_text()
    assert text.count("${GovernedQueueArn}") == 1
    seeded = load_policy(text.replace("${GovernedQueueArn}", example.jobQueue))
    assert seeded == example
    # A CloudFormation parameter value and a standard SSM parameter hold 4 KB at most.
    assert len(text.encode()) + 200 <= 4096
    assert _properties("PolicyParameter")["Tier"] == "Intelligent-Tiering"


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {k[0].lower() + k[1:]: _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def test_created_quota_shares_are_the_example_policy_shares() -> None:
    example = load_policy((ROOT / "src" / "quotagov" / "examples" / "policy.yaml").read_text())
    shares = resources_of_type(TEMPLATE, "AWS::Batch::QuotaShare")
    created = {}
    for share in shares.values():
        assert share["Condition"] == "CreateBatch"
        raw = dict(share["Properties"])
        assert raw.pop("JobQueue") == {"Ref": "GovernedJobQueue"}
        properties = _camel(raw)
        created[properties.pop("quotaShareName")] = properties
    expected = {}
    for share in example.quotaShares:
        configuration = share.batch_configuration()
        assert configuration.pop("state") == "ENABLED"
        expected[share.quotaShareName] = configuration
    assert created == expected
    environment = _properties("GovernedServiceEnvironment")
    assert environment["ServiceEnvironmentType"] == "SAGEMAKER_TRAINING"
    assert environment["CapacityLimits"] == [{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 3}]
    queue = _properties("GovernedJobQueue")
    assert queue["JobQueueType"] == "SAGEMAKER_TRAINING"
    assert queue["SchedulingPolicyArn"] == {"Ref": "GovernedSchedulingPolicy"}
    assert _properties("GovernedSchedulingPolicy")["QuotaSharePolicy"] == {
        "IdleResourceAssignmentStrategy": "FIFO"
    }
    for resource in RESOURCES.values():
        if resource["Type"].startswith("AWS::Batch::"):
            assert resource["Condition"] == "CreateBatch"


def test_layer_pins_satisfy_the_project_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {
        Requirement(d).name.lower().replace("_", "-"): Requirement(d)
        for d in project["dependencies"]
    }
    pinned = {}
    for line in (ROOT / "layer" / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            [spec] = requirement.specifier
            assert spec.operator == "==", f"{line}: pin an exact version"
            pinned[requirement.name.lower().replace("_", "-")] = spec.version
    assert set(pinned) == set(wanted)
    for name, version in pinned.items():
        assert wanted[name].specifier.contains(version), f"{name}=={version} vs {wanted[name]}"
    assert Requirement("boto3>=1.44.8").specifier.contains(pinned["boto3"])


def test_outputs_give_urls_tables_and_queue() -> None:
    outputs = TEMPLATE["Outputs"]
    for name in ("JobsTableName", "EscalationsTableName", "AuditTableName", "IdempotencyTableName"):
        assert outputs[name]["Value"] == {"Ref": name.removesuffix("Name")}
    assert outputs["SubmissionQueueUrl"]["Value"] == {"Ref": "SubmissionQueue"}
    api = "https://${Api}.execute-api.${AWS::Region}.${AWS::URLSuffix}/v1/"
    assert outputs["ApiUrl"]["Value"] == {"Fn::Sub": api}
    assert outputs["SlackInteractivityUrl"]["Value"] == {"Fn::Sub": api + "slack/interactions"}


@pytest.mark.parametrize("environment", ["default", "prod"])
def test_samconfig_environment_overrides_valid_template_parameters(environment: str) -> None:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())
    assert config["version"] == 0.1
    deploy = config[environment]["deploy"]["parameters"]
    assert deploy["capabilities"] == "CAPABILITY_IAM"
    assert config[environment]["validate"]["parameters"]["lint"] is True
    parameters = TEMPLATE["Parameters"]
    overrides = dict(item.split("=", 1) for item in deploy["parameter_overrides"])
    for name, value in overrides.items():
        assert name in parameters, f"{environment}: unknown parameter {name}"
        declared = parameters[name]
        if "AllowedValues" in declared:
            assert value in declared["AllowedValues"]
        if "AllowedPattern" in declared:
            assert re.fullmatch(declared["AllowedPattern"], value), f"{name}={value}"
    # The template's Rules: a governed queue is named unless the stack creates one.
    assert overrides.get("CreateBatchResources") == "true" or overrides.get("JobQueueArn")


def test_audit_knows_the_roles_of_every_function_that_changes_service_jobs() -> None:
    variables = function_property(TEMPLATE, "AuditFunction", "Environment")["Variables"]
    separator, parts = variables["CONTROLLER_PRINCIPALS"]["Fn::Join"]
    assert separator == ","
    named = {part["Fn::GetAtt"][0] for part in parts}
    assert all(part["Fn::GetAtt"][1] == "Arn" for part in parts)
    mutating = {"batch:SubmitServiceJob", "batch:UpdateServiceJob", "batch:TerminateServiceJob"}
    changers = {
        f"{function}Role"
        for function in resources_of_type(TEMPLATE, FUNCTION_TYPE)
        if any(action in mutating for action, _t in _granted(function))
    }
    assert named == changers


def test_jobs_api_may_read_the_environment_capacity_and_no_other_function_does() -> None:
    """POST /jobs reads the service environment's capacity (DescribeJobQueues and
    DescribeServiceEnvironments, which take no resource-level permissions)."""
    wanted = {"batch:DescribeJobQueues", "batch:DescribeServiceEnvironments"}
    granted = {a: t for a, t in _granted("JobsApiFunction") if a in wanted}
    assert set(granted) == wanted
    for function in ("SubmitWorkerFunction", "JobStateFunction", "AuditFunction"):
        assert not wanted & {a for a, _t in _granted(function)}


def test_policy_parameter_writes_reach_the_audit_function_which_alone_reads_history() -> None:
    """``ssm:PutParameter`` cannot be refused by the stack: every write of the policy
    parameter (by name or ARN) is routed to the audit writer, the only function that
    may read the parameter's history (both sides of the change)."""
    events = _properties("AuditFunction")["Events"]
    pattern = events["PolicyParameterChange"]["Properties"]["Pattern"]
    assert pattern["source"] == ["aws.ssm"]
    assert pattern["detail"]["eventName"] == ["PutParameter", "DeleteParameter"]
    assert pattern["detail"]["requestParameters"]["name"] == [
        {"Ref": "PolicyParameter"},
        {"suffix": {"Fn::Sub": ":parameter${PolicyParameter}"}},
    ]
    for function in resources_of_type(TEMPLATE, FUNCTION_TYPE):
        history = {t for a, t in _granted(function) if a == "ssm:GetParameterHistory"}
        assert ("PolicyParameter" in history) == (function == "AuditFunction"), function
        assert history <= {"PolicyParameter", "AWS::Partition", "AWS::Region", "AWS::AccountId"}
