"""Port: the stored versions of the governance policy parameter (SSM Parameter Store).

``GetParameterHistory`` returns every version of a parameter with its value, its
``Version`` number, ``LastModifiedDate`` and ``LastModifiedUser`` (the ARN of who put
it), up to the last 100 versions
(https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_GetParameterHistory.html).
CloudTrail records ``PutParameter`` without the value, so the audit reads both sides of
a change from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class PolicyHistoryError(Exception):
    """Reading the parameter's history failed (throttled, denied, unreachable): the
    event is retried."""


@dataclass(frozen=True)
class PolicyVersion:
    """One stored version of the policy parameter.

    Attributes:
        version: SSM's version number (1, 2, ...).
        text: the parameter's value (the policy YAML).
        modified_by: ``LastModifiedUser`` (an ARN), or None.
        modified_at: ``LastModifiedDate`` in epoch seconds.
    """

    version: int
    text: str
    modified_by: str | None
    modified_at: float


class PolicyHistory(Protocol):
    """The versions of one SSM parameter."""

    def version(self, name: str, version: int | None = None) -> PolicyVersion | None:
        """Version ``version`` of parameter ``name`` (None: the newest), or None when
        the history no longer holds it (or the parameter is gone).

        Raises:
            PolicyHistoryError: SSM failed.
        """
        ...
