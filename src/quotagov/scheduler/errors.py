"""The engine's errors (:class:`~.engine.Engine` raises them; all are :class:`EngineError`)."""

from __future__ import annotations


class EngineError(Exception):
    """Base of the engine's errors."""


class UnknownJobError(EngineError, KeyError):
    """No job has this ``jobName``."""


class UnknownShareError(EngineError, KeyError):
    """No quota share has this ``quotaShareName``."""


class DuplicateJobError(EngineError, ValueError):
    """A job with this ``jobName`` was already submitted."""


class InvalidConfigError(EngineError, ValueError):
    """A share configuration, job spec or value is invalid.

    Attributes:
        faults: one message per fault, each starting with the field path.
    """

    def __init__(self, faults: list[str]) -> None:
        super().__init__("; ".join(faults))
        self.faults = faults
