"""The ``seal`` rule: resource policies that admit only the roles the grants name.

IAM identity policies say what quotagov's roles may do; nothing in them stops another
principal of the account whose own policies allow ``sqs:*`` or ``dynamodb:PutItem``.
The resources themselves must refuse (IAM User Guide, "Policy evaluation logic": an
explicit Deny in a resource-based policy wins over any Allow,
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html).
This rule checks that every such refusal names exactly the roles the template grants,
so a grant added without its seal (or a seal left wider than its grants) is found:

queues
    Every ``AWS::SQS::Queue`` has an ``AWS::SQS::QueuePolicy`` that denies
    ``sqs:SendMessage`` to every principal but the functions granted it (their roles by
    ``!GetAtt``), the functions whose ``EventInvokeConfig`` fails over to it and the
    operator role (:data:`OPERATOR_PARAMETER`); a dead-letter queue denies it to
    everyone (Amazon SQS moves messages there itself) or admits the EventBridge service
    only. It denies :data:`CONSUME_ACTIONS` to every principal but the roles of the
    functions with an SQS event source on it (and the operator role).
roles
    No function with an SQS event source runs as a role SAM generates: SAM attaches the
    managed ``AWSLambdaSQSQueueExecutionRole`` (receive and delete on every queue) to
    it; such a function names an ``AWS::IAM::Role`` of the template in ``Role``.
tables
    Every ``AWS::DynamoDB::Table`` has a ``ResourcePolicy`` denying each of
    :data:`TABLE_WRITES` to every principal outside the role paths
    (:func:`role_path_pattern`) of exactly the functions granted that action (the
    operator role may be added for ``UpdateItem``), and :data:`NOBODY_WRITES` to all.
secrets
    Every ``AWS::SecretsManager::Secret`` has an ``AWS::SecretsManager::ResourcePolicy``
    denying ``secretsmanager:GetSecretValue`` to every principal but the roles of the
    functions granted it.
tags
    ``batch:TagResource`` is allowed only on service jobs not yet carrying
    ``quotagov:submissionId`` (:data:`TAG_ON_CREATE_CONDITION`): a job being submitted.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from quotagov_tools.deploy.checks.findings import Finding
from quotagov_tools.deploy.checks.statements import as_list
from quotagov_tools.deploy.template import (
    FUNCTION_TYPE,
    function_role,
    function_statements,
    references,
    resources_of_type,
)

#: The parameter naming the operators' role (``quotagov redrive``).
OPERATOR_PARAMETER = "OperatorRoleArn"

#: Actions that take messages off a queue (or move them): the consumer's alone.
CONSUME_ACTIONS: frozenset[str] = frozenset(
    {
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:ChangeMessageVisibility",
        "sqs:PurgeQueue",
        "sqs:StartMessageMoveTask",
        "sqs:CancelMessageMoveTask",
    }
)

#: Item writes a table's resource policy restricts to the roles granted them.
TABLE_WRITES: tuple[str, ...] = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem")

#: Item writes no quotagov role makes: every table denies them to everyone.
NOBODY_WRITES: frozenset[str] = frozenset(
    {
        "dynamodb:BatchWriteItem",
        "dynamodb:PartiQLInsert",
        "dynamodb:PartiQLUpdate",
        "dynamodb:PartiQLDelete",
    }
)

#: The condition that makes ``batch:TagResource`` a tag-on-create right.
TAG_ON_CREATE_CONDITION: Mapping[str, Mapping[str, str]] = {
    "Null": {"aws:ResourceTag/quotagov:submissionId": "true"}
}


def role_path_pattern(function: str) -> str:
    """The ``aws:PrincipalArn`` pattern of ``function``'s role, as a ``Fn::Sub`` text.

    Every execution role sits under ``/quotagov/<Region>/<stack>/<function>/`` (SAM
    ``RolePath`` or the explicit role's ``Path``), so a table's policy can name it
    without ``!GetAtt`` (which would make the table and the role depend on each other).
    """
    return (
        "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/quotagov/${AWS::Region}/"
        f"${{AWS::StackName}}/{function}/*"
    )


def _names(value: Any) -> set[str]:
    """Logical ids and parameters an entry names (pseudo parameters left out)."""
    return {name for name in references(value) if not name.startswith("AWS::")}


def _grants(template: Mapping[str, Any], target: str) -> dict[str, set[str]]:
    """Action -> functions whose Allow statements grant it on resource ``target``."""
    granted: dict[str, set[str]] = {}
    for function in resources_of_type(template, FUNCTION_TYPE):
        for statement in function_statements(template, function):
            if not isinstance(statement, Mapping) or statement.get("Effect") != "Allow":
                continue
            named = {n for r in as_list(statement.get("Resource") or []) for n in references(r)}
            if target in named:
                for action in as_list(statement.get("Action") or []):
                    granted.setdefault(str(action), set()).add(function)
    return granted


def _deny_statements(document: Any) -> list[Mapping[str, Any]]:
    statements = as_list((document or {}).get("Statement") or [])
    return [s for s in statements if isinstance(s, Mapping) and s.get("Effect") == "Deny"]


def _excepted(statement: Mapping[str, Any], operator: str, key: str) -> set[str] | None:
    """The principals a Deny spares through ``operator`` on ``aws:PrincipalArn``
    (logical ids and parameters), or None when it has no such condition."""
    condition = (statement.get("Condition") or {}).get(operator)
    if not isinstance(condition, Mapping) or key not in condition:
        return None
    return {n for entry in as_list(condition[key]) for n in _names(entry)}


def _denies(statement: Mapping[str, Any], actions: set[str] | frozenset[str]) -> bool:
    return set(actions) <= {str(a) for a in as_list(statement.get("Action") or [])}


# ---------------------------------------------------------------------------- queues


def queue_policy(template: Mapping[str, Any], queue: str) -> Mapping[str, Any] | None:
    """The ``PolicyDocument`` of the ``AWS::SQS::QueuePolicy`` governing ``queue``."""
    for resource in resources_of_type(template, "AWS::SQS::QueuePolicy").values():
        properties = resource.get("Properties") or {}
        if {"Ref": queue} in as_list(properties.get("Queues") or []):
            document: Mapping[str, Any] = properties.get("PolicyDocument") or {}
            return document
    return None


def queue_seal(template: Mapping[str, Any], queue: str) -> tuple[set[str] | None, set[str] | None]:
    """(senders, consumers) ``queue``'s policy spares from its Denies (role logical ids
    and :data:`OPERATOR_PARAMETER`); ``set()`` when it denies everyone, None when
    nothing is denied. A send Deny that spares only the EventBridge service (its
    ``aws:PrincipalServiceName``) and no role gives ``{"events.amazonaws.com"}``."""
    senders: set[str] | None = None
    consumers: set[str] | None = None
    for statement in _deny_statements(queue_policy(template, queue)):
        if statement.get("Principal") != "*":
            continue
        if statement.get("Condition", {}).get("Bool"):
            continue  # TlsOnly
        spared = _excepted(statement, "ArnNotEquals", "aws:PrincipalArn")
        service = (statement.get("Condition") or {}).get("StringNotEqualsIfExists") or {}
        if _denies(statement, {"sqs:SendMessage"}):
            senders = set(spared or ())
            if service.get("aws:PrincipalServiceName"):
                senders.add(str(service["aws:PrincipalServiceName"]))
        if _denies(statement, CONSUME_ACTIONS):
            consumers = set(spared or ())
    return senders, consumers


def _on_failure_senders(template: Mapping[str, Any], queue: str) -> set[str]:
    """Functions whose ``EventInvokeConfig`` sends failed events to ``queue``."""
    found = set()
    for function, resource in resources_of_type(template, FUNCTION_TYPE).items():
        config = (resource.get("Properties") or {}).get("EventInvokeConfig") or {}
        destination = ((config.get("DestinationConfig") or {}).get("OnFailure") or {}).get(
            "Destination"
        )
        if queue in _names(destination):
            found.add(function)
    return found


def _sqs_consumers(template: Mapping[str, Any], queue: str) -> set[str]:
    """Functions with an SQS event source on ``queue``."""
    found = set()
    for function, resource in resources_of_type(template, FUNCTION_TYPE).items():
        for event in ((resource.get("Properties") or {}).get("Events") or {}).values():
            if event.get("Type") == "SQS" and queue in _names(event["Properties"].get("Queue")):
                found.add(function)
    return found


def _dead_letter_queues(template: Mapping[str, Any]) -> set[str]:
    """Queues that are some queue's ``RedrivePolicy.deadLetterTargetArn``."""
    found = set()
    for resource in resources_of_type(template, "AWS::SQS::Queue").values():
        redrive = (resource.get("Properties") or {}).get("RedrivePolicy") or {}
        found |= _names(redrive.get("deadLetterTargetArn"))
    return found


def _queue_messages(template: Mapping[str, Any], queue: str, dlqs: set[str]) -> Iterator[str]:
    if queue_policy(template, queue) is None:
        yield "no AWS::SQS::QueuePolicy: any principal IAM allows may send and receive"
        return
    senders, consumers = queue_seal(template, queue)
    roles = {f: function_role(template, f) for f in resources_of_type(template, FUNCTION_TYPE)}
    granted = _grants(template, queue).get("sqs:SendMessage", set())
    expected = {roles[f] for f in granted | _on_failure_senders(template, queue)}
    if senders is None:
        yield "sqs:SendMessage is denied to nobody"
    else:
        extra = senders - expected - {OPERATOR_PARAMETER, "events.amazonaws.com"}
        missing = expected - senders
        if extra:
            yield f"sqs:SendMessage spared for {', '.join(sorted(extra))}, granted to none of them"
        if missing:
            shown = ", ".join(sorted(missing))
            yield f"sqs:SendMessage granted to {shown} but denied by the policy"
        if not expected and queue in dlqs and senders - {OPERATOR_PARAMETER}:
            yield "a dead-letter queue must refuse every sender (Amazon SQS moves messages itself)"
    wanted = {roles[f] for f in _sqs_consumers(template, queue)}
    if consumers is None:
        yield f"{', '.join(sorted(CONSUME_ACTIONS))} are denied to nobody"
    elif consumers - {OPERATOR_PARAMETER} != wanted:
        shown = ", ".join(sorted(consumers - {OPERATOR_PARAMETER})) or "no role"
        yield (
            f"receiving is spared for {shown}, but the consumers are "
            f"{', '.join(sorted(wanted)) or 'none'}"
        )


# ---------------------------------------------------------------------------- tables


def table_seal(template: Mapping[str, Any], table: str) -> dict[str, set[str]]:
    """Write action -> functions (and :data:`OPERATOR_PARAMETER`) the table's
    ``ResourcePolicy`` spares; an action denied to everyone maps to ``set()``, one not
    denied at all is absent."""
    properties = template["Resources"][table].get("Properties") or {}
    document = (properties.get("ResourcePolicy") or {}).get("PolicyDocument")
    spared: dict[str, set[str]] = {}
    for statement in _deny_statements(document):
        condition = (statement.get("Condition") or {}).get("ArnNotLike") or {}
        patterns = as_list(condition.get("aws:PrincipalArn") or [])
        who: set[str] = set()
        for pattern in patterns:
            text = pattern.get("Fn::Sub") if isinstance(pattern, Mapping) else None
            if isinstance(text, str) and text.endswith("/*"):
                who.add(text.rsplit("/", 2)[-2])
            else:
                who |= _names(pattern)
        for action in as_list(statement.get("Action") or []):
            spared[str(action)] = who
    return spared


def _table_messages(template: Mapping[str, Any], table: str) -> Iterator[str]:
    properties = template["Resources"][table].get("Properties") or {}
    if not properties.get("ResourcePolicy"):
        yield "no ResourcePolicy: any principal IAM allows may write items"
        return
    spared = table_seal(template, table)
    grants = _grants(template, table)
    for action in TABLE_WRITES:
        if action not in spared:
            yield f"{action} is denied to nobody"
            continue
        writers = grants.get(action, set())
        who = spared[action] - {OPERATOR_PARAMETER}
        if who != writers:
            yield (
                f"{action} spared for {', '.join(sorted(who)) or 'nobody'}, granted to "
                f"{', '.join(sorted(writers)) or 'nobody'}"
            )
    for action in sorted(NOBODY_WRITES):
        if spared.get(action) != set():
            yield f"{action} must be denied to everyone"
    roles = dict.fromkeys(resources_of_type(template, FUNCTION_TYPE))
    for function in roles:
        if any(function in spared.get(a, set()) for a in TABLE_WRITES) and not _has_path(
            template, function
        ):
            yield f"{function}'s role has no /quotagov/<Region>/<stack>/{function}/ path"


def _has_path(template: Mapping[str, Any], function: str) -> bool:
    """Whether ``function``'s role sits where :func:`role_path_pattern` looks."""
    resources = template["Resources"]
    role = function_role(template, function)
    if role in resources:
        path = (resources[role].get("Properties") or {}).get("Path")
    else:
        path = (resources[function].get("Properties") or {}).get("RolePath")
    text = path.get("Fn::Sub") if isinstance(path, Mapping) else path
    return text == f"/quotagov/${{AWS::Region}}/${{AWS::StackName}}/{function}/"


# ---------------------------------------------------------------------------- secrets


def secret_readers(template: Mapping[str, Any], secret: str) -> set[str] | None:
    """Role logical ids the secret's resource policy lets read it, or None when no
    ``AWS::SecretsManager::ResourcePolicy`` denies ``GetSecretValue``."""
    for resource in resources_of_type(template, "AWS::SecretsManager::ResourcePolicy").values():
        properties = resource.get("Properties") or {}
        if secret not in _names(properties.get("SecretId")):
            continue
        for statement in _deny_statements(properties.get("ResourcePolicy")):
            if _denies(statement, {"secretsmanager:GetSecretValue"}):
                return _excepted(statement, "ArnNotEquals", "aws:PrincipalArn") or set()
    return None


def _secret_messages(template: Mapping[str, Any], secret: str) -> Iterator[str]:
    readers = secret_readers(template, secret)
    if readers is None:
        yield "no resource policy: any principal IAM allows may read it"
        return
    granted = _grants(template, secret).get("secretsmanager:GetSecretValue", set())
    expected = {function_role(template, f) for f in granted}
    if readers != expected:
        yield (
            f"readable by {', '.join(sorted(readers)) or 'nobody'}, granted to "
            f"{', '.join(sorted(expected)) or 'nobody'}"
        )


# ---------------------------------------------------------------------------- rule


def _tag_messages(template: Mapping[str, Any], function: str) -> Iterator[str]:
    for statement in function_statements(template, function):
        if not isinstance(statement, Mapping) or statement.get("Effect") != "Allow":
            continue
        if "batch:TagResource" not in as_list(statement.get("Action") or []):
            continue
        condition = statement.get("Condition") or {}
        if condition.get("Null") != TAG_ON_CREATE_CONDITION["Null"]:
            yield (
                f"statement {statement.get('Sid', '(no Sid)')}: batch:TagResource without "
                "the tag-on-create condition (retags existing jobs)"
            )


def check_seals(template: Mapping[str, Any]) -> list[Finding]:
    """Apply the ``seal`` rules of the module doc; findings sorted, one per fault."""
    findings: set[Finding] = set()
    dlqs = _dead_letter_queues(template)
    for queue in resources_of_type(template, "AWS::SQS::Queue"):
        findings |= {Finding("seal", queue, m) for m in _queue_messages(template, queue, dlqs)}
    for table in resources_of_type(template, "AWS::DynamoDB::Table"):
        findings |= {Finding("seal", table, m) for m in _table_messages(template, table)}
    for secret in resources_of_type(template, "AWS::SecretsManager::Secret"):
        findings |= {Finding("seal", secret, m) for m in _secret_messages(template, secret)}
    for function, resource in resources_of_type(template, FUNCTION_TYPE).items():
        events = ((resource.get("Properties") or {}).get("Events") or {}).values()
        role = function_role(template, function)
        if any(e.get("Type") == "SQS" for e in events) and role not in template["Resources"]:
            findings.add(
                Finding(
                    "seal",
                    function,
                    "an SQS event source on a SAM-generated role attaches "
                    "AWSLambdaSQSQueueExecutionRole (every queue); name an AWS::IAM::Role",
                )
            )
        findings |= {Finding("seal", function, m) for m in _tag_messages(template, function)}
    return sorted(findings)
