"""Powertools Idempotency configuration of the SQS-triggered handlers, built on first use.

``aws_lambda_powertools.utilities.idempotency`` is not imported with a handler module
(cold start, benchmarks/submit_path.py); each handler asks for its configuration here
when it first needs it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

#: A day: covers SQS redelivery (visibility timeouts times ``maxReceiveCount``).
EXPIRES_AFTER_SECONDS = 86_400


@functools.cache
def idempotency_config(event_key_jmespath: str) -> IdempotencyConfig:
    """The process's ``IdempotencyConfig`` keyed by ``event_key_jmespath`` (a missing key
    raises, records expire after :data:`EXPIRES_AFTER_SECONDS`)."""
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    return IdempotencyConfig(
        event_key_jmespath=event_key_jmespath,
        raise_on_no_idempotency_key=True,
        expires_after_seconds=EXPIRES_AFTER_SECONDS,
    )
