"""Errors of the what-if package, one module (every other whatif module raises these)."""

from __future__ import annotations

from collections.abc import Sequence


class WhatIfError(Exception):
    """Base of the what-if errors; ``faults`` lists every problem found, each naming
    where it is (``row 12, field num_gpu: ...`` or ``--map: ...``)."""

    def __init__(self, faults: Sequence[str]) -> None:
        self.faults = list(faults)
        super().__init__("; ".join(self.faults))


class WorkloadError(WhatIfError):
    """A workload file cannot be imported: unknown column, bad value, unmapped class.

    Raised before anything runs, with every fault of the file (up to a cap).
    """


class MissingColumnsError(WorkloadError):
    """A CSV lacks columns the column mapping names (one fault per column), so none of
    its rows can be read: most often a CSV read with the OpenB mapping it does not have."""


class OptionError(WhatIfError):
    """A command-line option is malformed (``--map``, ``--gpu-type``, ``--capacity``...)."""
