"""The quota-share configuration shapes of the AWS Batch API as pydantic models, written once.

``CreateQuotaShare`` and ``UpdateQuotaShare`` (botocore's ``batch`` model) take a
share's ``capacityLimits`` (``{capacityUnit, maxCapacity}``), its
``resourceSharingConfiguration`` (``{strategy, borrowLimit}``) and its
``preemptionConfiguration`` (``{inSharePreemption}``). Both documents that describe
quota shares build on these models: the governance policy
(:mod:`quotagov.policy.models`) and the scenario format of the local scheduler
(:mod:`quotagov.scheduler.scenario_models`).

Field rules (AWS Batch service quotas page; ``docs/simulator/spec.md``,
"Input"): ``capacityUnit`` a non-empty instance type, ``maxCapacity`` at least 1
instance, ``inSharePreemption`` ENABLED or DISABLED, the strategies of
:data:`~quotagov.batch_semantics.ShareStrategy`. ``resourceSharingConfiguration`` is
each document's own (the policy leaves ``borrowLimit`` out when not given, a scenario
defaults it to -1); the rules that join several fields (at most 5 capacity limits on a
share, one per unit, ``borrowLimit`` at least -1 and only with LEND_AND_BORROW) belong
to each document's cross-field checks. The models forbid unknown fields and are
frozen; they are lax unless validated with ``strict=True`` (the scenario format is).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from quotagov.batch_semantics import ShareStrategy, Switch

__all__ = [
    "BatchShape",
    "CapacityLimit",
    "PreemptionConfiguration",
    "ShareStrategy",
    "Switch",
]


class BatchShape(BaseModel):
    """Base of the Batch request shapes: unknown fields refused, instances frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class CapacityLimit(BatchShape):
    """A capacity limit: an instance type (capacityUnit) and how many instances of it
    (maxCapacity, at least 1)."""

    capacityUnit: str = Field(min_length=1)
    maxCapacity: int = Field(ge=1)


class PreemptionConfiguration(BatchShape):
    """inSharePreemption ENABLED or DISABLED: whether a share's jobs may preempt
    lower-priority jobs of the same share."""

    inSharePreemption: Switch
