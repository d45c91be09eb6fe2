"""Configuration checks and updates of the engine: the initial set-up, ``UpdateQuotaShare``.

Rules (``docs/simulator/spec.md``, "Input", and the AWS Batch
``UpdateQuotaShare`` API): a job queue holds at most 20 shares with unique names; each
share's fields are checked by :func:`~.rules.share_faults`; capacity counts are
instances, never negative. An update replaces the fields it gives and keeps the others,
and is applied only when the resulting configuration is valid. Every fault is reported,
each message starting with the field path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from quotagov.scheduler.errors import InvalidConfigError
from quotagov.scheduler.models import (
    MAX_SHARES,
    CapacityLimit,
    PreemptionConfiguration,
    ResourceSharingConfiguration,
    ShareConfig,
)
from quotagov.scheduler.rules import share_faults


def setup_faults(capacity: Mapping[str, int], shares: Sequence[ShareConfig]) -> list[str]:
    """The faults of an engine's shares and capacity (instances per type); [] when valid."""
    faults: list[str] = []
    if len(shares) > MAX_SHARES:
        faults.append(f"shares: {len(shares)} shares, a job queue holds at most {MAX_SHARES}")
    names: set[str] = set()
    for i, share in enumerate(shares):
        if share.quotaShareName in names:
            faults.append(f"shares[{i}].quotaShareName: duplicate share {share.quotaShareName!r}")
        names.add(share.quotaShareName)
        faults += share_faults(share, f"shares[{i}]")
    for unit, count in capacity.items():
        if count < 0:
            faults.append(f"capacity.{unit}: {count} is negative")
    return faults


def updated_share(
    config: ShareConfig,
    *,
    capacityLimits: Sequence[CapacityLimit | Mapping[str, Any]] | None = None,
    resourceSharingConfiguration: ResourceSharingConfiguration | Mapping[str, Any] | None = None,
    preemptionConfiguration: PreemptionConfiguration | Mapping[str, Any] | None = None,
    state: str | None = None,
) -> ShareConfig:
    """``config`` with the given fields replaced (typed models or Batch-shaped mappings).

    Raises:
        InvalidConfigError: a field is malformed or the result is invalid.
    """
    name = config.quotaShareName
    changes: dict[str, Any] = {}
    try:
        if capacityLimits is not None:
            changes["capacityLimits"] = _as_capacity_limits(capacityLimits)
        if resourceSharingConfiguration is not None:
            changes["resourceSharingConfiguration"] = _as_resource_sharing(
                resourceSharingConfiguration
            )
        if preemptionConfiguration is not None:
            pc = preemptionConfiguration
            if not isinstance(pc, PreemptionConfiguration):
                pc = PreemptionConfiguration(pc["inSharePreemption"])
            changes["preemptionConfiguration"] = pc
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidConfigError([f"{name}: malformed update ({exc!r})"]) from exc
    if state is not None:
        changes["state"] = state
    new = dataclasses.replace(config, **changes)
    faults = share_faults(new, f"quotaShare {name!r}")
    if faults:
        raise InvalidConfigError(faults)
    return new


def _as_resource_sharing(
    rsc: ResourceSharingConfiguration | Mapping[str, Any],
) -> ResourceSharingConfiguration:
    if isinstance(rsc, ResourceSharingConfiguration):
        return rsc
    return ResourceSharingConfiguration(
        strategy=rsc["strategy"], borrowLimit=int(rsc.get("borrowLimit", -1))
    )


def _as_capacity_limits(
    items: Sequence[CapacityLimit | Mapping[str, Any]],
) -> tuple[CapacityLimit, ...]:
    out: list[CapacityLimit] = []
    for item in items:
        if isinstance(item, CapacityLimit):
            out.append(item)
        else:
            out.append(CapacityLimit(str(item["capacityUnit"]), int(item["maxCapacity"])))
    return tuple(out)
