"""The simulated AWS Batch, split like a moto service.

- :mod:`.payload`: reading ``serviceRequestPayload`` and the simulation hints;
- :mod:`.records`: the resources' state (queues, quota shares, jobs, attempts);
- :mod:`.models`: the rules, and the scheduler engine that moves the jobs;
- :mod:`.responses`: the wire shapes (API responses, EventBridge envelopes);
- :mod:`.throttle`: the virtual-clock token bucket.

The port implementation is :class:`quotagov.adapters.batch_simulated.SimulatedBatch`.
"""

from quotagov.adapters.simbatch.payload import (
    CHECKPOINT_INTERVAL_HINT,
    RESTART_OVERHEAD_HINT,
    RUN_SECONDS_HINT,
)

__all__ = ["CHECKPOINT_INTERVAL_HINT", "RESTART_OVERHEAD_HINT", "RUN_SECONDS_HINT"]
