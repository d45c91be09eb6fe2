"""X-Ray tracing of the handlers (Powertools Tracer), loaded when first needed.

``Tracer()`` imports the X-Ray SDK (about 86 ms of CPU, more than half of a bare
``import boto3``; benchmarks/submit_path.py). :func:`capture_lambda_handler` defers
that to the first invocation, so importing a handler module (the Lambda init phase,
and every test or local command that imports it) does not pay for it. The first
invocation builds the one shared ``Tracer`` and wraps the handler with its
``capture_lambda_handler`` (the handler's subsegment, cold start annotation, response
and exception metadata as Powertools records them).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

_Handler = TypeVar("_Handler", bound=Callable[..., Any])
_lock = threading.Lock()
_tracer: list[Tracer] = []


def tracer() -> Tracer:
    """The process's Powertools ``Tracer`` (built, and the X-Ray SDK imported, on first use)."""
    with _lock:
        if not _tracer:
            from aws_lambda_powertools import Tracer

            _tracer.append(Tracer())
        return _tracer[0]


def capture_lambda_handler(handler: _Handler) -> _Handler:
    """``Tracer().capture_lambda_handler(handler)``, with the Tracer built on the first call."""
    traced: list[Callable[..., Any]] = []

    @functools.wraps(handler)
    def wrapper(event: Any, context: Any) -> Any:
        if not traced:
            traced.append(tracer().capture_lambda_handler(handler))
        return traced[0](event, context)

    return wrapper  # type: ignore[return-value]
