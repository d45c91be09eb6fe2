"""The CloudTrail record of a Batch management call, as EventBridge delivers it in ``detail``.

Field names follow the CloudTrail record contents reference (facts sheet 4.3):
``userIdentity``, ``eventTime``, ``eventSource``, ``eventName``, ``requestParameters``,
``responseElements``, ``errorCode``/``errorMessage`` (only on failed calls), ``eventID``
(unique per record, the dedup key). Unknown extra fields are kept and ignored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: Batch calls that change policy, audited by quotagov (issue 7; the EventBridge rule's
#: ``detail.eventName`` list).
AUDITED_CALLS: tuple[str, ...] = (
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

    @property
    def failed(self) -> bool:
        """True when the call failed (``errorCode`` present): an attempt, not a change."""
        return bool(self.errorCode)

    @property
    def account(self) -> str:
        """The account the call was made in."""
        return self.recipientAccountId or self.userIdentity.accountId or ""

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


def iso_utc(epoch_seconds: float) -> str:
    """Epoch seconds as ISO-8601 UTC with a ``Z`` (whole seconds when exact)."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    text = moment.isoformat(timespec="milliseconds" if moment.microsecond else "seconds")
    return text.replace("+00:00", "Z")
