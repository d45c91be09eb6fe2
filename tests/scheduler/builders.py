"""Small builders of scenario documents for the scheduler tests (values stay explicit)."""

from __future__ import annotations

from typing import Any

from quotagov.scheduler import simulate, validate_scenario

G = "ml.g5.xlarge"
P = "ml.p4d.24xlarge"


def share(
    name: str,
    limits: dict[str, int] | int,
    strategy: str = "LEND_AND_BORROW",
    *,
    borrow: int | None = None,
    in_share: bool = False,
    state: str | None = None,
) -> dict[str, Any]:
    """A share block; ``limits`` as ``{unit: maxCapacity}`` or one ``maxCapacity`` of G."""
    caps = {G: limits} if isinstance(limits, int) else limits
    rsc: dict[str, Any] = {"strategy": strategy}
    if borrow is not None:
        rsc["borrowLimit"] = borrow
    out: dict[str, Any] = {
        "quotaShareName": name,
        "capacityLimits": [{"capacityUnit": u, "maxCapacity": m} for u, m in caps.items()],
        "resourceSharingConfiguration": rsc,
        "preemptionConfiguration": {"inSharePreemption": "ENABLED" if in_share else "DISABLED"},
    }
    if state is not None:
        out["state"] = state
    return out


def job(
    name: str,
    share_name: str,
    at: float = 0,
    run: float | None = 100,
    *,
    prio: int = 0,
    count: int = 1,
    unit: str = G,
    retries: int | None = None,
    ckpt: float | None = None,
    overhead: float = 0,
) -> dict[str, Any]:
    """A job block."""
    return {
        "jobName": name,
        "quotaShareName": share_name,
        "submittedAt": at,
        "instanceType": unit,
        "instanceCount": count,
        "runSeconds": run,
        "schedulingPriority": prio,
        "preemptionRetriesBeforeTermination": retries,
        "checkpointIntervalSeconds": ckpt,
        "restartOverheadSeconds": overhead,
    }


def scenario(
    capacity: dict[str, int] | int,
    shares: list[dict[str, Any]],
    jobs: list[dict[str, Any]],
    actions: list[dict[str, Any]] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """A scenario document (``capacity`` as a dict or a count of G)."""
    return {
        "name": "test",
        "capacity": {G: capacity} if isinstance(capacity, int) else capacity,
        "options": options,
        "shares": shares,
        "jobs": jobs,
        "actions": actions or [],
    }


def run(doc: dict[str, Any]) -> dict[str, Any]:
    """Validate and simulate; the spec's output document."""
    return simulate(validate_scenario(doc))


def changes(out: dict[str, Any], name: str) -> list[tuple[Any, str, str, str]]:
    """``(at, from, to, reason)`` of one job's transitions, in order."""
    return [
        (t["at"], t["from"], t["to"], t["reason"])
        for t in out["transitions"]
        if t["jobName"] == name
    ]


def starts(out: dict[str, Any], name: str) -> list[tuple[Any, str]]:
    """``(at, reason)`` of each time the job entered SCHEDULED."""
    return [(at, reason) for at, _, to, reason in changes(out, name) if to == "SCHEDULED"]
