"""The example policy (``src/quotagov/examples/policy.yaml``) and a simulated Batch for it."""

from __future__ import annotations

from importlib import resources

from quotagov.clock import ManualClock
from quotagov.policy import Policy, load_policy
from quotagov_tools.batch_simulated import SimulatedBatch
from support.aws import GPU, QUEUE_NAME


def example_policy_text() -> str:
    """The example walkthrough policy, as shipped (YAML)."""
    return resources.files("quotagov.examples").joinpath("policy.yaml").read_text()


def example_policy() -> Policy:
    """The example walkthrough policy, parsed and validated."""
    return load_policy(example_policy_text())


def simulated_batch(policy: Policy, clock: ManualClock, seed: int = 7) -> SimulatedBatch:
    """The policy's shares on a service environment of 3 ``ml.g5.xlarge`` (the
    walkthrough's), on queue ``ml-gov-queue`` and ``clock``."""
    return SimulatedBatch(
        capacity={GPU: 3},
        shares=[
            {"quotaShareName": s.quotaShareName, **s.batch_configuration()}
            for s in policy.quotaShares
        ],
        job_queue=QUEUE_NAME,
        clock=clock,
        seed=seed,
    )
