"""The simulated AWS Batch, split like a moto service: models, responses, one module per concern.

Public surface: :class:`quotagov_tools.batch_simulated.SimulatedBatch` (the port
implementation), :class:`.models.SimBatchBackend` (the backend it drives) and the
simulation-hint tag keys below. Modules:

- :mod:`.payload`: reading ``serviceRequestPayload`` and the simulation hints;
- :mod:`.records`: the resources' state (job queues, quota shares, jobs, attempts);
- :mod:`.models`: :class:`~.models.SimBatchBackend`, composed of
  :mod:`.core` (state, time, the engine's transitions applied),
  :mod:`.quota_shares` and :mod:`.service_jobs` (the operations), with
  :mod:`.checks` (request values), :mod:`.listing` (pages, tokens, filters),
  :mod:`.snapshot` (``GetJobQueueSnapshot``) and :mod:`.reasons` (statusReason texts);
- :mod:`.errors`, :mod:`.arns`, :mod:`.ids`: the refusals, ARN formats, identifiers;
- :mod:`.responses`: the wire shapes (API responses, EventBridge envelopes);
- :mod:`.faults` and :mod:`.throttle`: injected failures, the virtual-clock token bucket.
"""

from quotagov_tools.simbatch.payload import (
    CHECKPOINT_INTERVAL_HINT,
    RESTART_OVERHEAD_HINT,
    RUN_SECONDS_HINT,
)

__all__ = ["CHECKPOINT_INTERVAL_HINT", "RESTART_OVERHEAD_HINT", "RUN_SECONDS_HINT"]
