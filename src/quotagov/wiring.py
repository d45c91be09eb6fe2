"""The composition root: builds the adapters a handler needs, once per process.

Handlers call :func:`services` and pass what they need to a use case. The local
runtime and the tests call :func:`override` to inject the simulated Batch, a manual
clock, a fake Slack client and so on; :func:`reset` drops everything built so far.

Only this module and ``quotagov.adapters`` decide which concrete adapter is used.
"""

from __future__ import annotations

import threading
from typing import Any

from quotagov.clock import Clock, SystemClock
from quotagov.settings import Settings


class Services:
    """Lazily built dependencies of the use cases.

    Values put in with :meth:`set` win over built ones. Each ``get`` of a name builds
    the dependency once (thread-safe) with the builder registered for it.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self._values: dict[str, Any] = {}
        self._lock = threading.RLock()

    def set(self, name: str, value: Any) -> None:
        """Inject ``value`` as the dependency ``name``."""
        with self._lock:
            self._values[name] = value

    def get(self, name: str) -> Any:
        """Return the dependency ``name``, building it on first use.

        Raises:
            KeyError: when no builder is registered for ``name`` and none was set.
        """
        with self._lock:
            if name not in self._values:
                try:
                    builder = _BUILDERS[name]
                except KeyError:
                    raise KeyError(f"no dependency named {name!r} is registered") from None
                self._values[name] = builder(self)
            return self._values[name]

    @property
    def clock(self) -> Clock:
        """The clock used by every use case (wall clock unless overridden)."""
        clock: Clock = self.get("clock")
        return clock


_BUILDERS: dict[str, Any] = {"clock": lambda _services: SystemClock()}


def _audit_chains(services: Services) -> Any:
    import boto3

    from quotagov.adapters.dynamodb_audit import DynamoDBChainStore

    return DynamoDBChainStore(services.settings.require("audit_table"), boto3.client("dynamodb"))


def _audit_versions(services: Services) -> Any:
    import boto3

    from quotagov.adapters.dynamodb_known import DynamoDBVersionStore

    return DynamoDBVersionStore(services.settings.require("audit_table"), boto3.client("dynamodb"))


def _audit_sink(services: Services) -> Any:
    from quotagov.governance.audit_chain import ChainWriter
    from quotagov.governance.audit_decisions import DecisionLog

    return DecisionLog(
        ChainWriter(services.get("audit_chains")), services.get("audit_versions"), services.clock
    )


# The audit log (issue 7): "audit" is the AuditSink of the controller's decisions.
_BUILDERS.update(audit_chains=_audit_chains, audit_versions=_audit_versions, audit=_audit_sink)
_current: Services | None = None
_current_lock = threading.Lock()


def register(name: str, builder: Any) -> None:
    """Register ``builder(services) -> value`` as the way to build dependency ``name``."""
    _BUILDERS[name] = builder


def services() -> Services:
    """Return this process's :class:`Services`, created from the environment on first use."""
    global _current
    with _current_lock:
        if _current is None:
            _current = Services()
        return _current


def override(settings: Settings | None = None, **values: Any) -> Services:
    """Replace this process's services with new ones holding ``values``; returns them."""
    global _current
    with _current_lock:
        _current = Services(settings)
        for name, value in values.items():
            _current.set(name, value)
        return _current


def reset() -> None:
    """Forget every built or injected dependency (next :func:`services` starts afresh)."""
    global _current
    with _current_lock:
        _current = None


def _build_batch(services: Services) -> Any:
    """The boto3 Batch adapter (imported here so importing wiring does not load boto3)."""
    from quotagov.adapters.batch_boto3 import build_batch

    return build_batch(services.settings)


register("batch", _build_batch)
