"""The shared leaf builders of every function's composition (:mod:`quotagov.composition`).

:class:`Services` has one typed attribute per leaf dependency: clients, adapters and the
small pieces built on them (``batch`` is a :class:`~quotagov.governance.ports.BatchPort`,
``jobs`` the ``JobsTable`` repository, ``audit`` the audit queue sink, ``chat`` Slack),
each built on first use from the settings it names (:meth:`Settings.require` raises
``RuntimeError`` naming the variable). Nothing here decides what a function has: each
Lambda function's class in :mod:`quotagov.composition` subclasses :class:`Services`,
declares the variables it requires and builds its use cases from these leaves. The
tools (CLI commands) build a :class:`Services` directly for what they read.

Adapters are imported inside the builders, so importing this module loads neither boto3
nor slack_sdk (Lambda cold start). Nothing under ``governance/``, ``policy/`` or
``scheduler/`` imports it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from quotagov.clock import Clock, SystemClock
from quotagov.settings import Settings

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    from quotagov.adapters.dynamodb_replay import DynamoDBReplayCache
    from quotagov.adapters.slack import SlackCredentials
    from quotagov.governance.audit.chain import ChainWriter
    from quotagov.governance.audit.decisions import DecisionLog
    from quotagov.governance.audit.review import DigestSource
    from quotagov.governance.jobs.waiting import QueueReadings
    from quotagov.governance.notifications import OwnerNotifier
    from quotagov.governance.pacing import Pacer
    from quotagov.governance.ports import (
        AuditSink,
        BatchPort,
        ChainStore,
        ChatNotifier,
        DigestSigner,
        DigestStore,
        EscalationRepository,
        JobsRepository,
        NotificationLog,
        RecordSealer,
        SignatureChecker,
        SubmissionQueue,
        VersionStore,
    )
    from quotagov.governance.ports.handoff import DecisionHandoff
    from quotagov.governance.ports.messages import MessageMac
    from quotagov.governance.ports.policy_history import PolicyHistory
    from quotagov.governance.submission.capacity import EnvironmentCapacity
    from quotagov.policy.loading import FilePolicySource, PolicyStamp, SsmPolicySource
    from quotagov.policy.models import Policy

_T = TypeVar("_T")
_S = TypeVar("_S", bound="Services")


def _announce_policy(stamp: PolicyStamp) -> None:
    """Record which policy this process now runs: ``policyVersion`` and ``policyDigest``
    on every later log line of the function (Powertools Logger keys, shared by the
    function's loggers of its service), and, inside a Lambda function
    (``AWS_LAMBDA_FUNCTION_NAME`` set), a log line and one ``PolicyLoaded`` metric with
    the ``policyVersion`` dimension (once per process and version). Commands run
    outside Lambda print nothing more: their output stays theirs."""
    from aws_lambda_powertools import Logger
    from aws_lambda_powertools.metrics import MetricUnit

    from quotagov.handlers.metrics import emit

    service = os.environ.get("POWERTOOLS_SERVICE_NAME") or "quotagov"
    Logger(service=service).append_keys(policyVersion=stamp.version, policyDigest=stamp.digest)
    if not os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        return
    logging.getLogger(__name__).info(
        "policy loaded: version %s, digest %s", stamp.version, stamp.digest
    )
    emit(
        "PolicyLoaded",
        MetricUnit.Count,
        1,
        policyVersion=str(stamp.version) if stamp.version is not None else f"file:{stamp.digest}",
    )


def sender_name() -> str:
    """The running function's name (``AWS_LAMBDA_FUNCTION_NAME``, set by Lambda and by
    the local runtime's invoker), the sender a sealed message names; ``quotagov``
    outside a function (the CLI)."""
    return os.environ.get("AWS_LAMBDA_FUNCTION_NAME") or "quotagov"


#: ``(response_url, text) -> None``: an ephemeral answer to the Slack user who clicked.
SlackResponder = Callable[[str, str], None]


class _Dependency(Generic[_S, _T]):
    """A typed, lazily built dependency of :class:`Services` (a descriptor).

    ``cached=True``: built once per :class:`Services` (thread-safe). ``cached=False``:
    built on every read (for values that refresh themselves, like the policy read
    through Powertools Parameters' cache, and the use cases built on it). A value put in
    with :meth:`Services.set` wins over the builder either way.
    """

    def __init__(self, build: Callable[[_S], _T], *, cached: bool) -> None:
        self._build = build
        self._cached = cached
        self.name = build.__name__
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, instance: None, owner: type[_S]) -> _Dependency[_S, _T]: ...

    @overload
    def __get__(self, instance: _S, owner: type[_S]) -> _T: ...

    def __get__(self, instance: _S | None, owner: type[_S]) -> _T | _Dependency[_S, _T]:
        if instance is None:
            return self
        value: _T = instance._resolve(self.name, self._build, self._cached)
        return value


def dependency(*, cached: bool = True) -> Callable[[Callable[[_S], _T]], _Dependency[_S, _T]]:
    """Decorate a builder method of :class:`Services` (or a function's composition) as a
    typed dependency."""

    def wrap(build: Callable[[_S], _T]) -> _Dependency[_S, _T]:
        return _Dependency(build, cached=cached)

    return wrap


class Services:
    """Lazily built, typed dependencies of the use cases (one attribute each).

    Args:
        settings: the environment's settings (default: read from ``os.environ``).

    Reading a dependency whose setting is missing raises ``RuntimeError`` naming the
    environment variable (:meth:`Settings.require`).
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self._values: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._announced_policy: PolicyStamp | None = None

    @classmethod
    def names(cls) -> frozenset[str]:
        """The names of every dependency (what :meth:`set` accepts)."""
        return frozenset(
            name
            for klass in cls.__mro__
            for name, value in vars(klass).items()
            if isinstance(value, _Dependency)
        )

    def set(self, name: str, value: Any) -> None:
        """Inject ``value`` as the dependency ``name``.

        Raises:
            KeyError: ``name`` is not a dependency of :class:`Services`.
        """
        if name not in self.names():
            raise KeyError(f"no dependency named {name!r}")
        with self._lock:
            self._values[name] = value

    def _resolve(self, name: str, build: Callable[[Any], Any], cached: bool) -> Any:
        with self._lock:
            if name in self._values:
                return self._values[name]
            value = build(self)
            if cached:
                self._values[name] = value
            return value

    # --- time -----------------------------------------------------------------------

    @dependency()
    def clock(self) -> Clock:
        """The clock of every use case (the wall clock unless overridden)."""
        return SystemClock()

    # --- AWS Batch --------------------------------------------------------------------

    @dependency()
    def batch(self) -> BatchPort:
        """The boto3 Batch adapter (``quotagov.adapters.batch_boto3``)."""
        from quotagov.adapters.batch_boto3 import build_batch

        return build_batch(self.settings)

    @dependency()
    def environment_capacity(self) -> EnvironmentCapacity:
        """The governed queue's service-environment capacity for ``POST /jobs``
        (``DescribeJobQueues`` + ``DescribeServiceEnvironments`` through :attr:`batch`,
        built at the first read; cached 5 minutes)."""
        from quotagov.governance.submission.capacity import EnvironmentCapacity

        return EnvironmentCapacity(lambda: self.batch, self.clock)

    @dependency()
    def submit_pacer(self) -> Pacer:
        """Paces ``SubmitServiceJob`` to 2 calls/s per worker (virtual clocks are advanced)."""
        import time

        from quotagov.governance.pacing import SUBMIT_CALLS_PER_SECOND, Pacer

        clock = self.clock
        sleep = getattr(clock, "advance", None) or time.sleep
        return Pacer(SUBMIT_CALLS_PER_SECOND, clock, sleep)

    # --- policy -----------------------------------------------------------------------

    @dependency()
    def policy_source(self) -> SsmPolicySource | FilePolicySource:
        """Where the policy comes from: ``POLICY_FILE`` locally, else SSM ``POLICY_PARAMETER``."""
        from quotagov.policy.loading import policy_source

        return policy_source(self.settings.policy_file, self.settings.policy_parameter)

    @dependency(cached=False)
    def policy(self) -> Policy:
        """The current policy (the source caches: SSM through Powertools, 300 s).

        The version loaded is announced (:func:`_announce_policy`) whenever it changes.
        """
        source = self.policy_source
        policy = source.current()
        stamp = getattr(source, "stamp", None)
        if stamp is not None and stamp != self._announced_policy:
            self._announced_policy = stamp
            _announce_policy(stamp)
        return policy

    # --- job records, submission queue, idempotency -----------------------------------

    @dependency()
    def jobs(self) -> JobsRepository:
        """The ``JobsTable`` repository of :class:`JobRecord` (``JOBS_TABLE``), for every
        use case that reads or writes a job item."""
        from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository

        return DynamoDBJobsRepository(self.settings.require("jobs_table"), self.clock)

    @dependency()
    def notification_log(self) -> NotificationLog:
        """The owner-notification log on ``JobsTable`` (``JOBS_TABLE``)."""
        from quotagov.adapters.dynamodb_notifications import DynamoDBNotificationLog

        return DynamoDBNotificationLog.from_name(self.settings.require("jobs_table"))

    def make_owner_notifier(self, chat: ChatNotifier | None) -> OwnerNotifier:
        """Direct messages to job owners over the current policy, posted with ``chat``
        (None: a function that holds no Slack token; entries are logged ``no-recipient``)."""
        from quotagov.governance.notifications import OwnerNotifier

        return OwnerNotifier(
            log=self.notification_log,
            chat=chat,
            policy=self.policy,
            clock=self.clock,
            job_view_url=self.settings.job_view_url,
            load_job=self.jobs.get,
        )

    @dependency()
    def submission_queue(self) -> SubmissionQueue:
        """The SQS submission queue (``SUBMISSION_QUEUE_URL``)."""
        from quotagov.adapters.sqs_queue import SqsSubmissionQueue
        from quotagov.governance.provenance import SUBMISSION_QUEUE

        return SqsSubmissionQueue(
            self.settings.require("submission_queue_url"), seal=self.sealer(SUBMISSION_QUEUE)
        )

    @dependency()
    def decision_handoff(self) -> DecisionHandoff:
        """The SQS ``ApplyQueue`` to ``ApplyDecisionsFunction`` (``APPLY_QUEUE_URL``)."""
        from quotagov.adapters.sqs_queue import SqsDecisionHandoff
        from quotagov.governance.provenance import APPLY_QUEUE

        return SqsDecisionHandoff(
            self.settings.require("apply_queue_url"), seal=self.sealer(APPLY_QUEUE)
        )

    @dependency()
    def owner_notices(self) -> DecisionHandoff:
        """The SQS ``OwnerNoticeQueue`` to ``ApplyDecisionsFunction``
        (``OWNER_NOTICE_QUEUE_URL``): failed submissions whose owner it tells."""
        from quotagov.adapters.sqs_queue import SqsDecisionHandoff
        from quotagov.governance.provenance import NOTICE_QUEUE

        return SqsDecisionHandoff(
            self.settings.require("owner_notice_queue_url"), seal=self.sealer(NOTICE_QUEUE)
        )

    @dependency()
    def idempotency(self) -> DynamoDBPersistenceLayer:
        """Powertools Idempotency on ``IDEMPOTENCY_TABLE`` (key ``id``, TTL ``expiration``)."""
        from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

        return DynamoDBPersistenceLayer(table_name=self.settings.require("idempotency_table"))

    @dependency()
    def decision_idempotency(self) -> DynamoDBPersistenceLayer:
        """Powertools Idempotency of the apply function's hand-offs, on
        ``IDEMPOTENCY_TABLE`` too: its own persistence layer, because a layer keeps
        the first configuration (key path) it was used with."""
        from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

        return DynamoDBPersistenceLayer(table_name=self.settings.require("idempotency_table"))

    # --- escalations ------------------------------------------------------------------

    @dependency()
    def escalations_table(self) -> EscalationRepository:
        """``EscalationsTable`` (``ESCALATIONS_TABLE``)."""
        from quotagov.adapters import aws_clients
        from quotagov.adapters.dynamodb_escalations import EscalationsTable

        return EscalationsTable(
            aws_clients.client("dynamodb"), self.settings.require("escalations_table")
        )

    # --- audit ------------------------------------------------------------------------

    @dependency()
    def audit_chains(self) -> ChainStore:
        """The audit hash chains on ``AUDIT_TABLE``."""
        from quotagov.adapters import aws_clients
        from quotagov.adapters.dynamodb_audit import DynamoDBChainStore

        return DynamoDBChainStore(
            self.settings.require("audit_table"), aws_clients.client("dynamodb")
        )

    @dependency()
    def audit_versions(self) -> VersionStore:
        """Last known configurations and decisions on ``AUDIT_TABLE``."""
        from quotagov.adapters import aws_clients
        from quotagov.adapters.dynamodb_known import DynamoDBVersionStore

        return DynamoDBVersionStore(
            self.settings.require("audit_table"), aws_clients.client("dynamodb")
        )

    @dependency()
    def audit_sealer(self) -> RecordSealer | None:
        """The record MAC on ``AUDIT_SEAL_KEY`` (KMS HMAC_256); None when not configured."""
        if not self.settings.audit_seal_key:
            return None
        from quotagov.adapters import aws_clients
        from quotagov.adapters.kms_audit import KmsRecordSealer

        return KmsRecordSealer(self.settings.audit_seal_key, aws_clients.client("kms"))

    @dependency()
    def message_mac(self) -> MessageMac | None:
        """The message key (``MESSAGE_KEY``, KMS ``HMAC_256``): seals what this function
        sends, verifies what it receives; None when unset (tests without KMS)."""
        if not self.settings.message_key:
            return None
        import boto3

        from quotagov.adapters.kms_audit import KmsRecordSealer

        return KmsRecordSealer(self.settings.message_key, boto3.client("kms"))

    def sealer(self, purpose: str) -> Callable[[str], str] | None:
        """Seals this function's messages to the ``purpose`` queue under
        :attr:`message_mac`, naming the function (``AWS_LAMBDA_FUNCTION_NAME``, read at
        send time) as the sender; None without a message key."""
        mac = self.message_mac
        if mac is None:
            return None
        from quotagov.governance.provenance import MessageSealer

        return MessageSealer(mac, purpose, sender_name, self.clock)

    @dependency()
    def audit_writer(self) -> ChainWriter:
        """The one chain writer: appends sealed records to ``AUDIT_TABLE``."""
        from quotagov.governance.audit.chain import ChainWriter

        return ChainWriter(self.audit_chains, sealer=self.audit_sealer)

    @dependency()
    def audit_log(self) -> DecisionLog:
        """The writer's decision log (the audit function's; needs ``AUDIT_TABLE``)."""
        from quotagov.governance.audit.decisions import DecisionLog

        return DecisionLog(self.audit_writer, self.audit_versions, self.clock)

    @dependency()
    def audit(self) -> AuditSink:
        """The sink of the controller's decisions: the audit queue (``AUDIT_QUEUE_URL``)
        to the one writer, the audit function (whose own records go through
        :attr:`audit_log`)."""
        from quotagov.adapters.sqs_audit import SqsAuditQueue
        from quotagov.governance.audit.queued_decisions import QueuedAuditSink
        from quotagov.governance.provenance import AUDIT_QUEUE

        queue = SqsAuditQueue(
            self.settings.require("audit_queue_url"), seal=self.sealer(AUDIT_QUEUE)
        )
        return QueuedAuditSink(queue, self.clock)

    @dependency()
    def audit_digest_store(self) -> DigestStore:
        """The digest bucket (``AUDIT_DIGEST_BUCKET``)."""
        from quotagov.adapters import aws_clients
        from quotagov.adapters.s3_digests import S3DigestStore

        return S3DigestStore(self.settings.require("audit_digest_bucket"), aws_clients.client("s3"))

    @dependency()
    def audit_digest_signer(self) -> DigestSigner:
        """The digest signing key (``AUDIT_DIGEST_KEY``, KMS ECC_NIST_P256)."""
        from quotagov.adapters import aws_clients
        from quotagov.adapters.kms_audit import KmsDigestSigner

        return KmsDigestSigner(self.settings.require("audit_digest_key"), aws_clients.client("kms"))

    @dependency()
    def audit_digest_checker(self) -> SignatureChecker:
        """The digest public key: the file ``AUDIT_DIGEST_PUBLIC_KEY`` (PEM or DER) when
        set, else fetched once with ``kms:GetPublicKey`` (``AUDIT_DIGEST_KEY``)."""
        from quotagov.adapters.kms_audit import PublicKeyChecker

        if self.settings.audit_digest_public_key:
            from pathlib import Path

            return PublicKeyChecker(Path(self.settings.audit_digest_public_key).read_bytes())
        from quotagov.adapters import aws_clients

        return PublicKeyChecker.from_kms(
            self.settings.require("audit_digest_key"), aws_clients.client("kms")
        )

    def audit_digest_source(self) -> DigestSource | None:
        """The digests for ``audit verify``: None when no digest bucket is configured."""
        from quotagov.governance.audit.review import DigestSource

        if not self.settings.audit_digest_bucket:
            return None
        return DigestSource(self.audit_digest_store, self.audit_digest_checker)

    # --- Slack ------------------------------------------------------------------------

    @dependency()
    def slack_credentials(self) -> SlackCredentials:
        """Bot token and signing secret from Secrets Manager (``SLACK_SECRET_ARN``)."""
        from quotagov.adapters.slack import load_slack_credentials

        return load_slack_credentials(self.settings.require("slack_secret_arn"))

    @dependency()
    def slack_replays(self) -> DynamoDBReplayCache:
        """The replay cache of Slack signatures on ``IDEMPOTENCY_TABLE``."""
        from quotagov.adapters import aws_clients
        from quotagov.adapters.dynamodb_replay import DynamoDBReplayCache

        return DynamoDBReplayCache(
            self.settings.require("idempotency_table"), aws_clients.client("dynamodb"), self.clock
        )

    @dependency()
    def chat(self) -> ChatNotifier:
        """Slack ``chat.postMessage``/``chat.update`` with the bot token."""
        from quotagov.adapters.slack import SlackChatNotifier, build_web_client

        credentials = self.slack_credentials
        return SlackChatNotifier(
            build_web_client(credentials.bot_token, self.settings.slack_api_url)
        )

    @dependency()
    def slack_responder(self) -> SlackResponder:
        """``(response_url, text) -> None``: an ephemeral answer to the user who clicked."""
        from quotagov.adapters.slack import respond_ephemeral

        return respond_ephemeral

    def loaded_policy_version(self) -> int | None:
        """The SSM version of the policy last loaded through :attr:`policy` (None: a
        file, or not loaded yet)."""
        return self._announced_policy.version if self._announced_policy else None

    @dependency()
    def queue_readings(self) -> QueueReadings:
        """The governed queue's last reading for job views, kept a few seconds
        (:data:`quotagov.governance.jobs.waiting.QUEUE_READING_SECONDS`) by the warm function."""
        from quotagov.governance.jobs.waiting import QueueReadings

        return QueueReadings(self.clock)

    @dependency()
    def policy_history(self) -> PolicyHistory:
        """The policy parameter's versions (SSM ``GetParameterHistory``)."""
        from quotagov.adapters.ssm_policy_history import SsmPolicyHistory

        return SsmPolicyHistory()
