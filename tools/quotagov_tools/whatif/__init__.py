"""What-if: compare governance policies on a real workload before deploying one.

Pure Python, no AWS imports (``tests/test_architecture.py``). Modules, one concern each:

- :mod:`.workload`: the jobs replayed (team, class, level, instance type and count,
  submission and run times, checkpoint interval);
- :mod:`.importers`: ``scenario``, ``history`` (``quotagov history export``), ``openb``
  (the Alibaba OpenB trace) and any CSV with a column mapping; :mod:`.mapping` the
  ``--map``/``--gpu-type``/``--capacity`` options;
- :mod:`.governed`: one run, the policy's governance rules in the loop (routing,
  dispositions, thrash guard, refusals) on the local scheduler;
- :mod:`.perturb`: the seeds' perturbed copies; :mod:`.runner`: every run in a
  process pool and the report files; :mod:`.report`: aggregation over seeds, deltas,
  regressions, limit warnings, verdicts, the comparison table; :mod:`.calibration`: a
  history replayed under the policy in force and compared job by job; :mod:`.sweep`: a
  grid of settings on a process pool or a Dask cluster; :mod:`.plots`, :mod:`.html`:
  the PNG plots and the page; :mod:`.errors`: every error.

The metrics are :mod:`quotagov.scheduler.metrics`' (the same as ``quotagov simulate``).
"""

from quotagov_tools.whatif.errors import OptionError, WhatIfError, WorkloadError
from quotagov_tools.whatif.governed import LoopOptions, run_policy
from quotagov_tools.whatif.runner import WhatIf, run_whatif, write_report
from quotagov_tools.whatif.workload import Workload, WorkloadJob

__all__ = [
    "LoopOptions",
    "OptionError",
    "WhatIf",
    "WhatIfError",
    "Workload",
    "WorkloadError",
    "WorkloadJob",
    "run_policy",
    "run_whatif",
    "write_report",
]
