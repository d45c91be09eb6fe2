"""``AuditDigestFunction``: signed digests of the audit chains, every 15 minutes and on demand.

Triggers: the EventBridge schedule ``rate(15 minutes)`` (a ``Scheduled Event``), or a
direct invocation (``aws lambda invoke``, ``quotagov invoke AuditDigestFunction``) with
an optional ``{"force": true, "chains": ["<queue>", ...]}``: ``force`` digests chains
that did not move too. Use case:
:class:`~quotagov.governance.audit.digests.DigestPublisher`.

A chain whose table contradicts its last digest, or whose new records are broken or
unsealed, is not digested: it is logged as an error and counted
(``AuditDigestsRefused``, alarmed by the template's ``AuditDigestsRefusedAlarm``) and the
invocation still digests the others.

Metrics, once per invocation with the count of this run (0 included, so a run with
nothing due still writes its figures and Powertools never flushes an empty set):
``AuditDigests`` (digests published), ``AuditDigestsRefused`` (chains refused); a
malformed request counts ``AuditDigestRequestsRejected`` instead.

Dependencies: ``audit_digests`` (``AUDIT_TABLE`` read only, ``AUDIT_DIGEST_BUCKET``,
``AUDIT_DIGEST_KEY``, ``AUDIT_SEAL_KEY`` for ``VerifyMac``).
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from quotagov.composition import AuditDigest, current

logger = Logger(service=os.getenv("POWERTOOLS_SERVICE_NAME", "quotagov"))
metrics = Metrics(namespace=os.getenv("POWERTOOLS_METRICS_NAMESPACE", "quotagov"))


def _request(event: Any) -> tuple[bool, list[str] | None, str | None]:
    """``(force, chains, fault)`` of an on-demand event; a scheduled event is neither."""
    if not isinstance(event, dict) or event.get("detail-type") == "Scheduled Event":
        return False, None, None
    force = event.get("force", False)
    chains = event.get("chains")
    if not isinstance(force, bool):
        return False, None, f"force: {force!r} is not true or false"
    if chains is not None and (
        not isinstance(chains, list) or not all(isinstance(c, str) and c for c in chains)
    ):
        return False, None, f"chains: {chains!r} is not a list of chain names"
    return force, chains, None


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Publish the due digests; returns ``{"digests": [{chain, status, key?, headSeq,
    reason?}]}`` or ``{"status": "rejected", "reason"}`` for a malformed request."""
    current(AuditDigest)  # cold start: a missing setting fails here, before any work
    force, chains, fault = _request(event)
    if fault is not None:
        logger.error("digest request rejected", extra={"reason": fault})
        metrics.add_metric(name="AuditDigestRequestsRejected", unit=MetricUnit.Count, value=1)
        return {"status": "rejected", "reason": fault}
    outcomes = current(AuditDigest).audit_digests.publish(force=force, only=chains)
    answer = []
    published = refused = 0
    for outcome in outcomes:
        entry: dict[str, Any] = {
            "chain": outcome.chain,
            "status": outcome.status,
            "headSeq": outcome.head_seq,
        }
        if outcome.key:
            entry["key"] = outcome.key
        if outcome.reason:
            entry["reason"] = outcome.reason
        answer.append(entry)
        if outcome.status == "published":
            published += 1
        elif outcome.status == "refused":
            refused += 1
            logger.error("chain not digested", extra=entry)
    metrics.add_metric(name="AuditDigests", unit=MetricUnit.Count, value=published)
    metrics.add_metric(name="AuditDigestsRefused", unit=MetricUnit.Count, value=refused)
    logger.info("audit digests", extra={"digests": answer})
    return {"digests": answer}
