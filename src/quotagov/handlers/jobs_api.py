"""``JobsApiFunction``: the jobs REST API (``POST /jobs``, ``GET /jobs/{jobId}``, ...).

One Powertools ``APIGatewayRestResolver`` with request validation; each feature's routes
are a ``Router`` in a module of :mod:`quotagov.handlers.routes`, listed in
:data:`ROUTE_MODULES`. Errors answer
through the one table of :mod:`quotagov.handlers.api_errors`; validation faults answer
400 with field paths.

Environment: ``JOBS_TABLE``, ``SUBMISSION_QUEUE_URL``, ``POLICY_PARAMETER``,
``JOB_QUEUE``, ``POWERTOOLS_SERVICE_NAME``, ``POWERTOOLS_METRICS_NAMESPACE``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths

from quotagov.composition import JobsApi, current
from quotagov.handlers.api_errors import install_error_handlers, query_fault_answer
from quotagov.handlers.routes import jobs_disposition, jobs_get, jobs_list, jobs_submit

#: Route modules under ``quotagov.handlers.routes``; each exposes ``router``.
ROUTE_MODULES: tuple[ModuleType, ...] = (jobs_submit, jobs_list, jobs_get, jobs_disposition)

logger = Logger()
app = APIGatewayRestResolver(enable_validation=True)
install_error_handlers(app)
for _module in ROUTE_MODULES:
    app.include_router(_module.router)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Lambda entry point: resolve the REST event with :data:`app` (a 400 first for query
    parameters that are not text: :func:`~quotagov.handlers.api_errors.query_fault_answer`)."""
    current(JobsApi)  # cold start: a missing setting fails here, before any work
    refused = query_fault_answer(event)
    if refused is not None:
        return refused
    return app.resolve(event, context)
