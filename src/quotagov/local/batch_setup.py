"""Building the simulated AWS Batch the local runtime uses, from a walkthrough scenario.

The scenario (``spec/scenario-format.md``) gives the service environment's capacity
(``capacity``: instance type -> instances) and the quota shares; the simulated Batch
gets one job queue (the policy's ``jobQueue``) with those shares, created through
``CreateQuotaShare`` like an administrator would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from quotagov.clock import ManualClock


def build_simulated_batch(
    *,
    clock: ManualClock,
    job_queue: str,
    walkthrough: Mapping[str, Any],
    emit: Callable[[dict[str, Any]], None],
) -> Any:
    """Return a simulated Batch with the walkthrough's capacity and quota shares.

    ``emit`` receives every ``Batch Service Job State Change`` envelope.
    """
    from quotagov.adapters.batch_sim import SimulatedBatch  # type: ignore[import-not-found]

    batch = SimulatedBatch(
        clock=clock,
        job_queue=job_queue,
        capacity=dict(walkthrough["capacity"]),
        options=dict(walkthrough.get("options") or {}),
    )
    batch.subscribe(emit)
    for share in walkthrough["shares"]:
        batch.create_quota_share(jobQueue=job_queue, **share)
    return batch


def run_batch_until(batch: Any, clock: ManualClock, t: float) -> None:
    """Run the simulated Batch forward to virtual time ``t`` (the clock ends at ``t``)."""
    batch.run_until(t)
    if clock.now() < t:
        clock.set(t)
