"""Building the simulated AWS Batch the local runtime uses, from a walkthrough scenario.

The scenario (``docs/simulator/spec.md``) gives the service environment's capacity
(``capacity``: instance type -> instances), the engine options and the quota shares;
the simulated Batch (:class:`quotagov_tools.batch_simulated.SimulatedBatch`) gets
one job queue, named like the policy's ``jobQueue`` ARN, with those shares created
through ``CreateQuotaShare`` as an administrator would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from quotagov.batch_semantics import queue_name
from quotagov.clock import ManualClock
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.local.stack import ACCOUNT_ID, REGION


def build_simulated_batch(
    *,
    clock: ManualClock,
    job_queue: str,
    walkthrough: Mapping[str, Any],
    emit: Callable[[dict[str, Any]], None],
) -> SimulatedBatch:
    """Return a simulated Batch with the walkthrough's capacity and quota shares.

    Args:
        clock: the runtime's virtual clock (the simulated Batch moves only with it).
        job_queue: the governed job queue ARN (the policy's ``jobQueue``).
        walkthrough: the scenario document (``capacity``, ``options``, ``shares``).
        emit: receives every ``Batch Service Job State Change`` envelope.

    Raises:
        quotagov.governance.ports.BatchClientError: a share of the scenario is refused.
    """
    batch = SimulatedBatch(
        capacity=dict(walkthrough["capacity"]),
        shares=[dict(share) for share in walkthrough["shares"]],
        job_queue=queue_name(job_queue),
        region=REGION,
        account=ACCOUNT_ID,
        clock=clock,
        options=dict(walkthrough.get("options") or {}),
        seed=7,
    )
    batch.subscribe(emit)
    return batch


def next_event_time(batch: SimulatedBatch, job_queue: str, origin: float) -> float | None:
    """Epoch seconds of the simulated Batch's next scheduled change (None when idle).

    ``origin`` is the epoch time the simulated Batch was created at (its time 0).
    """
    engine = batch.engine(queue_name(job_queue))
    if engine is None:
        return None
    upcoming = engine.next_event_time()
    return None if upcoming is None else origin + upcoming


def run_batch_until(batch: SimulatedBatch, clock: ManualClock, t: float) -> None:
    """Run the simulated Batch forward to virtual time ``t``; its events are delivered."""
    if clock.now() < t:
        clock.set(t)
    batch.sync()
