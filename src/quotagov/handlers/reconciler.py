"""``ReconcilerFunction``: every 5 minutes, nothing stays ``QUEUED`` silently.

Calls :func:`quotagov.governance.submission.reconcile.reconcile_stale_submissions`:
submissions ``QUEUED`` longer than ``STALE_SUBMISSION_SECONDS`` (default 900) are sent
to the submission queue again (up to 3 times), then marked ``SUBMITTED`` when Batch has
a service job tagged with them, else ``FAILED`` with the reason (and a notice to the
owner notice queue).

The event is EventBridge's ``Scheduled Event`` (read with Powertools' data class; its
content does not matter). Returns the submission ids by outcome, for the logs.

Metrics (EMF, namespace ``POWERTOOLS_METRICS_NAMESPACE``, dimension ``service``):
``SubmissionsRequeued``, ``SubmissionsReconciled`` (found in Batch),
``SubmissionsFailedStale``, ``SubmissionsReconcileDeferred`` (an AWS call failed; next
pass), ``SubmissionsFailedUnnotified`` (failed, but the owner notice queue refused the
notice). Environment: ``JOBS_TABLE``, ``SUBMISSION_QUEUE_URL``, ``JOB_QUEUE``,
``AUDIT_QUEUE_URL``, ``OWNER_NOTICE_QUEUE_URL`` (the failed submissions' owners are told
by ``ApplyDecisionsFunction``), ``STALE_SUBMISSION_SECONDS``.
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.data_classes import EventBridgeEvent

from quotagov.composition import Reconciler, current

logger = Logger()
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "quotagov")

#: Report field -> metric name.
_METRICS = {
    "requeued": "SubmissionsRequeued",
    "submitted": "SubmissionsReconciled",
    "failed": "SubmissionsFailedStale",
    "deferred": "SubmissionsReconcileDeferred",
    "unnotified": "SubmissionsFailedUnnotified",
}


@metrics.log_metrics(raise_on_empty_metrics=False)
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Run one reconciliation pass; returns ``{"requeued": [ids], "submitted": ..., ...}``."""
    from quotagov.governance.submission.reconcile import reconcile_stale_submissions

    scheduled = EventBridgeEvent(event) if isinstance(event, dict) else None
    report = reconcile_stale_submissions(current(Reconciler).reconcile).to_dict()
    for key, name in _METRICS.items():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=len(report[key]))
    logger.info(
        "stuck submissions reconciled",
        extra={"scheduledAt": scheduled.get("time") if scheduled else None, **report},
    )
    return report
