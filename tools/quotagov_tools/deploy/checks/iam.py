"""The ``iam`` rule: least privilege for every Allow statement the template writes.

Every Allow statement (function ``Policies``, ``AWS::IAM::*`` resources; read by
:mod:`~quotagov_tools.deploy.checks.statements`) lists its actions and resources explicitly
(no ``NotAction``, no ``NotResource``, no SAM policy template or managed policy whose
content the checker cannot see); no action contains ``*`` (or ``?``); a resource is
``*`` only for actions without resource-level permissions
(:data:`NO_RESOURCE_LEVEL_ACTIONS`); the append-only tables (:data:`APPEND_ONLY_TABLES`)
get no update or delete action (:data:`MUTATING_TABLE_ACTIONS`); the actions in
:data:`EXCLUSIVE_ACTIONS` go only to the functions listed there; only the functions
of :data:`EXCLUSIVE_TABLE_WRITERS` write those tables (one audit writer);
the audit keys' usage (:data:`KEY_POLICY_ONLY_ACTIONS`) is granted by their key
policies, never by an IAM policy; and nobody is allowed to remove or unlock a digest
(:data:`UNDELETABLE_BUCKETS`, :data:`OBJECT_REMOVAL_ACTIONS`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from quotagov_tools.deploy.checks.findings import Finding
from quotagov_tools.deploy.checks.statements import OPAQUE, as_list, renderings, template_statements
from quotagov_tools.deploy.template import references

#: Actions that support no resource-level permissions, so ``"Resource": "*"`` is the only
#: valid resource (AWS Service Authorization Reference; Batch: "Actions, resources, and
#: condition keys for AWS Batch",
#: https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsbatch.html).
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
#: priority is what the Slack approval governs (``docs/design.md``, "Priority-escalation
#: approvals in Slack" and "Trust model"): only ApplyDecisionsFunction applies it (approved and
#: direct escalations handed over by the functions that record them, and the
#: scheduled retry of an approved change whose first UpdateServiceJob failed); the
#: internet-facing Slack function only verifies and records.
EXCLUSIVE_ACTIONS: Mapping[str, frozenset[str]] = {
    "batch:UpdateServiceJob": frozenset({"ApplyDecisionsFunction"}),
}


#: Table -> the only functions that may write it (any of :data:`TABLE_WRITE_ACTIONS`).
#: The audit log has one writer; every other function hands decisions to it over the
#: audit queue.
EXCLUSIVE_TABLE_WRITERS: Mapping[str, frozenset[str]] = {"AuditTable": frozenset({"AuditFunction"})}

#: Actions that write items of a table (``TransactWriteItems`` is authorised per
#: contained write, so it needs no entry of its own).
TABLE_WRITE_ACTIONS: frozenset[str] = MUTATING_TABLE_ACTIONS | {
    "dynamodb:PutItem",
    "dynamodb:PartiQLInsert",
}

#: KMS actions that make audit seals and digest signatures: granted only by the key
#: policies of ``AuditSealKey``/``AuditDigestKey`` to the writer and the digest
#: function, so no IAM policy in the stack may hold them.
KEY_POLICY_ONLY_ACTIONS: frozenset[str] = frozenset(
    {"kms:GenerateMac", "kms:Sign", "kms:CreateGrant", "kms:PutKeyPolicy"}
)

#: Buckets whose objects nobody in the stack may delete or unlock (the digests).
UNDELETABLE_BUCKETS: frozenset[str] = frozenset({"AuditDigestBucket"})

#: Actions that remove an object (version) or weaken its Object Lock.
OBJECT_REMOVAL_ACTIONS: frozenset[str] = frozenset(
    {
        "s3:DeleteObject",
        "s3:DeleteObjectVersion",
        "s3:PutObjectRetention",
        "s3:PutObjectLegalHold",
        "s3:BypassGovernanceRetention",
        "s3:PutBucketObjectLockConfiguration",
        "s3:PutLifecycleConfiguration",
        "s3:DeleteBucket",
    }
)


def _audit_messages(
    owner: str, label: str, actions: Sequence[str], resources: Sequence[Any]
) -> Iterator[str]:
    """The audit rules: one table writer, key usage by key policy only, digests kept."""
    targets = {name for r in resources for name in references(r)}
    for table, writers in EXCLUSIVE_TABLE_WRITERS.items():
        if table in targets and owner not in writers:
            for action in actions:
                if action in TABLE_WRITE_ACTIONS:
                    only = ", ".join(sorted(writers))
                    yield f"{label}: {action} on {table} is reserved for {only}"
    for action in actions:
        if action in KEY_POLICY_ONLY_ACTIONS:
            yield f"{label}: {action} may only be granted by the audit keys' own key policies"
    for bucket in sorted(UNDELETABLE_BUCKETS & targets):
        for action in actions:
            if action in OBJECT_REMOVAL_ACTIONS:
                yield f"{label}: {action} on {bucket}, whose digests nobody may remove or unlock"


def _is_wildcard_resource(text: str) -> bool:
    """``*``, or an ARN whose resource part is only ``*`` (``arn:aws:dynamodb:r:a:*``)."""
    if text.strip() == "*":
        return True
    parts = text.split(":", 5)
    return len(parts) == 6 and parts[0] == "arn" and parts[5] == "*"


def _wildcard_resource_messages(
    label: str, actions: Sequence[str], resources: Sequence[Any]
) -> Iterator[str]:
    """A ``*`` resource for actions that could name their resources."""
    if not any(_is_wildcard_resource(t) for r in resources for t in renderings(r)):
        return
    scoped = sorted(a for a in actions if a not in NO_RESOURCE_LEVEL_ACTIONS)
    if scoped:
        yield (
            f"{label}: Resource '*' for {', '.join(scoped)}, which support "
            "resource-level permissions; name the resources"
        )


def _append_only_messages(
    label: str, actions: Sequence[str], resources: Sequence[Any]
) -> Iterator[str]:
    """Update or delete actions on a table of :data:`APPEND_ONLY_TABLES`."""
    targets = {name for r in resources for name in references(r)}
    for table in sorted(APPEND_ONLY_TABLES & targets):
        for action in actions:
            if action in MUTATING_TABLE_ACTIONS:
                yield f"{label}: {action} on append-only table {table}"


def _exclusive_messages(owner: str, label: str, actions: Sequence[str]) -> Iterator[str]:
    """Actions of :data:`EXCLUSIVE_ACTIONS` held by a function not listed for them."""
    for action in actions:
        allowed = EXCLUSIVE_ACTIONS.get(action)
        if allowed is not None and owner not in allowed:
            yield f"{label}: {action} is reserved for {', '.join(sorted(allowed))}"


def _statement_messages(owner: str, statement: Any) -> Iterator[str]:
    """What is wrong with one statement (or opaque policy) of ``owner`` as written."""
    if not isinstance(statement, Mapping):
        yield f"statement {statement!r} is not a mapping"
        return
    if OPAQUE in statement:
        yield f"{statement[OPAQUE]}: write the statements out so they can be checked"
        return
    if statement.get("Effect") != "Allow":
        return
    label = f"statement {statement.get('Sid', '(no Sid)')}"
    for key in ("NotAction", "NotResource"):
        if key in statement:
            yield f"{label}: {key} grants everything not listed"
    actions = [a for a in as_list(statement.get("Action") or []) if a is not None]
    resources = as_list(statement.get("Resource") or [])
    if not actions or not all(isinstance(a, str) for a in actions):
        yield f"{label}: actions must be listed as literal strings"
        return
    for action in actions:
        if "*" in action or "?" in action:
            yield f"{label}: wildcard action {action!r}"
    if not resources:
        yield f"{label}: no Resource"
    yield from _wildcard_resource_messages(label, actions, resources)
    yield from _append_only_messages(label, actions, resources)
    yield from _exclusive_messages(owner, label, actions)
    yield from _audit_messages(owner, label, actions, resources)


def check_iam(template: Mapping[str, Any]) -> list[Finding]:
    """Apply the IAM rules of the module doc to every statement the template writes.

    Returns:
        ``iam`` findings, sorted and without duplicates; the SAM-added execution
        policies (basic logging, X-Ray, SQS polling, event destinations) are SAM's and
        not checked here.
    """
    findings = {
        Finding("iam", owner, message)
        for owner, statement in template_statements(template)
        for message in _statement_messages(owner, statement)
    }
    return sorted(findings)
