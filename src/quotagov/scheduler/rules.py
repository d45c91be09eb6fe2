"""Checks of typed share configurations and job specs, shared by the engine and scenarios.

Limits come from the AWS Batch quota-management pages (at most 20 shares per job
queue, 1 to 5 capacity limits per share, ``maxCapacity`` at least 1, ``borrowLimit``
at least -1 and only with LEND_AND_BORROW, ``schedulingPriority`` 0-9999) and from
``docs/simulator/spec.md`` ("Invalid input"). Every function returns one
message per fault, each starting with the field path.
"""

from __future__ import annotations

from quotagov.scheduler.models import (
    IN_SHARE_PREEMPTION_VALUES,
    MAX_CAPACITY_LIMITS_PER_SHARE,
    SHARE_STATES,
    STRATEGIES,
    UNLIMITED_BORROW,
    JobSpec,
    ShareConfig,
)

MIN_SCHEDULING_PRIORITY = 0
MAX_SCHEDULING_PRIORITY = 9999


def share_faults(config: ShareConfig, path: str) -> list[str]:
    """Faults of one share configuration; ``path`` prefixes every message (``shares[0]``)."""
    faults: list[str] = []
    limits = config.capacityLimits
    if not limits:
        faults.append(f"{path}.capacityLimits: a share needs at least 1 capacity limit")
    if len(limits) > MAX_CAPACITY_LIMITS_PER_SHARE:
        faults.append(
            f"{path}.capacityLimits: {len(limits)} capacity limits, "
            f"a share has at most {MAX_CAPACITY_LIMITS_PER_SHARE}"
        )
    seen: set[str] = set()
    for i, cap in enumerate(limits):
        if cap.capacityUnit in seen:
            faults.append(
                f"{path}.capacityLimits[{i}].capacityUnit: "
                f"duplicate capacity unit {cap.capacityUnit!r}"
            )
        seen.add(cap.capacityUnit)
        if cap.maxCapacity < 1:
            faults.append(f"{path}.capacityLimits[{i}].maxCapacity: {cap.maxCapacity} is below 1")
    rsc = config.resourceSharingConfiguration
    if rsc.strategy not in STRATEGIES:
        faults.append(
            f"{path}.resourceSharingConfiguration.strategy: {rsc.strategy!r} is not one of "
            + ", ".join(STRATEGIES)
        )
    if rsc.borrowLimit < UNLIMITED_BORROW:
        faults.append(
            f"{path}.resourceSharingConfiguration.borrowLimit: {rsc.borrowLimit} is below -1"
        )
    elif rsc.borrowLimit != UNLIMITED_BORROW and rsc.strategy != "LEND_AND_BORROW":
        faults.append(
            f"{path}.resourceSharingConfiguration.borrowLimit: only valid with "
            f"LEND_AND_BORROW, the strategy is {rsc.strategy}"
        )
    isp = config.preemptionConfiguration.inSharePreemption
    if isp not in IN_SHARE_PREEMPTION_VALUES:
        faults.append(
            f"{path}.preemptionConfiguration.inSharePreemption: {isp!r} is not ENABLED or DISABLED"
        )
    if config.state not in SHARE_STATES:
        faults.append(f"{path}.state: {config.state!r} is not ENABLED or DISABLED")
    return faults


def priority_faults(priority: int, path: str) -> list[str]:
    """Faults of a ``schedulingPriority`` value (0-9999)."""
    if not MIN_SCHEDULING_PRIORITY <= priority <= MAX_SCHEDULING_PRIORITY:
        return [
            f"{path}: {priority} is outside {MIN_SCHEDULING_PRIORITY}-{MAX_SCHEDULING_PRIORITY}"
        ]
    return []


def job_faults(spec: JobSpec, path: str) -> list[str]:
    """Faults of one job spec's own values (not its references to shares)."""
    faults: list[str] = []
    if spec.instanceCount < 1:
        faults.append(f"{path}.instanceCount: {spec.instanceCount} is below 1")
    if spec.runSeconds is not None and spec.runSeconds < 0:
        faults.append(f"{path}.runSeconds: {spec.runSeconds} is negative")
    faults += priority_faults(spec.schedulingPriority, f"{path}.schedulingPriority")
    retries = spec.preemptionRetriesBeforeTermination
    if retries is not None and retries < 0:
        faults.append(f"{path}.preemptionRetriesBeforeTermination: {retries} is negative")
    interval = spec.checkpointIntervalSeconds
    if interval is not None and interval <= 0:
        faults.append(
            f"{path}.checkpointIntervalSeconds: {interval} is not positive (use null for none)"
        )
    if spec.restartOverheadSeconds < 0:
        faults.append(f"{path}.restartOverheadSeconds: {spec.restartOverheadSeconds} is negative")
    if spec.submittedAt < 0:
        faults.append(f"{path}.submittedAt: {spec.submittedAt} is negative")
    return faults
