"""Pydantic models of the ``Batch Service Job State Change`` event (Powertools Parser).

Shape: the EventBridge envelope (``EventBridgeModel``) whose ``detail`` mirrors the
``DescribeServiceJob`` response minus ``tags`` and ``serviceRequestPayload``
(AWS Batch User Guide, "Service job state change events",
https://docs.aws.amazon.com/batch/latest/userguide/service-job-events.html).
Only ``detail.jobId`` and ``detail.status`` are required: AWS warns that fields can be
added at any time and does not say which newer members (``quotaShareName``,
``preemptionSummary``, ``capacityUsage``, ...) every event carries, so unknown fields
are kept (``extra="allow"``) and every other field is optional. An optional member
that is ``null`` reads as absent: ``attempts``, ``capacityUsage`` and
``preemptionSummary.recentPreemptedAttempts`` as ``[]``, the others as None.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from quotagov.governance.job_state import StateEvent
from quotagov.scheduler.state import JobStatus

DETAIL_TYPE = "Batch Service Job State Change"
SOURCE = "aws.batch"

_T = TypeVar("_T")


def _none_as_empty(value: Any) -> Any:
    """``null`` for an optional list means "none": ``[]`` (any other value unchanged)."""
    return [] if value is None else value


#: A list member that may be absent or ``null`` in the event; both read as ``[]``.
NullableList = Annotated[list[_T], BeforeValidator(_none_as_empty)]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ServiceResourceId(_Open):
    """``{name: "TrainingJobArn", value: <arn>}``."""

    name: str | None = None
    value: str | None = None


class ServiceJobAttempt(_Open):
    """One attempt (a SageMaker training job); times in epoch ms."""

    serviceResourceId: ServiceResourceId | None = None
    startedAt: int | None = None
    stoppedAt: int | None = None
    statusReason: str | None = None


class PreemptionSummary(_Open):
    """``preemptionSummary``: total preempted attempts and a window of recent ones."""

    preemptedAttemptCount: int | None = Field(default=None, ge=0)
    recentPreemptedAttempts: NullableList[ServiceJobAttempt] = Field(default_factory=list)


class CapacityUsage(_Open):
    """``{capacityUnit: <instance type>, quantity: <instances>}``."""

    capacityUnit: str | None = None
    quantity: float | None = None


class ServiceJobStateDetail(_Open):
    """``detail`` of the event; ``jobId`` and ``status`` are required, the rest optional."""

    jobId: str = Field(min_length=1)
    status: JobStatus
    jobArn: str | None = None
    jobName: str | None = None
    jobQueue: str | None = None
    serviceJobType: str | None = None
    quotaShareName: str | None = None
    schedulingPriority: int | None = None
    statusReason: str | None = None
    createdAt: int | None = None
    scheduledAt: int | None = None
    startedAt: int | None = None
    stoppedAt: int | None = None
    attempts: NullableList[ServiceJobAttempt] = Field(default_factory=list)
    preemptionSummary: PreemptionSummary | None = None
    capacityUsage: NullableList[CapacityUsage] = Field(default_factory=list)


class ServiceJobStateChangeEvent(EventBridgeModel):
    """The whole envelope; ``detail-type`` must be ``Batch Service Job State Change``."""

    detail_type: Literal["Batch Service Job State Change"] = Field(alias="detail-type")
    detail: ServiceJobStateDetail

    def to_state_event(self) -> StateEvent:
        """The facts the job-state use case folds (:class:`StateEvent`)."""
        return StateEvent.from_detail(
            self.detail.model_dump(exclude_none=True),
            event_id=self.id,
            event_time_ms=int(self.time.timestamp() * 1000),
        )


class MalformedEventError(ValueError):
    """An event that cannot be a service-job state change; ``reason`` names the fields."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_state_change(event: object) -> ServiceJobStateChangeEvent:
    """Validate one EventBridge event with Powertools Parser.

    Raises:
        MalformedEventError: with a reason naming each faulty field, e.g.
            ``"detail.jobId: Field required"``.
    """
    if not isinstance(event, dict):
        raise MalformedEventError(f"(event): expected a JSON object, got {type(event).__name__}")
    try:
        return parse(event=event, model=ServiceJobStateChangeEvent)
    except ValidationError as error:
        raise MalformedEventError(_reason(error)) from None
    except Exception as error:  # Powertools wraps some failures in its own exceptions
        cause = error.__cause__
        if isinstance(cause, ValidationError):
            raise MalformedEventError(_reason(cause)) from None
        raise MalformedEventError(f"(event): {error}") from None


def _reason(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        path = ".".join(str(p) for p in item["loc"]) or "(event)"
        parts.append(f"{path}: {item['msg']}")
    return "; ".join(parts)
