"""The tamper-evident audit in the template: one audit writer, key usage for the sealing and digest
functions only, digests nobody can remove, and a platform channel required at deploy.

Read from the built template (``.aws-sam/build/template.yaml``, what ``sam deploy``
uploads) when ``make lint-template`` has run, else from ``template.yaml``. Every
principal that can act is a function's role (SAM names it ``<Function>Role``) or the
account root of a key policy (which delegates to IAM policies, all of which are in
the stack and checked here).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from quotagov.governance.audit.seals import MAX_RUN_RECORDS
from quotagov_tools.deploy.checks import check_iam, default_template
from quotagov_tools.deploy.checks.seals import queue_seal
from quotagov_tools.deploy.template import (
    FUNCTION_TYPE,
    function_property,
    function_statements,
    load_template,
    references,
    resources_of_type,
)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(default_template(ROOT))
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
FUNCTIONS = sorted(resources_of_type(TEMPLATE, FUNCTION_TYPE))
ROOT_PRINCIPAL = "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"

WRITE_ACTIONS = {
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:PartiQLInsert",
    "dynamodb:PartiQLUpdate",
    "dynamodb:PartiQLDelete",
}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _allow_statements(function: str) -> list[dict[str, Any]]:
    return [
        s
        for s in function_statements(TEMPLATE, function)
        if isinstance(s, dict) and s.get("Effect") == "Allow"
    ]


def _grants(function: str) -> set[tuple[str, str]]:
    """(action, referenced logical id or '*') pairs of the function's IAM policies."""
    pairs: set[tuple[str, str]] = set()
    for statement in _allow_statements(function):
        for resource in _list(statement.get("Resource")):
            targets = {"*"} if resource == "*" else set(references(resource))
            for action in _list(statement.get("Action")):
                pairs.update((action, target) for target in targets)
    return pairs


def _key_policy(key: str) -> list[dict[str, Any]]:
    return list(RESOURCES[key]["Properties"]["KeyPolicy"]["Statement"])


def _principals(statement: dict[str, Any]) -> list[str]:
    """A key policy principal as a function name (``<Function>Role``) or ``root``."""
    out = []
    for principal in _list(statement["Principal"]["AWS"]):
        if isinstance(principal, dict) and "Fn::GetAtt" in principal:
            role = principal["Fn::GetAtt"][0]
            assert role.endswith("Role") and principal["Fn::GetAtt"][1] == "Arn"
            out.append(role[: -len("Role")])
        elif isinstance(principal, dict) and principal.get("Fn::Sub") == ROOT_PRINCIPAL:
            out.append("root")
        else:
            raise AssertionError(f"unexpected key policy principal {principal!r}")
    return out


def _key_users(key: str, action: str) -> set[str]:
    return {
        who
        for statement in _key_policy(key)
        if statement["Effect"] == "Allow" and action in _list(statement["Action"])
        for who in _principals(statement)
    }


def test_only_the_audit_function_writes_the_audit_table() -> None:
    writers = {
        function
        for function in FUNCTIONS
        if any(a in WRITE_ACTIONS and t == "AuditTable" for a, t in _grants(function))
    }
    assert writers == {"AuditFunction"}
    # ...and it only appends: no update or delete, even for itself.
    assert {a for a, t in _grants("AuditFunction") if t == "AuditTable"} == {
        "dynamodb:PutItem",
        "dynamodb:GetItem",
        "dynamodb:Query",
    }
    assert {a for a, t in _grants("AuditDigestFunction") if t == "AuditTable"} == {
        "dynamodb:GetItem",
        "dynamodb:Query",
    }


def test_only_the_audit_function_has_the_table_in_its_environment() -> None:
    for function in FUNCTIONS:
        variables = function_property(TEMPLATE, function, "Environment")["Variables"]
        has_table = "AUDIT_TABLE" in variables
        assert has_table == (function in {"AuditFunction", "AuditDigestFunction"}), function
        hands_over = variables.get("AUDIT_QUEUE_URL") == {"Ref": "AuditQueue"}
        assert hands_over == (function not in {"AuditFunction", "AuditDigestFunction"}), function
    assert "AUDIT_TABLE" not in TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]


def test_decisions_reach_the_writer_over_a_queue_with_a_dlq_and_partial_failures() -> None:
    queue = RESOURCES["AuditQueue"]["Properties"]
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {
        "Fn::GetAtt": ["AuditDeadLetterQueue", "Arn"]
    }
    assert queue["VisibilityTimeout"] >= 6 * function_property(TEMPLATE, "AuditFunction", "Timeout")
    events = function_property(TEMPLATE, "AuditFunction", "Events")
    sqs = [e for e in events.values() if e["Type"] == "SQS"]
    assert len(sqs) == 1
    assert sqs[0]["Properties"]["Queue"] == {"Fn::GetAtt": ["AuditQueue", "Arn"]}
    assert sqs[0]["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # One batch is one sealed run (one GenerateMac): at most MAX_RUN_RECORDS records.
    assert 1 < sqs[0]["Properties"]["BatchSize"] <= MAX_RUN_RECORDS
    # Every other function may send to it, the queue policy refuses anyone else.
    policy = RESOURCES["AuditQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"]
    [tls] = [s for s in policy if s["Effect"] == "Deny" and "Bool" in s["Condition"]]
    assert tls["Condition"]["Bool"] == {"aws:SecureTransport": "false"}
    allowed, consumers = queue_seal(TEMPLATE, "AuditQueue")
    senders = {f"{f}Role" for f in FUNCTIONS if ("sqs:SendMessage", "AuditQueue") in _grants(f)}
    # the operator role re-sends records `quotagov redrive` replays
    assert allowed == senders | {"OperatorRoleArn"}
    assert senders == {f"{f}Role" for f in FUNCTIONS if not f.startswith("Audit")}
    # nobody but the writer takes records off it (receiving one would drop it unsealed)
    assert consumers == {"AuditFunctionRole"}


def test_generate_mac_and_sign_only_for_the_sealing_and_digest_functions() -> None:
    # No IAM policy in the stack holds a key's usage (or could hand it out).
    for function in FUNCTIONS:
        held = {a for a, _t in _grants(function)}
        assert held.isdisjoint({"kms:GenerateMac", "kms:Sign", "kms:CreateGrant"}), function
    assert _key_users("AuditSealKey", "kms:GenerateMac") == {"AuditFunction"}
    assert _key_users("AuditDigestKey", "kms:Sign") == {"AuditDigestFunction"}
    for key in ("AuditSealKey", "AuditDigestKey"):
        for action in ("kms:GenerateMac", "kms:Sign", "kms:CreateGrant", "kms:*"):
            assert "root" not in _key_users(key, action), (key, action)
        for statement in _key_policy(key):
            assert all("*" not in a for a in _list(statement["Action"])), statement["Sid"]
    # Verifying needs no write right: VerifyMac / GetPublicKey are delegated to IAM.
    assert _key_users("AuditSealKey", "kms:VerifyMac") == {"root"}
    assert _key_users("AuditDigestKey", "kms:GetPublicKey") == {"root"}
    assert ("kms:VerifyMac", "AuditSealKey") in _grants("AuditDigestFunction")
    # the writer checks a head another instance of it sealed before sealing on top
    assert ("kms:VerifyMac", "AuditSealKey") in _grants("AuditFunction")
    seal = RESOURCES["AuditSealKey"]["Properties"]
    assert (seal["KeySpec"], seal["KeyUsage"]) == ("HMAC_256", "GENERATE_VERIFY_MAC")
    digest = RESOURCES["AuditDigestKey"]["Properties"]
    assert (digest["KeySpec"], digest["KeyUsage"]) == ("ECC_NIST_P256", "SIGN_VERIFY")


def test_nobody_in_the_stack_may_delete_or_unlock_a_digest() -> None:
    removal = {
        "s3:DeleteObject",
        "s3:DeleteObjectVersion",
        "s3:PutObjectRetention",
        "s3:PutObjectLegalHold",
        "s3:BypassGovernanceRetention",
        "s3:PutBucketObjectLockConfiguration",
    }
    for function in FUNCTIONS:
        on_bucket = {a for a, t in _grants(function) if t == "AuditDigestBucket"}
        assert on_bucket.isdisjoint(removal), function
        assert all("*" not in a for a in on_bucket)
    writers = {f for f in FUNCTIONS if ("s3:PutObject", "AuditDigestBucket") in _grants(f)}
    assert writers == {"AuditDigestFunction"}
    bucket = RESOURCES["AuditDigestBucket"]["Properties"]
    assert bucket["ObjectLockEnabled"] is True
    retention = bucket["ObjectLockConfiguration"]["Rule"]["DefaultRetention"]
    assert retention == {"Mode": "COMPLIANCE", "Days": {"Ref": "DigestRetentionDays"}}
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    statements = RESOURCES["AuditDigestBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert all(s["Effect"] == "Deny" for s in statements)
    [no_removal] = [s for s in statements if s["Sid"] == "NoOneRemovesOrUnlocksDigests"]
    assert removal - {"s3:PutBucketObjectLockConfiguration"} <= set(no_removal["Action"])
    assert no_removal["Principal"] == "*" and "Condition" not in no_removal
    assert RESOURCES["AuditDigestBucket"]["DeletionPolicy"] == "Retain"


def test_digests_every_15_minutes_and_retention_is_a_parameter() -> None:
    events = function_property(TEMPLATE, "AuditDigestFunction", "Events")
    schedules = [e["Properties"]["Schedule"] for e in events.values() if e["Type"] == "Schedule"]
    assert schedules == ["rate(15 minutes)"]
    days = TEMPLATE["Parameters"]["DigestRetentionDays"]
    assert days["Type"] == "Number" and days["MinValue"] >= 1


@pytest.mark.parametrize("value", ["", "general", "c0lower"])
def test_a_deployment_without_a_platform_channel_is_refused(value: str) -> None:
    """CloudFormation refuses a parameter without a default that is not given, and one
    that does not match its AllowedPattern: no stack without a channel for risk alerts."""
    channel = TEMPLATE["Parameters"]["PlatformChannel"]
    assert "Default" not in channel
    assert not re.fullmatch(channel["AllowedPattern"], value)
    assert re.fullmatch(channel["AllowedPattern"], "C0PLATFORM")


def test_the_iam_checker_refuses_a_second_writer_key_usage_and_digest_removal() -> None:
    """The deploy checker (make lint-template) refuses each rule broken on purpose."""
    import copy

    broken = copy.deepcopy(TEMPLATE)
    slack = broken["Resources"]["SlackInteractionsFunction"]["Properties"]["Policies"]
    slack.append(
        {
            "Statement": [
                {
                    "Sid": "Forge",
                    "Effect": "Allow",
                    "Action": ["dynamodb:PutItem", "kms:GenerateMac", "s3:DeleteObject"],
                    "Resource": [
                        {"Fn::GetAtt": ["AuditTable", "Arn"]},
                        {"Fn::GetAtt": ["AuditSealKey", "Arn"]},
                        {"Fn::Sub": "${AuditDigestBucket.Arn}/*"},
                    ],
                }
            ]
        }
    )
    messages = [str(f) for f in check_iam(broken) if "SlackInteractionsFunction" in str(f)]
    assert any(
        "dynamodb:PutItem on AuditTable is reserved for AuditFunction" in m for m in messages
    )
    assert any("kms:GenerateMac may only be granted by the audit keys" in m for m in messages)
    assert any("s3:DeleteObject on AuditDigestBucket" in m for m in messages)
    assert check_iam(TEMPLATE) == []
