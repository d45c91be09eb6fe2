"""The escalation metrics (CloudWatch EMF through Powertools ``single_metric``), for the
dashboards next to ``quotagov report escalations``:

* ``EscalationRequests`` (Count) by ``team`` and ``requester`` (the principal's last
  path element, e.g. the session name ``alice``) and ``kind`` (``approval`` or
  ``direct``), from ``EscalationsApiFunction`` for each accepted request;
* ``EscalationDecisions`` (Count) by ``team`` and ``outcome`` (``approved``,
  ``denied``, ``reconfirm``, ``expired``), from ``SlackInteractionsFunction`` for each
  click that decided something.

Namespace ``POWERTOOLS_METRICS_NAMESPACE`` (default ``quotagov``).
"""

from __future__ import annotations

import os

from aws_lambda_powertools.metrics import MetricUnit, single_metric


def count(name: str, **dimensions: str) -> None:
    """Emit one ``Count`` of 1 for metric ``name`` with ``dimensions`` (empty ones left out)."""
    namespace = os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "quotagov"
    with single_metric(name=name, unit=MetricUnit.Count, value=1, namespace=namespace) as metric:
        for key, value in dimensions.items():
            if value:
                metric.add_dimension(name=key, value=value[:250])


def requester_name(principal: str) -> str:
    """``arn:aws:sts::1:assumed-role/researcher/alice`` -> ``alice`` (a low-cardinality,
    readable dimension; the full principal is in the audit log)."""
    return principal.rsplit("/", 1)[-1] or principal
