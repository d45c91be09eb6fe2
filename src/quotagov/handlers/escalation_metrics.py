"""The escalation metrics (CloudWatch EMF through Powertools ``single_metric``), for the
dashboards next to ``quotagov report escalations``:

* ``EscalationRequests`` (Count) by ``team`` and ``requester`` (the principal's last
  path element, e.g. the session name ``alice``) and ``kind`` (``approval`` or
  ``direct``), from ``EscalationsApiFunction`` for each accepted request;
* the decisions are counted as ``EscalationsDecided`` by the Slack function itself
  (:mod:`quotagov.handlers.slack_interactions`).

Namespace ``POWERTOOLS_METRICS_NAMESPACE`` (default ``quotagov``), with the ``service``
dimension :func:`~quotagov.handlers.metrics.emit` adds.
"""

from __future__ import annotations

from aws_lambda_powertools.metrics import MetricUnit

from quotagov.handlers.metrics import emit


def count(name: str, **dimensions: str) -> None:
    """Emit one ``Count`` of 1 for metric ``name`` with ``dimensions``, through
    :func:`quotagov.handlers.metrics.emit` (the one metric writer)."""
    emit(name, MetricUnit.Count, 1, **dimensions)


def requester_name(principal: str) -> str:
    """``arn:aws:sts::1:assumed-role/researcher/alice`` -> ``alice`` (a low-cardinality,
    readable dimension; the full principal is in the audit log)."""
    return principal.rsplit("/", 1)[-1] or principal
