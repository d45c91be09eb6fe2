"""Typed inputs of the local scheduler: quota shares, options and service-job specs.

Field names are the Batch API's (``CreateQuotaShare``, ``SubmitServiceJob``,
``UpdateServiceJob``) and the scenario format's (``docs/simulator/spec.md``),
so a share block can be passed to boto3 unchanged (:meth:`ShareConfig.to_batch`).

Units: times in seconds (int or float), capacities and counts in instances,
``schedulingPriority`` in 0-9999 (higher runs first), ``borrowLimit`` in percent of
the share's own ``maxCapacity`` (-1 = no cap).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from quotagov.batch_semantics import UNLIMITED_BORROW as UNLIMITED_BORROW  # -1: no cap
from quotagov.batch_semantics import ShareStrategy, Switch

#: Resource-sharing strategies of a quota share (AWS Batch ``resourceSharingConfiguration``).
Strategy = ShareStrategy
#: ``preemptionConfiguration.inSharePreemption`` values.
InSharePreemption = Switch
#: Quota share ``state`` values.
ShareState = Switch
#: Queueing of a share's RUNNABLE jobs (scenario ``options.queueing``).
Queueing = Literal["STRICT_FIFO", "BEST_EFFORT_FIFO"]

STRATEGIES: tuple[str, ...] = get_args(Strategy)
IN_SHARE_PREEMPTION_VALUES: tuple[str, ...] = get_args(InSharePreemption)
SHARE_STATES: tuple[str, ...] = get_args(ShareState)
QUEUEING_VALUES: tuple[str, ...] = get_args(Queueing)

#: Limits from the AWS Batch quota-management documentation (Service quotas page).
MAX_SHARES = 20
MAX_CAPACITY_LIMITS_PER_SHARE = 5


@dataclass(frozen=True, slots=True)
class CapacityLimit:
    """One entry of a share's ``capacityLimits``: ``maxCapacity`` instances of ``capacityUnit``."""

    capacityUnit: str
    maxCapacity: int

    def to_batch(self) -> dict[str, Any]:
        """The Batch API shape ``{"capacityUnit": str, "maxCapacity": int}``."""
        return {"capacityUnit": self.capacityUnit, "maxCapacity": self.maxCapacity}


@dataclass(frozen=True, slots=True)
class ResourceSharingConfiguration:
    """How a share lends and borrows idle capacity.

    ``borrowLimit`` is a percentage of each of the share's ``maxCapacity`` values
    (-1: no cap); it only applies to ``LEND_AND_BORROW``.
    """

    strategy: Strategy
    borrowLimit: int = UNLIMITED_BORROW

    def to_batch(self) -> dict[str, Any]:
        """The Batch API shape; ``borrowLimit`` only for ``LEND_AND_BORROW``."""
        out: dict[str, Any] = {"strategy": self.strategy}
        if self.strategy == "LEND_AND_BORROW":
            out["borrowLimit"] = self.borrowLimit
        return out


@dataclass(frozen=True, slots=True)
class PreemptionConfiguration:
    """``inSharePreemption``: whether higher-priority jobs may preempt lower ones of the share."""

    inSharePreemption: InSharePreemption = "DISABLED"

    def to_batch(self) -> dict[str, Any]:
        """The Batch API shape ``{"inSharePreemption": "ENABLED" | "DISABLED"}``."""
        return {"inSharePreemption": self.inSharePreemption}


@dataclass(frozen=True, slots=True)
class ShareConfig:
    """A quota share's configuration, as in ``CreateQuotaShare``.

    Attributes:
        quotaShareName: the share's name (unique in the scenario).
        capacityLimits: 1 to 5 limits, one per instance type the share may run.
        resourceSharingConfiguration: strategy and borrow limit.
        preemptionConfiguration: in-share preemption switch (default DISABLED).
        state: ENABLED or DISABLED (a DISABLED share accepts no new jobs).
    """

    quotaShareName: str
    capacityLimits: tuple[CapacityLimit, ...]
    resourceSharingConfiguration: ResourceSharingConfiguration
    preemptionConfiguration: PreemptionConfiguration = field(
        default_factory=PreemptionConfiguration
    )
    state: ShareState = "ENABLED"

    def limit(self, instance_type: str) -> int | None:
        """``maxCapacity`` for ``instance_type``, or None when the share has no limit for it."""
        for cap in self.capacityLimits:
            if cap.capacityUnit == instance_type:
                return cap.maxCapacity
        return None

    def limits(self) -> dict[str, int]:
        """``{capacityUnit: maxCapacity}``."""
        return {c.capacityUnit: c.maxCapacity for c in self.capacityLimits}

    def to_batch(self) -> dict[str, Any]:
        """The share as ``CreateQuotaShare`` keyword arguments (without the job queue)."""
        return {
            "quotaShareName": self.quotaShareName,
            "capacityLimits": [c.to_batch() for c in self.capacityLimits],
            "resourceSharingConfiguration": self.resourceSharingConfiguration.to_batch(),
            "preemptionConfiguration": self.preemptionConfiguration.to_batch(),
            "state": self.state,
        }

    @classmethod
    def from_batch(cls, data: Mapping[str, Any]) -> ShareConfig:
        """Build from a Batch-shaped mapping (unchecked: see :mod:`quotagov.scheduler.scenario`).

        Raises:
            KeyError, TypeError, ValueError: on a malformed mapping.
        """
        rsc = data["resourceSharingConfiguration"]
        pc = data.get("preemptionConfiguration") or {}
        return cls(
            quotaShareName=str(data["quotaShareName"]),
            capacityLimits=tuple(
                CapacityLimit(str(c["capacityUnit"]), int(c["maxCapacity"]))
                for c in data["capacityLimits"]
            ),
            resourceSharingConfiguration=ResourceSharingConfiguration(
                strategy=rsc["strategy"],
                borrowLimit=int(rsc.get("borrowLimit", UNLIMITED_BORROW)),
            ),
            preemptionConfiguration=PreemptionConfiguration(
                pc.get("inSharePreemption", "DISABLED")
            ),
            state=data.get("state", "ENABLED"),
        )


@dataclass(frozen=True, slots=True)
class Options:
    """Scenario options.

    Attributes:
        startupSeconds: seconds a started job spends SCHEDULED/STARTING before RUNNING.
        queueing: STRICT_FIFO (a head that cannot start blocks its share) or
            BEST_EFFORT_FIFO (it is set aside until the next event time).
        horizonSeconds: stop simulating after this time (None: run until idle).
    """

    startupSeconds: float = 0
    queueing: Queueing = "STRICT_FIFO"
    horizonSeconds: float | None = None


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A service job as submitted (``SubmitServiceJob`` plus the simulator's workload fields).

    Attributes:
        jobName: unique name.
        quotaShareName: the share it is submitted to.
        instanceType: SageMaker training instance type (a share capacity unit).
        instanceCount: instances it holds while started (>= 1).
        runSeconds: seconds of RUNNING it needs to succeed; None = never completes
            by itself (runs until terminated or preempted).
        schedulingPriority: 0-9999, higher first.
        preemptionRetriesBeforeTermination: None = unlimited; N = FAILED at the
            (N+1)-th preemption.
        checkpointIntervalSeconds: None = no checkpoint (a preemption loses the
            whole attempt).
        restartOverheadSeconds: work added to the remaining work at each preemption.
        submittedAt: submission time in seconds (scenario files; the step API
            :meth:`Engine.submit` submits at ``engine.now``).
    """

    jobName: str
    quotaShareName: str
    instanceType: str
    instanceCount: int = 1
    runSeconds: float | None = None
    schedulingPriority: int = 0
    preemptionRetriesBeforeTermination: int | None = None
    checkpointIntervalSeconds: float | None = None
    restartOverheadSeconds: float = 0
    submittedAt: float = 0
