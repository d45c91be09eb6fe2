"""The CloudTrail record of a Batch management call, as EventBridge delivers it in ``detail``.

Field names follow the CloudTrail record contents reference (AWS CloudTrail User Guide,
"CloudTrail record contents for management, data, and network activity events",
https://docs.aws.amazon.com/awscloudtrail/latest/userguide/cloudtrail-event-reference-record-contents.html):
``userIdentity``, ``eventTime``, ``eventSource``, ``eventName``, ``requestParameters``,
``responseElements``, ``errorCode``/``errorMessage`` (only on failed calls), ``eventID``
(unique per record, the dedup key). Unknown extra fields are kept and ignored.

The request parameters quotagov interprets in a successful call (the quota share
configuration, a service job's ``schedulingPriority``, the names of resources) must
have the types of the Batch API (:func:`request_parameter_fault`); a successful call
whose parameters do not is refused where the event is parsed (a pydantic
``ValidationError`` naming the field and the fault) and by
:meth:`~quotagov.governance.audit.trail.AuditTrail.record_call` (an
:class:`AuditEventError`), so a wrong type never surfaces as a ``TypeError`` deep in the
findings. A failed call (``errorCode``) is recorded as an attempt whatever its
parameters: Batch refusing malformed parameters is one of the reasons a call fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from quotagov.governance.audit.errors import AuditEventError as AuditEventError
from quotagov.governance.audit.errors import ForeignCallError as ForeignCallError

#: Batch calls that change policy, audited by quotagov (the EventBridge rule's
#: ``detail.eventName`` list).
AUDITED_CALLS: tuple[str, ...] = (
    "SubmitServiceJob",  # a job submitted around quotagov is a finding
    "CreateQuotaShare",
    "UpdateQuotaShare",
    "DeleteQuotaShare",
    "CreateSchedulingPolicy",
    "UpdateSchedulingPolicy",
    "DeleteSchedulingPolicy",
    "CreateJobQueue",
    "UpdateJobQueue",
    "DeleteJobQueue",
    "CreateServiceEnvironment",
    "UpdateServiceEnvironment",
    "DeleteServiceEnvironment",
    "UpdateServiceJob",
    "TerminateServiceJob",
)


#: Region name prefix -> partition, for records without an ARN to read it from
#: (AWS General Reference, "AWS partitions"); every other Region is in ``aws``.
_REGION_PARTITIONS = (
    ("cn-", "aws-cn"),
    ("us-gov-", "aws-us-gov"),
    ("us-isob-", "aws-iso-b"),
    ("us-iso-", "aws-iso"),
    ("eu-isoe-", "aws-iso-e"),
    ("us-isof-", "aws-iso-f"),
)


#: Request parameters naming a resource (or a state): a string when present.
STRING_PARAMETERS = (
    "quotaShareArn",
    "quotaShareName",
    "jobQueue",
    "jobQueueName",
    "arn",
    "name",
    "serviceEnvironment",
    "serviceEnvironmentName",
    "jobId",
)


def _whole(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _shape_fault(path: str, value: Any, kind: str, *, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    ok = {
        "a string": isinstance(value, str),
        "a whole number": _whole(value),
        "an object": isinstance(value, Mapping),
        "a list": isinstance(value, list),
    }[kind]
    return None if ok else f"{path}: {value!r} is not {kind}"


def _quota_share_fault(params: Mapping[str, Any]) -> str | None:
    base = "requestParameters"
    limits = params.get("capacityLimits")
    if fault := _shape_fault(f"{base}.capacityLimits", limits, "a list"):
        return fault
    for i, limit in enumerate(limits or []):
        where = f"{base}.capacityLimits[{i}]"
        fault = _shape_fault(where, limit, "an object", optional=False) or (
            _shape_fault(
                f"{where}.capacityUnit", limit.get("capacityUnit"), "a string", optional=False
            )
            or _shape_fault(
                f"{where}.maxCapacity", limit.get("maxCapacity"), "a whole number", optional=False
            )
        )
        if fault:
            return fault
    for name, fields in (
        ("resourceSharingConfiguration", {"strategy": "a string", "borrowLimit": "a whole number"}),
        ("preemptionConfiguration", {"inSharePreemption": "a string"}),
    ):
        value = params.get(name)
        if fault := _shape_fault(f"{base}.{name}", value, "an object"):
            return fault
        for field, kind in fields.items():
            if fault := _shape_fault(f"{base}.{name}.{field}", (value or {}).get(field), kind):
                return fault
    return _shape_fault(f"{base}.state", params.get("state"), "a string")


def request_parameter_fault(event_name: str, params: Mapping[str, Any]) -> str | None:
    """The first parameter of a successful ``event_name`` call quotagov cannot interpret.

    Checked (each may be absent or null unless said otherwise): the resource names in
    :data:`STRING_PARAMETERS` are strings; for ``CreateQuotaShare``/``UpdateQuotaShare``,
    ``capacityLimits`` is a list of objects with a string ``capacityUnit`` and a whole
    number ``maxCapacity`` (both required), ``resourceSharingConfiguration`` an object with
    a string ``strategy`` and a whole number ``borrowLimit`` (percent, -1 unlimited),
    ``preemptionConfiguration`` an object with a string ``inSharePreemption``, ``state`` a
    string; for ``UpdateServiceJob`` and ``SubmitServiceJob``, ``schedulingPriority`` is
    a whole number. Values of
    the right type are not checked against Batch's enums or ranges (Batch accepted them).

    Returns:
        ``"requestParameters.<path>: <value> is not <type>"``, or None when all fit.
    """
    for name in STRING_PARAMETERS:
        if fault := _shape_fault(f"requestParameters.{name}", params.get(name), "a string"):
            return fault
    if event_name in ("CreateQuotaShare", "UpdateQuotaShare"):
        return _quota_share_fault(params)
    if event_name in ("UpdateServiceJob", "SubmitServiceJob"):
        priority = params.get("schedulingPriority")
        return _shape_fault("requestParameters.schedulingPriority", priority, "a whole number")
    return None


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class SessionIssuer(_Lenient):
    """``userIdentity.sessionContext.sessionIssuer``: the role behind a session."""

    type: str | None = None
    arn: str | None = None
    userName: str | None = None


class SessionContext(_Lenient):
    """``userIdentity.sessionContext``."""

    sessionIssuer: SessionIssuer | None = None


class UserIdentity(_Lenient):
    """``userIdentity``: who made the call (``arn`` for IAM users and assumed roles,
    ``invokedBy`` for AWS services)."""

    type: str = Field(min_length=1)
    principalId: str | None = None
    arn: str | None = None
    accountId: str | None = None
    invokedBy: str | None = None
    sessionContext: SessionContext | None = None

    @property
    def principal(self) -> str:
        """The best name of the caller: its ARN, else the invoking service, else its id."""
        return self.arn or self.invokedBy or self.principalId or self.type

    @property
    def issuer_arn(self) -> str | None:
        """The ARN of the role behind an assumed-role session, if any."""
        ctx = self.sessionContext
        return ctx.sessionIssuer.arn if ctx and ctx.sessionIssuer else None


class CloudTrailApiCall(_Lenient):
    """The ``detail`` of an ``AWS API Call via CloudTrail`` event from ``aws.batch``."""

    eventVersion: str | None = None
    userIdentity: UserIdentity
    eventTime: datetime
    eventSource: Literal["batch.amazonaws.com"]
    eventName: str = Field(min_length=1)
    awsRegion: str = Field(min_length=1)
    sourceIPAddress: str | None = None
    userAgent: str | None = None
    requestParameters: dict[str, Any] | None = None
    responseElements: dict[str, Any] | None = None
    errorCode: str | None = None
    errorMessage: str | None = None
    requestID: str | None = None
    eventID: str = Field(min_length=1)
    recipientAccountId: str | None = None

    @model_validator(mode="after")
    def _interpretable(self) -> CloudTrailApiCall:
        """Refuse a successful call whose request parameters have the wrong types."""
        fault = self.parameter_fault()
        if fault is not None:
            raise PydanticCustomError("request_parameters", "{fault}", {"fault": fault})
        return self

    def parameter_fault(self) -> str | None:
        """For a successful call, :func:`request_parameter_fault`; None for a failed one."""
        if self.failed:
            return None
        return request_parameter_fault(self.eventName, self.parameters)

    def check_parameters(self) -> None:
        """Raise when a successful call's parameters cannot be interpreted.

        For calls built without validation (``model_copy``/``model_construct``).

        Raises:
            AuditEventError: ``detail.requestParameters.<path>: <value> is not <type>``.
        """
        fault = self.parameter_fault()
        if fault is not None:
            raise AuditEventError(f"detail.{fault}")

    @property
    def failed(self) -> bool:
        """True when the call failed (``errorCode`` present): an attempt, not a change."""
        return bool(self.errorCode)

    @property
    def account(self) -> str:
        """The account the call was made in."""
        return self.recipientAccountId or self.userIdentity.accountId or ""

    @property
    def partition(self) -> str:
        """The record's partition (``aws``, ``aws-cn``, ``aws-us-gov``, ...): from the
        caller's ARN, else from ``awsRegion``. Never assumed to be ``aws``."""
        for arn in (self.userIdentity.arn, self.userIdentity.issuer_arn):
            if arn and arn.startswith("arn:") and arn.count(":") >= 5:
                return arn.split(":", 2)[1]
        for prefix, partition in _REGION_PARTITIONS:
            if self.awsRegion.startswith(prefix):
                return partition
        return "aws"

    @property
    def event_ms(self) -> int:
        """``eventTime`` in epoch milliseconds."""
        moment = self.eventTime
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)

    @property
    def event_time_text(self) -> str:
        """``eventTime`` as ISO-8601 UTC with a ``Z``."""
        return iso_utc(self.event_ms / 1000)

    @property
    def parameters(self) -> dict[str, Any]:
        """``requestParameters``, empty when CloudTrail left them out."""
        return dict(self.requestParameters or {})


class LambdaInvokeCall(CloudTrailApiCall):
    """The ``detail`` of a CloudTrail data event for a Lambda ``Invoke`` (a trail logging
    Lambda data events delivers it to EventBridge as ``AWS API Call via CloudTrail`` from
    ``aws.lambda``; AWS Lambda Developer Guide, "Logging AWS Lambda API calls using AWS
    CloudTrail", https://docs.aws.amazon.com/lambda/latest/dg/logging-using-cloudtrail.html).

    ``requestParameters.functionName`` names the function (its ARN); ``resources`` lists
    it too. A service invoking as a trigger (API Gateway, EventBridge, an event source
    mapping) appears with ``userIdentity.type`` ``AWSService``.
    """

    eventSource: Literal["lambda.amazonaws.com"]  # type: ignore[assignment]
    eventName: Literal["Invoke"]
    resources: list[dict[str, Any]] | None = None

    @property
    def function_arn(self) -> str:
        """The invoked function's ARN (or name as recorded), ``""`` when absent."""
        name = self.parameters.get("functionName")
        if isinstance(name, str) and name:
            return name
        for resource in self.resources or []:
            arn = resource.get("ARN")
            if isinstance(arn, str) and ":function:" in arn:
                return arn
        return ""

    @property
    def function_name(self) -> str:
        """The function's name: the ARN's ``function:<name>`` part, qualifier dropped."""
        arn = self.function_arn
        if ":function:" in arn:
            return arn.split(":function:", 1)[1].split(":", 1)[0]
        return arn

    @property
    def by_trigger(self) -> bool:
        """True when an AWS service invoked the function (its trigger), not a principal."""
        return self.userIdentity.type == "AWSService"


def iso_utc(epoch_seconds: float) -> str:
    """Epoch seconds as ISO-8601 UTC with a ``Z`` (whole seconds when exact)."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    text = moment.isoformat(timespec="milliseconds" if moment.microsecond else "seconds")
    return text.replace("+00:00", "Z")
