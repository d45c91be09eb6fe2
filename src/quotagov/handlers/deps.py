"""Builds the submission use cases' dependencies from :func:`quotagov.wiring.services`.

Dependencies used: ``policy``, ``jobs``, ``clock``, ``audit`` (an in-memory
:class:`~quotagov.governance.ports.NullAuditSink` when none is registered), and on
request ``batch``, ``submission_queue`` and ``submit_pacer``.
"""

from __future__ import annotations

from typing import Any

from quotagov.governance.ports import NullAuditSink
from quotagov.governance.submission import SubmissionDeps
from quotagov.wiring import Services, services


def optional(svc: Services, name: str) -> Any:
    """The dependency ``name``, or None when it is not registered or not configured."""
    try:
        return svc.get(name)
    except (KeyError, RuntimeError):
        return None


def submission_deps(*, batch: bool = False, queue: bool = False) -> SubmissionDeps:
    """The :class:`SubmissionDeps` of this process (Batch and queue only when asked)."""
    svc = services()
    return SubmissionDeps(
        policy=svc.get("policy"),
        jobs=svc.get("jobs"),
        clock=svc.clock,
        audit=optional(svc, "audit") or NullAuditSink(),
        job_queue=svc.settings.job_queue,
        batch=svc.get("batch") if batch else None,
        queue=svc.get("submission_queue") if queue else None,
        pace=optional(svc, "submit_pacer") if batch else None,
    )
