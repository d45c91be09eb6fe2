"""Configurations of audited resources and the before/after difference between two of them.

A quota share's configuration is the part of ``DescribeQuotaShare`` a governance change
touches: ``capacityLimits`` (sorted by ``capacityUnit``), ``resourceSharingConfiguration``
(``{strategy, borrowLimit?}``), ``preemptionConfiguration`` (``{inSharePreemption}``) and
``state``. ``UpdateQuotaShare`` replaces each of these it names and keeps the others
(botocore ``batch`` model; whether ``capacityLimits`` is a full replacement list is
not documented, it is treated as one).

Other resources (scheduling policies, job queues, service environments, service jobs)
are compared on their request parameters: a create's parameters are the configuration,
an update's parameters replace the named top-level fields of the last known one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The fields of a quota share's configuration, in the order ``UpdateQuotaShare`` names them.
QUOTA_SHARE_FIELDS = (
    "capacityLimits",
    "resourceSharingConfiguration",
    "preemptionConfiguration",
    "state",
)

#: Request parameters that identify a resource or the call, not its configuration.
IDENTIFYING_PARAMETERS = frozenset(
    {
        "quotaShareArn",
        "quotaShareName",
        "jobQueue",
        "arn",
        "name",
        "jobQueueName",
        "serviceEnvironment",
        "serviceEnvironmentName",
        "jobId",
        "clientToken",
        "tags",
    }
)


def quota_share_configuration(source: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration of a quota share from a ``DescribeQuotaShare`` response or a
    ``CreateQuotaShare``/``UpdateQuotaShare`` request (only the fields it holds).

    ``capacityLimits`` is sorted by ``capacityUnit`` so that order does not count as a change.
    """
    config: dict[str, Any] = {}
    for name in QUOTA_SHARE_FIELDS:
        if name not in source or source[name] is None:
            continue
        value = source[name]
        if name == "capacityLimits":
            value = sorted(
                (
                    {"capacityUnit": c.get("capacityUnit"), "maxCapacity": c.get("maxCapacity")}
                    for c in value
                ),
                key=lambda c: str(c["capacityUnit"]),
            )
        elif isinstance(value, Mapping):
            value = dict(value)
        config[name] = value
    return config


def apply_update(
    before: Mapping[str, Any] | None, request: Mapping[str, Any], *, quota_share: bool
) -> dict[str, Any]:
    """The configuration after an ``Update*`` call with ``request`` on ``before``.

    Each configuration field the request names replaces the one in ``before``; the
    rest is kept. With ``before`` unknown (None) the result holds only the request's fields.
    """
    after = dict(before or {})
    if quota_share:
        after.update(quota_share_configuration(request))
    else:
        after.update(request_configuration(request))
    return after


#: The request fields of ``SubmitServiceJob`` kept as a new service job's configuration.
SUBMITTED_FIELDS = ("jobName", "serviceJobType", "quotaShareName", "schedulingPriority")


def configuration_after(
    event_name: str,
    request: Mapping[str, Any],
    before: Mapping[str, Any] | None,
    *,
    quota_share: bool,
) -> dict[str, Any] | None:
    """The configuration of a resource after a successful call ``event_name`` with
    ``request`` on ``before`` (None: unknown, or absent): None after a ``Delete*``;
    the request's configuration after a ``Create*`` or ``SubmitServiceJob``;
    :func:`apply_update` otherwise, with ``terminated: True`` after ``TerminateServiceJob``.
    """
    if event_name.startswith("Delete"):
        return None
    if event_name == "SubmitServiceJob":
        return {k: request[k] for k in SUBMITTED_FIELDS if request.get(k) is not None}
    if event_name.startswith("Create"):
        return quota_share_configuration(request) if quota_share else request_configuration(request)
    after = apply_update(before, request, quota_share=quota_share)
    if event_name == "TerminateServiceJob":
        after["terminated"] = True
    return after


def request_configuration(request: Mapping[str, Any]) -> dict[str, Any]:
    """The request parameters of a non-quota-share call minus the identifying ones."""
    return {k: v for k, v in request.items() if k not in IDENTIFYING_PARAMETERS}


def _flatten(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping) and value:
        for key in sorted(value):
            _flatten(value[key], f"{path}.{key}" if path else str(key), out)
    elif (
        isinstance(value, list)
        and value
        and all(isinstance(v, Mapping) and "capacityUnit" in v for v in value)
    ):
        for item in value:
            rest = {k: v for k, v in item.items() if k != "capacityUnit"}
            _flatten(rest, f"{path}[{item['capacityUnit']}]", out)
    else:
        out[path] = value


def difference(
    before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """The fields that differ between two configurations, as ``[{path, before, after}]``.

    Paths use dots for nested fields and ``[unit]`` for a capacity limit, e.g.
    ``capacityLimits[ml.g5.xlarge].maxCapacity`` or ``resourceSharingConfiguration.strategy``.
    A field absent on one side is None there. Sorted by path.
    """
    flat_before: dict[str, Any] = {}
    flat_after: dict[str, Any] = {}
    _flatten(before or {}, "", flat_before)
    _flatten(after or {}, "", flat_after)
    flat_before.pop("", None)
    flat_after.pop("", None)
    changes = []
    for path in sorted(set(flat_before) | set(flat_after)):
        old, new = flat_before.get(path), flat_after.get(path)
        if old != new:
            changes.append({"path": path, "before": old, "after": new})
    return changes
