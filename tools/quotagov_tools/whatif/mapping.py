"""Command-line mappings of the what-if importers: ``--map``, ``--gpu-type``, ``--capacity``.

- ``--map KEY=TEAM:CLASS[:LEVEL]``: places a workload group (an OpenB QoS class, a
  scenario's or history's quota share) into a policy team, workload class and,
  optionally, priority level (default: the team's first direct level).
- ``--gpu-type N=TYPE[*COUNT]``: a task asking for ``N`` GPUs becomes ``COUNT``
  (default 1) instances of ``TYPE`` (``ml.g5.xlarge`` has 1 GPU, ``ml.g5.12xlarge`` 4,
  ``ml.p4d.24xlarge`` 8: ``examples/traces/README.md``).
- ``--capacity TYPE=N``: instances of ``TYPE`` in the service environment.

A ``--map`` target (team, class, level) that none of the policies compared has is an
option fault (:func:`placement_faults`), not thousands of refused jobs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from quotagov.policy.models import Policy
from quotagov_tools.whatif.errors import OptionError

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_TYPE = re.compile(r"^ml\.[a-z0-9-]+\.[a-z0-9-]+$")

#: GPUs per instance of the SageMaker types the trace README names (and their family).
KNOWN_GPUS: dict[str, int] = {
    "ml.g5.xlarge": 1,
    "ml.g5.2xlarge": 1,
    "ml.g5.4xlarge": 1,
    "ml.g5.8xlarge": 1,
    "ml.g5.16xlarge": 1,
    "ml.g5.12xlarge": 4,
    "ml.g5.24xlarge": 4,
    "ml.g5.48xlarge": 8,
    "ml.p4d.24xlarge": 8,
    "ml.p5.48xlarge": 8,
}


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a workload group goes in the policy: team, class, optional level."""

    team: str
    workloadClass: str
    priorityLevel: str | None = None


@dataclass(frozen=True, slots=True)
class GpuType:
    """``COUNT`` instances of ``instanceType`` for a task of some GPU count."""

    instanceType: str
    instanceCount: int = 1


def parse_maps(values: Iterable[str]) -> dict[str, Placement]:
    """``["LS=research:exploratory", "BE=applied:scheduled:low"]`` -> placements.

    Raises:
        OptionError: a value is not ``KEY=TEAM:CLASS[:LEVEL]`` or a key is repeated.
    """
    out: dict[str, Placement] = {}
    faults: list[str] = []
    for value in values:
        key, sep, rest = value.partition("=")
        parts = rest.split(":")
        if not sep or not key or len(parts) not in (2, 3) or not all(_NAME.match(p) for p in parts):
            faults.append(f"--map {value!r}: expected KEY=TEAM:CLASS[:LEVEL] with policy names")
            continue
        if key in out:
            faults.append(f"--map {value!r}: {key!r} is mapped twice")
            continue
        out[key] = Placement(parts[0], parts[1], parts[2] if len(parts) == 3 else None)
    if faults:
        raise OptionError(faults)
    return out


def placement_faults(maps: Mapping[str, Placement], policies: Iterable[Policy]) -> list[str]:
    """The ``--map`` targets that exist in none of ``policies``: one fault per unknown
    team, workload class or priority level, naming the option and the known names.

    A name that one policy has and another lacks is no fault: comparing policies that
    differ there is the point (the other policy refuses those jobs, counted by reason).
    """
    policies = list(policies)
    known = {
        "team": sorted({t for p in policies for t in p.teams}),
        "workload class": sorted({c for p in policies for c in p.workloadClasses}),
        "priority level": sorted({lv.name for p in policies for lv in p.priorityLevels}),
    }
    faults: list[str] = []
    for key, placement in maps.items():
        target = ":".join(
            n for n in (placement.team, placement.workloadClass, placement.priorityLevel) if n
        )
        option = f"--map {key}={target}"
        for kind, name in (
            ("team", placement.team),
            ("workload class", placement.workloadClass),
            ("priority level", placement.priorityLevel),
        ):
            if name is not None and name not in known[kind]:
                where = "the policy" if len(policies) == 1 else "any of the policies"
                faults.append(
                    f"{option}: no {kind} {name!r} in {where} (known: {', '.join(known[kind])})"
                )
    return faults


def parse_gpu_types(values: Iterable[str]) -> dict[int, GpuType]:
    """``["1=ml.g5.xlarge", "8=ml.p4d.24xlarge", "2=ml.g5.xlarge*2"]`` -> by GPU count.

    Raises:
        OptionError: a malformed value, a non-positive count, a repeated GPU count.
    """
    out: dict[int, GpuType] = {}
    faults: list[str] = []
    for value in values:
        gpus, sep, rest = value.partition("=")
        itype, star, count = rest.partition("*")
        try:
            n = int(gpus)
            k = int(count) if star else 1
        except ValueError:
            n = k = 0
        if not sep or n < 1 or k < 1 or not _TYPE.match(itype):
            faults.append(
                f"--gpu-type {value!r}: expected GPUS=INSTANCE_TYPE[*COUNT], e.g. 8=ml.p4d.24xlarge"
            )
        elif n in out:
            faults.append(f"--gpu-type {value!r}: {n} GPUs mapped twice")
        else:
            out[n] = GpuType(itype, k)
    if faults:
        raise OptionError(faults)
    return out


def parse_capacity(values: Iterable[str]) -> dict[str, int]:
    """``["ml.g5.xlarge=24"]`` -> ``{"ml.g5.xlarge": 24}`` (instances, >= 1).

    Raises:
        OptionError: a malformed value or a repeated type.
    """
    out: dict[str, int] = {}
    faults: list[str] = []
    for value in values:
        itype, sep, count = value.partition("=")
        try:
            n = int(count)
        except ValueError:
            n = 0
        if not sep or n < 1 or not _TYPE.match(itype):
            faults.append(f"--capacity {value!r}: expected INSTANCE_TYPE=N with N >= 1")
        elif itype in out:
            faults.append(f"--capacity {value!r}: {itype} given twice")
        else:
            out[itype] = n
    if faults:
        raise OptionError(faults)
    return out
