"""Create the template's AWS resources in moto, from their CloudFormation properties.

Each supported resource type maps its ``Properties`` onto the boto3 call
CloudFormation itself would make (``AWS::DynamoDB::Table`` -> ``CreateTable``,
``AWS::SQS::Queue`` -> ``CreateQueue`` with ``RedrivePolicy``, ``AWS::SSM::Parameter``
-> ``PutParameter``, ``AWS::SecretsManager::Secret`` -> ``CreateSecret``,
``AWS::Events::EventBus``/``AWS::Events::Rule`` -> ``CreateEventBus``/``PutRule``,
``AWS::KMS::Key`` -> ``CreateKey`` with its ``KeySpec``/``KeyUsage``/``KeyPolicy``,
``AWS::S3::Bucket`` -> ``CreateBucket`` with Object Lock and its default retention) and
records the physical ids so that ``!Ref``/``!GetAtt`` resolve to them. Resources of
other types (IAM roles, permissions, alarms, the Batch resources, which the simulated
Batch stands in for) get deterministic placeholder ids so references still resolve.

Resources are created in dependency order: a resource whose properties reference one
not yet created is retried after the others (``RedrivePolicy`` -> the DLQ's ``Arn``).

What a deployment would be given, the local runtime supplies (:class:`LocalValues`):
:func:`parameter_values` for the template parameters without defaults (the governed
job queue, a Slack secret and a policy parameter made here), :func:`resource_values`
for the policy parameter's and the Slack secret's contents.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import boto3

from quotagov_tools.deploy.template import TemplateError
from quotagov_tools.local.stack import ACCOUNT_ID, REGION, STACK_NAME, FunctionSpec, Stack

#: Property values the runtime supplies instead of the template's (by logical id).
ValueOverrides = Mapping[str, str]


def _physical_name(logical_id: str, given: Any) -> str:
    return str(given) if given else f"{STACK_NAME}-{logical_id}"


class Provisioner:
    """Creates a :class:`Stack`'s resources in the moto account the boto3 clients reach.

    Args:
        stack: the parsed template; its physical ids are filled in.
        values: replacement ``Value``/``SecretString`` by logical id (the policy YAML for
            the policy parameter, the Slack credentials JSON for the Slack secret).

    Raises:
        TemplateError: when references cannot be resolved (a cycle or an unknown name).
    """

    def __init__(self, stack: Stack, values: ValueOverrides | None = None) -> None:
        self.stack = stack
        self.values = dict(values or {})
        self.created: dict[str, str] = {}
        self.dynamodb = boto3.client("dynamodb", region_name=REGION)
        self.sqs = boto3.client("sqs", region_name=REGION)
        self.ssm = boto3.client("ssm", region_name=REGION)
        self.secrets = boto3.client("secretsmanager", region_name=REGION)
        self.events = boto3.client("events", region_name=REGION)
        self.kms = boto3.client("kms", region_name=REGION)
        self.s3 = boto3.client("s3", region_name=REGION)

    def provision(self) -> dict[str, str]:
        """Create every resource; returns ``{logical_id: resource type}`` of what was made."""
        self._implicit_ids()
        creators: dict[str, Callable[[str, dict[str, Any]], None]] = {
            "AWS::DynamoDB::Table": self._table,
            "AWS::Serverless::SimpleTable": self._simple_table,
            "AWS::SQS::Queue": self._queue,
            "AWS::SSM::Parameter": self._parameter,
            "AWS::SecretsManager::Secret": self._secret,
            "AWS::Events::EventBus": self._event_bus,
            "AWS::KMS::Key": self._kms_key,
            "AWS::S3::Bucket": self._bucket,
        }
        pending = [
            (logical_id, resource)
            for kind in creators
            for logical_id, resource in self.stack.of_type(kind).items()
        ]
        while pending:
            deferred = []
            last_error: TemplateError | None = None
            for logical_id, resource in pending:
                try:
                    properties = self.stack.resolve(resource.get("Properties") or {})
                except TemplateError as exc:
                    deferred.append((logical_id, resource))
                    last_error = exc
                    continue
                creators[resource["Type"]](logical_id, properties)
                self.created[logical_id] = resource["Type"]
            if len(deferred) == len(pending):
                raise TemplateError(f"cannot provision {[d[0] for d in deferred]}: {last_error}")
            pending = deferred
        return self.created

    # -- placeholders for what the runtime does not create in moto ----------------

    def _implicit_ids(self) -> None:
        stack = self.stack
        functions = stack.of_type("AWS::Serverless::Function")
        for logical_id, resource in functions.items():
            name = _physical_name(
                logical_id, (resource.get("Properties") or {}).get("FunctionName")
            )
            arn = f"arn:aws:lambda:{REGION}:{ACCOUNT_ID}:function:{name}"
            stack.set_physical(logical_id, name, Arn=arn)
            # The execution role: SAM's generated <Function>Role (under the function's
            # RolePath) or the explicit role its Role property names; CloudFormation
            # names it <stack>-<logical id>-<suffix> under its path.
            props = resource.get("Properties") or {}
            explicit = props.get("Role")
            if isinstance(explicit, dict) and "Fn::GetAtt" in explicit:
                role = str(explicit["Fn::GetAtt"][0])
                path = (stack.resources[role].get("Properties") or {}).get("Path", "/")
            else:
                role = f"{logical_id}Role"
                path = props.get("RolePath", "/")
            role_name = f"{STACK_NAME}-{role}"
            role_path = str(stack.resolve(path))
            stack.set_physical(
                role, role_name, Arn=f"arn:aws:iam::{ACCOUNT_ID}:role{role_path}{role_name}"
            )
        apis = dict(stack.of_type("AWS::Serverless::Api"))
        apis.setdefault("ServerlessRestApi", {})
        for logical_id in apis:
            api_id = f"local{abs(hash(logical_id)) % 10**6:06d}"
            stack.set_physical(logical_id, api_id, RootResourceId="root")
        for logical_id, resource in stack.resources.items():
            if logical_id in functions or logical_id in apis or stack.is_set(logical_id):
                continue  # explicit execution roles were named with their functions
            kind = str(resource.get("Type", ""))
            if kind.startswith("AWS::Batch::"):
                continue  # the runtime sets these to the simulated Batch's ARNs
            service = kind.split("::")[1].lower() if kind.count("::") == 2 else "local"
            arn = f"arn:aws:{service}:{REGION}:{ACCOUNT_ID}:{logical_id}"
            if kind not in CREATED_TYPES:
                stack.set_physical(logical_id, arn, Arn=arn)

    # -- DynamoDB ----------------------------------------------------------------

    def _table(self, logical_id: str, props: dict[str, Any]) -> None:
        name = _physical_name(logical_id, props.get("TableName"))
        request: dict[str, Any] = {
            "TableName": name,
            "AttributeDefinitions": props["AttributeDefinitions"],
            "KeySchema": props["KeySchema"],
            "BillingMode": props.get("BillingMode", "PROVISIONED"),
        }
        if request["BillingMode"] == "PROVISIONED":
            request["ProvisionedThroughput"] = props.get(
                "ProvisionedThroughput", {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
            )
        for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes", "StreamSpecification"):
            if key in props:
                request[key] = props[key]
        described = self.dynamodb.create_table(**request)["TableDescription"]
        ttl = props.get("TimeToLiveSpecification")
        if ttl and ttl.get("Enabled"):
            self.dynamodb.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl["AttributeName"]},
            )
        attrs = {"Arn": described["TableArn"]}
        if "LatestStreamArn" in described:
            attrs["StreamArn"] = described["LatestStreamArn"]
        self.stack.set_physical(logical_id, name, **attrs)

    def _simple_table(self, logical_id: str, props: dict[str, Any]) -> None:
        key = props.get("PrimaryKey") or {"Name": "id", "Type": "String"}
        kind = {"String": "S", "Number": "N", "Binary": "B"}[key.get("Type", "String")]
        self._table(
            logical_id,
            {
                "TableName": props.get("TableName"),
                "AttributeDefinitions": [{"AttributeName": key["Name"], "AttributeType": kind}],
                "KeySchema": [{"AttributeName": key["Name"], "KeyType": "HASH"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )

    # -- SQS ---------------------------------------------------------------------

    def _queue(self, logical_id: str, props: dict[str, Any]) -> None:
        fifo = bool(props.get("FifoQueue"))
        name = _physical_name(logical_id, props.get("QueueName"))
        if fifo and not name.endswith(".fifo"):
            name += ".fifo"
        attributes: dict[Any, str] = {}
        for key in (
            "VisibilityTimeout",
            "MessageRetentionPeriod",
            "DelaySeconds",
            "ReceiveMessageWaitTimeSeconds",
            "MaximumMessageSize",
            "FifoQueue",
            "ContentBasedDeduplication",
            "KmsMasterKeyId",
            "SqsManagedSseEnabled",
        ):
            if key in props:
                value = props[key]
                attributes[key] = str(value).lower() if isinstance(value, bool) else str(value)
        for key in ("RedrivePolicy", "RedriveAllowPolicy"):
            if key in props:
                value = props[key]
                attributes[key] = value if isinstance(value, str) else json.dumps(value)
        url = self.sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        arn = f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{name}"
        self.stack.set_physical(logical_id, url, Arn=arn, QueueName=name, QueueUrl=url)

    # -- SSM and Secrets Manager ---------------------------------------------------

    def _parameter(self, logical_id: str, props: dict[str, Any]) -> None:
        name = _physical_name(logical_id, props.get("Name"))
        if not name.startswith("/") and "Name" not in props:
            name = f"CFN-{logical_id}-local"
        value = self.values.get(logical_id, props.get("Value", ""))
        kind: Any = str(props.get("Type", "String"))
        self.ssm.put_parameter(Name=name, Value=str(value), Type=kind, Overwrite=True)
        self.stack.set_physical(
            logical_id, name, Type=str(props.get("Type", "String")), Value=str(value)
        )

    def _secret(self, logical_id: str, props: dict[str, Any]) -> None:
        name = _physical_name(logical_id, props.get("Name"))
        value = self.values.get(logical_id, props.get("SecretString"))
        if value is None:
            generated = props.get("GenerateSecretString") or {}
            template = generated.get("SecretStringTemplate")
            value = template or "{}"
        arn = self.secrets.create_secret(Name=name, SecretString=str(value))["ARN"]
        self.stack.set_physical(logical_id, arn, Id=arn, Name=name)

    # -- EventBridge -------------------------------------------------------------

    def _event_bus(self, logical_id: str, props: dict[str, Any]) -> None:
        name = _physical_name(logical_id, props.get("Name"))
        arn = self.events.create_event_bus(Name=name)["EventBusArn"]
        self.stack.set_physical(logical_id, name, Arn=arn, Name=name)

    # -- KMS and S3 (the audit's keys and digest bucket) ------------------------

    def _kms_key(self, logical_id: str, props: dict[str, Any]) -> None:
        request: dict[str, Any] = {
            "KeySpec": props.get("KeySpec", "SYMMETRIC_DEFAULT"),
            "KeyUsage": props.get("KeyUsage", "ENCRYPT_DECRYPT"),
            "Description": str(props.get("Description", logical_id)),
        }
        if props.get("KeyPolicy"):
            request["Policy"] = json.dumps(props["KeyPolicy"])
        metadata = self.kms.create_key(**request)["KeyMetadata"]
        self.stack.set_physical(logical_id, metadata["KeyId"], Arn=metadata["Arn"])

    def _bucket(self, logical_id: str, props: dict[str, Any]) -> None:
        name = _physical_name(logical_id, props.get("BucketName")).lower()
        self.s3.create_bucket(
            Bucket=name,
            CreateBucketConfiguration={"LocationConstraint": REGION},  # type: ignore[typeddict-item]
            ObjectLockEnabledForBucket=bool(props.get("ObjectLockEnabled")),
        )
        lock = props.get("ObjectLockConfiguration")
        if lock:
            retention = (lock.get("Rule") or {}).get("DefaultRetention") or {}
            for unit in ("Days", "Years"):
                if unit in retention:
                    retention[unit] = int(retention[unit])
            self.s3.put_object_lock_configuration(Bucket=name, ObjectLockConfiguration=lock)
        versioning = props.get("VersioningConfiguration")
        if versioning:
            self.s3.put_bucket_versioning(Bucket=name, VersioningConfiguration=versioning)
        self.stack.set_physical(
            logical_id, name, Arn=f"arn:aws:s3:::{name}", DomainName=f"{name}.s3.amazonaws.com"
        )


#: Resource types the provisioner creates in moto (the others get placeholder ids).
CREATED_TYPES = frozenset(
    {
        "AWS::KMS::Key",
        "AWS::S3::Bucket",
        "AWS::DynamoDB::Table",
        "AWS::Serverless::SimpleTable",
        "AWS::SQS::Queue",
        "AWS::SSM::Parameter",
        "AWS::SecretsManager::Secret",
        "AWS::Events::EventBus",
    }
)


# -- what the runtime supplies instead of a deployment's inputs ----------------------


@dataclass(frozen=True)
class LocalValues:
    """What the local runtime puts where a deployment has its own inputs.

    Attributes:
        job_queue: the governed job queue ARN (the policy's ``jobQueue``).
        policy_text: the governance policy YAML.
        slack_secret: the Slack secret's JSON (``{"botToken", "signingSecret"}``).
        slack_signing_secret: the signing secret's own secret JSON (``{"signingSecret"}``);
            by default the ``signingSecret`` of ``slack_secret``.
    """

    job_queue: str
    policy_text: str
    slack_secret: str
    slack_signing_secret: str = ""

    def signing_secret_json(self) -> str:
        """``{"signingSecret"}`` for the signing secret's own secret."""
        if self.slack_signing_secret:
            return self.slack_signing_secret
        secret = json.loads(self.slack_secret).get("signingSecret", "")
        return json.dumps({"signingSecret": secret})


def parameter_values(template: Mapping[str, Any], values: LocalValues) -> dict[str, str]:
    """Values for template parameters without defaults that the runtime can supply.

    A ``*JobQueue*`` parameter gets the governed queue; a Slack secret parameter a
    secret created here with ``values.slack_secret``; a policy parameter the SSM
    parameter ``/quotagov/policy`` put here with the policy; a Slack channel parameter
    (``PlatformChannel``) a channel id such as ``C0PLATFORM``; any other parameter
    without a default ``local-<Name>``. Parameters with defaults keep them.
    """
    supplied: dict[str, str] = {}
    for name, spec in (template.get("Parameters") or {}).items():
        lowered = name.lower()
        if "jobqueue" in lowered:
            supplied[name] = values.job_queue
        elif "slack" in lowered and ("secret" in lowered) and "Default" not in spec:
            client = boto3.client("secretsmanager", region_name=REGION)
            supplied[name] = client.create_secret(
                Name="quotagov/slack", SecretString=values.slack_secret
            )["ARN"]
        elif "policy" in lowered and "Default" not in spec:
            client_ssm = boto3.client("ssm", region_name=REGION)
            client_ssm.put_parameter(
                Name="/quotagov/policy", Value=values.policy_text, Type="String", Overwrite=True
            )
            supplied[name] = "/quotagov/policy"
        elif "channel" in lowered and "Default" not in spec:
            supplied[name] = f"C0{name.upper()[: -len('CHANNEL')]}"  # a valid channel id
        elif "Default" not in spec:
            supplied[name] = f"local-{name}"
    return supplied


def resource_values(
    stack: Stack, functions: Mapping[str, FunctionSpec], values: LocalValues
) -> dict[str, str]:
    """Contents for the :class:`Provisioner`: the policy parameter and the Slack secret.

    They are the stack resources a function's ``POLICY_PARAMETER`` and
    ``SLACK_SECRET_ARN`` variables ``!Ref``, by logical id.
    """
    overrides: dict[str, str] = {}
    for spec in functions.values():
        for variable, raw in spec.environment.items():
            target = raw.get("Ref") if isinstance(raw, dict) else None
            if variable == "POLICY_PARAMETER" and target in stack.resources:
                overrides[str(target)] = values.policy_text
            if variable == "SLACK_SECRET_ARN" and target in stack.resources:
                overrides[str(target)] = values.slack_secret
            if variable == "SLACK_SIGNING_SECRET_ARN" and target in stack.resources:
                overrides[str(target)] = values.signing_secret_json()
    return overrides
