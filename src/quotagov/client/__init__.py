"""The researcher's client of quotagov: :class:`Client` (the REST API, typed results) and,
in :mod:`quotagov.client.sagemaker`, ``GovernedTrainingQueue`` for the SageMaker Python
SDK. ``docs/guides/researcher.md`` shows both."""

from quotagov.client.api import (
    ApiError,
    Client,
    SubmissionRefusedError,
    Waiting,
    current_status,
    is_final,
    waiting_of,
)
from quotagov.client.transport import TransportError

__all__ = [
    "ApiError",
    "Client",
    "SubmissionRefusedError",
    "TransportError",
    "Waiting",
    "current_status",
    "is_final",
    "waiting_of",
]
