"""The functions' CloudWatch metrics with dimensions, through Powertools Metrics (EMF).

Every function emits to the namespace ``POWERTOOLS_METRICS_NAMESPACE`` (default
``quotagov``) with the ``service`` dimension Powertools adds (``POWERTOOLS_SERVICE_NAME``).
:func:`emit` writes one metric with its own dimensions (``team``, ``quotaShareName``,
``kind``, ...) at once, as one EMF line (Powertools ``single_metric``), so metrics with
different dimension sets never share a blob and the dashboard's ``SEARCH`` expressions
(template ``OperationsDashboard``) find them by their dimension set. A missing or empty
dimension value is written as ``unknown`` (CloudWatch refuses empty values).

Names (``docs/operations.md``, "Metrics"): ``SubmissionsAccepted`` / ``SubmissionsRefusedByPolicy``
(jobs API), ``PreemptionsByTeam`` and ``LostGpuHours`` (job state), ``EscalationsRequested``
(escalations API), ``EscalationsDecided`` (Slack), ``EscalationsExpired`` (expiry),
``EscalationsRetried``, ``DecisionsSettled`` and ``HandoffsDropped`` (apply function),
plus each function's own counters.
"""

from __future__ import annotations

import os

from aws_lambda_powertools.metrics import MetricUnit, single_metric

#: What an absent dimension value becomes.
UNKNOWN = "unknown"


def namespace() -> str:
    """``POWERTOOLS_METRICS_NAMESPACE``, else ``quotagov``."""
    return os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "quotagov"


def emit(name: str, unit: MetricUnit, value: float, **dimensions: str | None) -> None:
    """Write metric ``name`` (``value`` in ``unit``) with ``service`` and ``dimensions``.

    Args:
        name: the metric name.
        unit: a Powertools ``MetricUnit`` (``Count``, ``Seconds``, ``None`` for GPU-hours).
        value: the value (a count, seconds, GPU-hours).
        dimensions: dimension name -> value; None or "" become :data:`UNKNOWN`.
    """
    service = os.environ.get("POWERTOOLS_SERVICE_NAME") or "quotagov"
    with single_metric(
        name=name,
        unit=unit,
        value=value,
        namespace=namespace(),
        default_dimensions={"service": service},
    ) as metric:
        for key, dimension in dimensions.items():
            metric.add_dimension(name=key, value=str(dimension) if dimension else UNKNOWN)
