"""The escalation metrics (CloudWatch EMF through Powertools ``single_metric``), for the
dashboard (template ``OperationsDashboard``, widget "Escalations") next to
``quotagov report escalations``:

* ``EscalationsRequested`` (Count), one per accepted request, from
  ``EscalationsApiFunction``, with the dimensions :data:`REQUESTED_DIMENSIONS`:
  ``team``, ``quotaShareName``, ``requester`` (the principal's last path element, e.g.
  the session name ``alice``), ``level`` (the policy priority level asked for) and
  ``kind`` (``approval``: it waits for the approvers; ``direct``: a level the team may
  set itself). The report counts the same requests per team and per requester.
* the decisions are counted as ``EscalationsDecided`` by the Slack function itself
  (:mod:`quotagov.handlers.slack_interactions`).

Namespace ``POWERTOOLS_METRICS_NAMESPACE`` (default ``quotagov``), with the ``service``
dimension :func:`~quotagov.handlers.metrics.emit` adds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_lambda_powertools.metrics import MetricUnit

from quotagov.handlers.metrics import emit

if TYPE_CHECKING:
    from quotagov.governance.model.escalation import Escalation

#: The metric of accepted escalation requests.
REQUESTED = "EscalationsRequested"
#: Its dimensions, in the order the dashboard's ``SEARCH`` schema lists them (after
#: ``service``).
REQUESTED_DIMENSIONS = ("team", "quotaShareName", "requester", "level", "kind")


def count(name: str, **dimensions: str) -> None:
    """Emit one ``Count`` of 1 for metric ``name`` with ``dimensions``, through
    :func:`quotagov.handlers.metrics.emit` (the one metric writer)."""
    emit(name, MetricUnit.Count, 1, **dimensions)


def requester_name(principal: str) -> str:
    """``arn:aws:sts::1:assumed-role/researcher/alice`` -> ``alice`` (a low-cardinality,
    readable dimension; the full principal is in the audit log)."""
    return principal.rsplit("/", 1)[-1] or principal


def count_request(escalation: Escalation) -> None:
    """Emit ``EscalationsRequested`` once for an accepted request (any status: PENDING
    for approval levels, APPROVED or APPLIED for direct ones)."""
    values = {
        "team": escalation.team,
        "quotaShareName": escalation.quota_share_name,
        "requester": requester_name(escalation.requester),
        "level": escalation.requested_level,
        "kind": "direct" if escalation.direct else "approval",
    }
    count(REQUESTED, **{name: values[name] for name in REQUESTED_DIMENSIONS})
