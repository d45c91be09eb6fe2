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
                if name in _UNCACHED:
                    return builder(self)
                self._values[name] = builder(self)
            return self._values[name]

    @property
    def clock(self) -> Clock:
        """The clock used by every use case (wall clock unless overridden)."""
        clock: Clock = self.get("clock")
        return clock


_BUILDERS: dict[str, Any] = {"clock": lambda _services: SystemClock()}
#: Dependencies built on every ``get`` (they cache by themselves, e.g. the policy).
_UNCACHED: set[str] = set()
_current: Services | None = None
_current_lock = threading.Lock()


def register(name: str, builder: Any, *, cached: bool = True) -> None:
    """Register ``builder(services) -> value`` as the way to build dependency ``name``.

    With ``cached=False`` the builder runs on every ``get`` (for values that refresh
    themselves, like the policy read through Powertools Parameters' cache).
    """
    _BUILDERS[name] = builder
    if cached:
        _UNCACHED.discard(name)
    else:
        _UNCACHED.add(name)


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


# --- Slack (quotagov.adapters.slack) ---------------------------------------------


def _build_slack_credentials(services: Services) -> Any:
    from quotagov.adapters.slack import load_slack_credentials

    return load_slack_credentials(services.settings.require("slack_secret_arn"))


def _build_chat(services: Services) -> Any:
    from quotagov.adapters.slack import SlackChatNotifier, build_web_client

    credentials = services.get("slack_credentials")
    return SlackChatNotifier(
        build_web_client(credentials.bot_token, services.settings.slack_api_url)
    )


register("slack_credentials", _build_slack_credentials)
register("chat", _build_chat)
register("slack_signing_secret", lambda services: services.get("slack_credentials").signing_secret)


# --- Submission path (jobs table, policy, submission queue, idempotency) ----------


def _build_jobs(services: Services) -> Any:
    """``JobsTable`` repository (``JOBS_TABLE``), see ``quotagov.adapters.dynamodb_jobs``."""
    from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository

    return DynamoDBJobsRepository(services.settings.require("jobs_table"), services.clock)


register("jobs", _build_jobs)


def _build_slack_responder(_services: Services) -> Any:
    """``(response_url, text) -> None``: an ephemeral answer to the user who clicked."""
    from quotagov.adapters.slack import respond_ephemeral

    return respond_ephemeral


register("slack_responder", _build_slack_responder)


# --- Escalations (quotagov.governance.escalations) --------------------------------


def _build_escalations_table(services: Services) -> Any:
    """``EscalationsTable`` (``ESCALATIONS_TABLE``); see ``adapters.dynamodb_escalations``."""
    import boto3

    from quotagov.adapters.dynamodb_escalations import EscalationsTable

    return EscalationsTable(
        boto3.client("dynamodb"), services.settings.require("escalations_table")
    )


def _build_escalations(services: Services) -> Any:
    """The escalation use case over the registered policy, jobs, batch, chat and audit."""
    from quotagov.governance.escalations import Escalations, JobRecordLookup
    from quotagov.governance.impact_preview import SchedulerImpactPreviewer
    from quotagov.governance.ports import NullAuditSink

    try:
        audit = services.get("audit")
    except KeyError:
        audit = NullAuditSink()
    policy = services.get("policy")
    jobs = JobRecordLookup(services.get("jobs"))
    batch = services.get("batch")
    return Escalations(
        policy=policy,
        jobs=jobs,
        batch=batch,
        repository=services.get("escalations_table"),
        chat=services.get("chat"),
        audit=audit,
        clock=services.clock,
        previewer=SchedulerImpactPreviewer(
            policy=policy, batch=batch, jobs=jobs, clock=services.clock
        ),
        default_channel=services.settings.approval_channel,
    )


register("escalations_table", _build_escalations_table)
register("escalations", _build_escalations, cached=False)


def _build_policy_source(services: Services) -> Any:
    """Where the policy comes from: ``POLICY_FILE`` locally, else SSM ``POLICY_PARAMETER``."""
    from quotagov.policy.loading import policy_source

    return policy_source(services.settings.policy_file, services.settings.policy_parameter)


register("policy_source", _build_policy_source)
# "policy" is the current Policy; the source caches (SSM: Powertools, 300 s by default).
register("policy", lambda services: services.get("policy_source").current(), cached=False)


def _build_submission_queue(services: Services) -> Any:
    """The SQS submission queue (``SUBMISSION_QUEUE_URL``)."""
    from quotagov.adapters.sqs_queue import SqsSubmissionQueue

    return SqsSubmissionQueue(services.settings.require("submission_queue_url"))


def _build_idempotency(services: Services) -> Any:
    """Powertools Idempotency store on ``IDEMPOTENCY_TABLE`` (key ``id``, TTL ``expiration``)."""
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    return DynamoDBPersistenceLayer(table_name=services.settings.require("idempotency_table"))


register("submission_queue", _build_submission_queue)
register("idempotency", _build_idempotency)


def _build_batch(services: Services) -> Any:
    """The boto3 Batch adapter (imported here so importing wiring does not load boto3)."""
    from quotagov.adapters.batch_boto3 import build_batch

    return build_batch(services.settings)


register("batch", _build_batch)
