"""Perturbed copies of a workload, for ``--seeds K`` (confidence ranges).

A copy moves each submission by a uniform jitter of at most ``jitter_seconds`` either
way (never before 0) and scales each run time by a uniform factor in
``[1 - run_noise, 1 + run_noise]``. The same seed always gives the same copy
(:class:`random.Random` seeded with it), so a report can be reproduced.
"""

from __future__ import annotations

import random
from dataclasses import replace

from quotagov_tools.whatif.errors import OptionError
from quotagov_tools.whatif.workload import Workload


def perturbed(
    workload: Workload, seed: int, *, jitter_seconds: float, run_noise: float
) -> Workload:
    """A copy of ``workload`` with arrival jitter and run-time noise drawn from ``seed``.

    Args:
        workload: the original.
        seed: the copy's seed.
        jitter_seconds: largest shift of a submission, seconds (>= 0).
        run_noise: largest relative change of a run time, 0 <= noise < 1.

    Raises:
        OptionError: a negative jitter, or a noise outside [0, 1).
    """
    faults = []
    if jitter_seconds < 0:
        faults.append(f"--jitter: {jitter_seconds} must be >= 0 seconds")
    if not 0 <= run_noise < 1:
        faults.append(f"--run-noise: {run_noise} must be in [0, 1)")
    if faults:
        raise OptionError(faults)
    rng = random.Random(seed)
    jobs = [
        replace(
            j,
            submittedAt=max(0.0, j.submittedAt + rng.uniform(-jitter_seconds, jitter_seconds)),
            runSeconds=max(1.0, j.runSeconds * (1 + rng.uniform(-run_noise, run_noise))),
        )
        for j in workload.jobs
    ]
    jobs.sort(key=lambda j: j.submittedAt)
    return replace(workload, jobs=tuple(jobs))
