"""Lambda's part in the local runtime: one function's handler, run with its template environment.

:class:`Invoker` imports a function's handler (``module.attribute`` from the template),
puts the function's environment (:func:`function_environments`: the template's
variables with ``!Ref``/``!GetAtt`` resolved to the moto names) into ``os.environ``,
calls the handler with a fake :class:`~quotagov_tools.local.lambda_events.LambdaContext`, and
records an :class:`Invocation`. While the handler runs, Batch calls carry the
function's execution role as the caller (:func:`function_principal`), which is what
the synthesized CloudTrail events report. One invocation runs at a time: every call
holds the runtime's lock, like a function with a reserved concurrency of one.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from quotagov.clock import ManualClock
from quotagov_tools.local.lambda_events import LambdaContext
from quotagov_tools.local.stack import ACCOUNT_ID, STACK_NAME, FunctionSpec, Stack

logger = logging.getLogger(__name__)

#: A Lambda handler: ``handler(event, context) -> result``.
Handler = Callable[[dict[str, Any], Any], Any]


@dataclass
class Invocation:
    """One handler invocation: what ran, on which trigger, at which virtual time, and how.

    ``result`` is the handler's return value; ``error`` the exception text when it raised.
    """

    function: str
    trigger: str
    at: float
    event: dict[str, Any]
    result: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the handler returned (did not raise)."""
        return self.error is None


def function_principal(logical_id: str) -> str:
    """The assumed-role session ARN a function's calls carry (its execution role)."""
    return f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/{STACK_NAME}-{logical_id}Role/{logical_id}"


class ProcessEnvironment:
    """Changes to ``os.environ`` that :meth:`restore` undoes (the first value seen is kept)."""

    def __init__(self) -> None:
        self._saved: dict[str, str | None] = {}

    def set(self, values: Mapping[str, str]) -> None:
        """Set ``values`` in ``os.environ``, remembering what each name held before."""
        for key, value in values.items():
            self._saved.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def restore(self) -> None:
        """Put back every name :meth:`set` changed (removing those that were unset)."""
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved.clear()


def _env_text(value: Any) -> str:
    """An environment value as Lambda sets it: booleans lower case, lists and maps as JSON."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def function_environments(
    stack: Stack,
    functions: Mapping[str, FunctionSpec],
    local_env: Mapping[str, str],
    job_queue: str,
) -> dict[str, dict[str, str]]:
    """Each function's environment: its template variables resolved, then ``local_env``.

    ``JOB_QUEUE`` defaults to ``job_queue`` (the policy's governed queue) when the
    template does not set it.

    Raises:
        quotagov_tools.deploy.template.TemplateError: a variable references something unknown.
    """
    environments: dict[str, dict[str, str]] = {}
    for logical_id, spec in functions.items():
        resolved = stack.resolve(spec.environment)
        env = {key: _env_text(value) for key, value in resolved.items()}
        env.update(local_env)
        env.setdefault("JOB_QUEUE", job_queue)
        environments[logical_id] = env
    return environments


class Invoker:
    """Runs the template's functions one at a time and keeps the log of invocations.

    Args:
        clock: the virtual clock (an invocation's ``at``).
        lock: the runtime's lock, held during every invocation.
        environment: the process environment the functions' variables are set in.

    :attr:`functions` and :attr:`environments` are empty until :meth:`load`.
    """

    def __init__(
        self, clock: ManualClock, lock: threading.RLock, environment: ProcessEnvironment
    ) -> None:
        self.clock = clock
        self.lock = lock
        self.environment = environment
        self.functions: dict[str, FunctionSpec] = {}
        self.environments: dict[str, dict[str, str]] = {}
        #: Every invocation so far, in order.
        self.invocations: list[Invocation] = []
        self._callers: list[str] = []
        self._running: list[str] = []

    def load(
        self, functions: Mapping[str, FunctionSpec], environments: Mapping[str, dict[str, str]]
    ) -> None:
        """Take the template's functions and their environments (from the provisioning)."""
        self.functions.update(functions)
        self.environments.update(environments)

    def handler_for(self, function: str) -> Handler:
        """Import and return the handler callable of ``function`` (a template logical id).

        Raises:
            KeyError: when the template has no such function.
        """
        try:
            spec = self.functions[function]
        except KeyError:
            known = ", ".join(sorted(self.functions))
            raise KeyError(
                f"function {function!r} is not in the template (known: {known})"
            ) from None
        module_name, _, attribute = spec.handler.rpartition(".")
        module = importlib.import_module(module_name)
        handler: Handler = getattr(module, attribute)
        return handler

    def invoke(self, function: str, event: dict[str, Any], trigger: str = "invoke") -> Invocation:
        """Run ``function``'s handler on ``event`` with a fake Lambda context; never raises.

        The function's template environment is in ``os.environ`` during the call and
        its Batch calls are recorded with the function's role as the caller. An
        unknown function, or a handler that raises, gives an invocation with ``error``.
        """
        with self.lock:
            record = Invocation(
                function=function, trigger=trigger, at=self.clock.now(), event=event
            )
            try:
                record.result = self._call(function, event)
            except Exception as exc:
                record.error = f"{type(exc).__name__}: {exc}"
                logger.debug("invocation of %s failed:\n%s", function, traceback.format_exc())
            self.invocations.append(record)
            return record

    def _call(self, function: str, event: dict[str, Any]) -> Any:
        """The handler's answer, with the function's environment and caller in place."""
        handler = self.handler_for(function)
        spec = self.functions[function]
        self.use_environment(function)
        self._running.append(function)
        try:
            with self.acting_as(function_principal(function)):
                return handler(event, LambdaContext(function, spec.timeout_seconds, spec.memory_mb))
        finally:
            self._running.pop()

    def use_environment(self, function: str) -> None:
        """Make ``os.environ`` hold exactly ``function``'s variables: its environment,
        ``AWS_LAMBDA_FUNCTION_NAME``, and every other quotagov setting blanked (as in
        Lambda, where a function sees no other function's variables).

        Raises:
            KeyError: no such function.
        """
        from quotagov.settings import Settings

        environment = self.environments[function]
        self.environment.set({**dict.fromkeys(Settings.variables(), ""), **environment})
        os.environ["AWS_LAMBDA_FUNCTION_NAME"] = function

    def current_function(self) -> str | None:
        """The logical id of the function whose handler is running now, None between
        invocations."""
        return self._running[-1] if self._running else None

    @contextlib.contextmanager
    def acting_as(self, principal: str) -> Iterator[None]:
        """Make Batch calls inside the block carry ``principal`` as the caller."""
        self._callers.append(principal)
        try:
            yield
        finally:
            self._callers.pop()

    def current_caller(self) -> str:
        """The principal of the Batch call being made now (the account root when none)."""
        return self._callers[-1] if self._callers else f"arn:aws:iam::{ACCOUNT_ID}:root"
