"""The errors the simulated Batch raises for requests Batch refuses, built in one place.

Batch answers every refused request with HTTP 400 and the error code
``ClientException`` (botocore's ``batch`` service model: its modeled client error); a
refusal naming something that does not
exist is the port's :class:`~quotagov.governance.ports.BatchNotFoundError`, every
other one its :class:`~quotagov.governance.ports.BatchClientError`. Messages start
with the request member at fault when there is one (``schedulingPriority: ...``).
"""

from __future__ import annotations

from quotagov.governance.ports import BatchClientError, BatchNotFoundError

#: The error code of every request the simulated Batch refuses.
CLIENT_EXCEPTION = "ClientException"


def client_error(operation: str, message: str) -> BatchClientError:
    """A ``ClientException`` of ``operation`` (e.g. ``"SubmitServiceJob"``) with ``message``."""
    return BatchClientError(operation, CLIENT_EXCEPTION, message)


def not_found(operation: str, message: str) -> BatchNotFoundError:
    """A ``ClientException`` of ``operation`` for a queue, share or job that does not exist."""
    return BatchNotFoundError(operation, CLIENT_EXCEPTION, message)
