"""The scenario format as pydantic models: every rule about one field, written once.

Format: ``docs/simulator/spec.md`` ("Input"). These models hold the field
rules: types (numbers are ints or floats, never booleans or strings; a number keeps its
type), ranges (times and counts not negative, ``instanceCount`` and ``maxCapacity`` at
least 1, ``schedulingPriority`` 0-9999, ``checkpointIntervalSeconds`` positive),
defaults, enumerations and the refusal of unknown fields.
The quota-share shapes come from :mod:`quotagov.batch_shapes`, shared with the
governance policy. Validation is strict (``strict=True``).

The rules that join several fields or items (unknown shares and jobs, duplicate names,
instance types outside a share's capacity limits, at most 20 shares and 1 to 5 capacity
limits per share, ``borrowLimit`` at least -1 and only with LEND_AND_BORROW, action
times, jobs that can never be admitted) are :mod:`quotagov.scheduler.scenario_checks`
(a share's own ones are :func:`quotagov.scheduler.rules.share_faults`, shared with the
engine, so a share keeps every one of its faults in one report); the schema states the
ones JSON Schema can express (``minItems``/``maxItems``, ``borrowLimit``'s minimum, "at
least one field" of an ``UpdateQuotaShare``) from the same constants.
:mod:`quotagov.scheduler.scenario_faults` turns pydantic's errors into the format's
messages; :func:`json_schema` is ``docs/scenario-format.schema.json`` (``python -m
quotagov.scheduler.scenario_schema --write`` writes it).

A job is validated into the engine's :class:`~quotagov.scheduler.models.JobSpec` as soon
as its model is valid (:class:`ConvertedTo`): a million jobs never exist as a million
model instances at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from quotagov.batch_shapes import (
    BatchShape,
    CapacityLimit,
    PreemptionConfiguration,
    ShareStrategy,
    Switch,
)
from quotagov.scheduler.models import (
    MAX_CAPACITY_LIMITS_PER_SHARE,
    MAX_SHARES,
    UNLIMITED_BORROW,
    JobSpec,
    Options,
    Queueing,
    ShareConfig,
)
from quotagov.scheduler.rules import MAX_SCHEDULING_PRIORITY, MIN_SCHEDULING_PRIORITY


@dataclass(frozen=True)
class _Seconds:
    """A number of seconds: an int or a float (never a boolean), finite, at least 0 (or,
    ``positive``, above 0). The input's type is kept (``5`` stays an int, ``5.0`` a
    float), as the output document normalizes numbers itself.

    Any fault is one ``seconds`` error carrying ``positive`` in its context; the message
    is :mod:`~quotagov.scheduler.scenario_faults`'s.
    """

    positive: bool = False

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        if self.positive:
            ints, floats = core_schema.int_schema(gt=0), core_schema.float_schema(gt=0)
        else:
            ints, floats = core_schema.int_schema(ge=0), core_schema.float_schema(ge=0)
        ints["strict"] = floats["strict"] = True
        floats["allow_inf_nan"] = False
        return core_schema.union_schema(
            [ints, floats],
            custom_error_type="seconds",
            custom_error_message="Input should be a finite number of seconds, "
            + ("above 0" if self.positive else "at least 0"),
            custom_error_context={"positive": self.positive},
        )

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "number", ("exclusiveMinimum" if self.positive else "minimum"): 0}


@dataclass(frozen=True)
class _SchemaKeywords:
    """JSON Schema keywords for a rule :mod:`~quotagov.scheduler.scenario_checks` checks
    (so the schema states it and the validator reports it once, in its own words)."""

    keywords: tuple[tuple[str, Any], ...]

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(schema)
        out.update(self.keywords)
        return out


@dataclass(frozen=True)
class ConvertedTo:
    """Validate with ``model``, then hand on ``convert(instance)`` (the instance is dropped
    at once); the JSON schema is ``model``'s."""

    model: type[BaseModel]
    convert: Callable[[Any], Any]

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.no_info_after_validator_function(
            self.convert, handler.generate_schema(self.model)
        )


def _drop_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def _optional_not_null() -> Any:
    """A field that may be left out but not given as null: its default, None, means "not
    given" and is not shown in the JSON schema."""
    return Field(default=None, json_schema_extra=_drop_default)


#: Seconds from 0 (times, durations): an int or a float, finite, at least 0.
Seconds = Annotated[float, _Seconds()]
#: Seconds above 0 (``checkpointIntervalSeconds``; null means none).
PositiveSeconds = Annotated[float, _Seconds(positive=True)]
#: A name or an instance type: a non-empty string.
Name = Annotated[str, Field(min_length=1)]
#: ``schedulingPriority``: 0-9999, higher runs first.
Priority = Annotated[int, Field(ge=MIN_SCHEDULING_PRIORITY, le=MAX_SCHEDULING_PRIORITY)]
#: A share's ``capacityLimits`` (1 to 5, one per unit: checked with the share's other
#: cross-field rules by :func:`quotagov.scheduler.rules.share_faults`).
CapacityLimits = Annotated[
    list[CapacityLimit],
    _SchemaKeywords((("minItems", 1), ("maxItems", MAX_CAPACITY_LIMITS_PER_SHARE))),
]


#: The share fields an ``UpdateQuotaShare`` may carry, in the order they are applied.
SHARE_UPDATE_FIELDS: tuple[str, ...] = (
    "capacityLimits",
    "resourceSharingConfiguration",
    "preemptionConfiguration",
    "state",
)


class ScenarioModel(BatchShape):
    """Base of the scenario's models: strict, unknown fields refused, frozen; a field's
    docstring is its description in the JSON schema.

    ``UNKNOWN_FIELDS_AFTER``: an object's unknown fields are reported after the faults of
    this many of its leading fields and before the others (the order of
    :mod:`~quotagov.scheduler.scenario_faults`).
    """

    model_config = ConfigDict(strict=True, use_attribute_docstrings=True)
    UNKNOWN_FIELDS_AFTER: ClassVar[int] = 0


class ResourceSharingConfiguration(ScenarioModel):
    """How the share lends and borrows idle capacity."""

    # borrowLimit >= -1 and only with LEND_AND_BORROW: checked with the share's other
    # cross-field rules by quotagov.scheduler.rules.share_faults.
    strategy: ShareStrategy
    """RESERVE (never lends its idle quota), LEND (lends, never borrows) or LEND_AND_BORROW."""
    borrowLimit: Annotated[int, _SchemaKeywords((("minimum", UNLIMITED_BORROW),))] = (
        UNLIMITED_BORROW
    )
    """Percent of each capacity limit the share may borrow on top of it; -1: no cap.
    Only for LEND_AND_BORROW."""


class QuotaShare(ScenarioModel):
    """A quota share, with the fields of CreateQuotaShare (without the job queue)."""

    quotaShareName: Name
    """Unique in the scenario."""
    capacityLimits: CapacityLimits
    """1 to 5 limits, one per instance type the share may run."""
    resourceSharingConfiguration: ResourceSharingConfiguration
    preemptionConfiguration: PreemptionConfiguration = PreemptionConfiguration(
        inSharePreemption="DISABLED"
    )
    """Whether the share's jobs may preempt its lower-priority jobs."""
    state: Switch = "ENABLED"
    """A DISABLED share accepts no new jobs."""

    def to_config(self) -> ShareConfig:
        """The engine's typed configuration of this share."""
        return ShareConfig.from_batch(self.model_dump())


class ServiceJob(ScenarioModel):
    """A service job as submitted (SubmitServiceJob) plus the simulator's workload fields."""

    # Field for field the engine's JobSpec (to_spec relies on it; a test checks it).

    jobName: Name
    """Unique in the scenario."""
    quotaShareName: Name
    """The share it is submitted to."""
    instanceType: Name
    """An instance type of the share's capacity limits (in effect at submission)."""
    instanceCount: int = Field(default=1, ge=1)
    """Instances it holds while started."""
    runSeconds: Seconds | None
    """Seconds of RUNNING it needs to succeed; null: runs until terminated or preempted."""
    schedulingPriority: Priority = 0
    """0-9999, higher runs first."""
    preemptionRetriesBeforeTermination: int | None = Field(default=None, ge=0)
    """null: unlimited; N: the job FAILS at its (N+1)-th preemption."""
    checkpointIntervalSeconds: PositiveSeconds | None = None
    """null: no checkpoint (a preemption loses the whole attempt)."""
    restartOverheadSeconds: Seconds = 0
    """Seconds of work added at each preemption."""
    submittedAt: Seconds
    """Submission time, seconds from 0."""

    def to_spec(self) -> JobSpec:
        """The engine's :class:`~quotagov.scheduler.models.JobSpec` (same field names)."""
        return JobSpec(**self.__dict__)


class ActionBase(ScenarioModel):
    """What every action begins with: ``at``, then its ``type`` (the discriminator, each
    action's own); alone, it checks the time of an action of no known type."""

    UNKNOWN_FIELDS_AFTER: ClassVar[int] = 2
    at: Seconds
    """When the action runs, seconds from 0 (before the submissions of that time)."""


class UpdateServiceJob(ActionBase):
    """Set a job's schedulingPriority (UpdateServiceJob)."""

    type: Literal["UpdateServiceJob"]
    jobName: Name
    """A job of the scenario, submitted before at."""
    schedulingPriority: Priority
    """0-9999, higher runs first."""


class UpdateQuotaShare(ActionBase):
    """Change a share (UpdateQuotaShare): the fields given, at least one; the others keep
    their value."""

    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": [name]} for name in SHARE_UPDATE_FIELDS]}
    )

    type: Literal["UpdateQuotaShare"]
    quotaShareName: Name
    """A share of the scenario."""
    capacityLimits: CapacityLimits = _optional_not_null()
    resourceSharingConfiguration: ResourceSharingConfiguration = _optional_not_null()
    preemptionConfiguration: PreemptionConfiguration = _optional_not_null()
    state: Switch = _optional_not_null()


class TerminateServiceJob(ActionBase):
    """Terminate a job (TerminateServiceJob): it FAILS with reason TERMINATED."""

    type: Literal["TerminateServiceJob"]
    jobName: Name
    """A job of the scenario, submitted before at."""


#: One entry of ``actions``, told apart by ``type``.
Action = Annotated[
    UpdateServiceJob | UpdateQuotaShare | TerminateServiceJob, Field(discriminator="type")
]
#: An action as validated (one of the three models).
ActionModel = UpdateServiceJob | UpdateQuotaShare | TerminateServiceJob
#: A job validated into the engine's spec at once.
JobEntry = Annotated[JobSpec, ConvertedTo(ServiceJob, ServiceJob.to_spec)]


class ScenarioOptions(ScenarioModel):
    """How the scheduler runs."""

    startupSeconds: Seconds = 0
    """Seconds from SCHEDULED to RUNNING."""
    queueing: Queueing = "STRICT_FIFO"
    """STRICT_FIFO: a share's head that cannot start blocks the jobs behind it;
    BEST_EFFORT_FIFO: it is set aside until the next event time."""
    horizonSeconds: Seconds | None = None
    """Stop at this time; null: when nothing is left to happen."""

    def to_options(self) -> Options:
        """The engine's :class:`~quotagov.scheduler.models.Options`."""
        return Options(**self.__dict__)


class ScenarioDocument(ScenarioModel):
    """A scenario for `quotagov simulate`: a service environment's capacity, the quota
    shares of one job queue, the jobs submitted to it and admin actions over time
    (docs/simulator/scenarios.md). Names must be unique; jobs and actions must name shares
    and jobs of the scenario."""

    model_config = ConfigDict(title="Scenario")
    UNKNOWN_FIELDS_AFTER: ClassVar[int] = 6

    name: str = "scenario"
    """Echoed as scenario in the output."""
    capacity: dict[str, Annotated[int, Field(ge=0)]]
    """Instances of each instance type in the service environment."""
    options: ScenarioOptions | None = None
    shares: Annotated[list[QuotaShare], _SchemaKeywords((("maxItems", MAX_SHARES),))]
    """The quota shares of the job queue (at most 20)."""
    jobs: list[JobEntry] | None = None
    """Service jobs, submitted at their submittedAt."""
    actions: list[Action] | None = None
    """Admin actions, each at its time."""


class _SchemaWithoutTitles(GenerateJsonSchema):
    """JSON schema generation without the field titles pydantic makes up ("Jobname")."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scenario document, from these models."""
    schema = ScenarioDocument.model_json_schema(
        mode="validation", schema_generator=_SchemaWithoutTitles
    )
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
