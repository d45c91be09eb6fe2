"""Explicit composition per Lambda function: what each function is built from.

One class per function of ``template.yaml`` (:data:`COMPOSITIONS`, keyed by logical id),
each a :class:`~quotagov.wiring.Services` (the shared leaf builders: clients, adapters)
that

* declares :attr:`Composition.requires`, the environment variables the function cannot
  run without, and :attr:`Composition.reads`, the ones it reads that may be empty (an
  empty ``APPROVAL_CHANNEL`` means "the share's own channel"); it sees no other setting
  (they are blanked), so a builder that reaches for another function's setting fails;
* builds its use cases from the leaves with every choice written out (the Slack
  function's escalations hand decisions to the ``ApplyQueue``; the submit worker tells
  failed owners through the ``OwnerNoticeQueue``; the apply function applies).

Constructing a composition checks its settings first and raises
:class:`MissingSettingsError` naming the function and every missing variable; each
handler calls :func:`current` for its class at the start of an invocation, before any
work, so a function deployed without a setting fails its first invocation, loudly,
instead of degrading. There is no fallback: a dependency a function does not need is not
in its class.

What comes from outside is injected through the same classes: :func:`inject` (the local
runtime's clock and simulated Batch; a test's fake Slack or Batch) stores values every
composition built afterwards receives (:meth:`~quotagov.wiring.Services.set`), and
:func:`cold_start` drops the built compositions (a new Lambda instance) but keeps them.

Tests (``tests/test_composition.py``) build every class with exactly its function's
template environment, remove each required variable in turn, and compare
:data:`COMPOSITIONS` with the template and :class:`~quotagov.settings.Settings`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from quotagov.settings import Settings
from quotagov.wiring import Services, dependency, sender_name

if TYPE_CHECKING:
    from quotagov.governance.audit.decisions import DecisionLog
    from quotagov.governance.audit.digests import DigestPublisher
    from quotagov.governance.audit.policy_parameter import PolicyParameterAudit
    from quotagov.governance.audit.trail import AuditTrail
    from quotagov.governance.dispositions import DispositionDeps
    from quotagov.governance.escalations import Escalations
    from quotagov.governance.job_state.updates import JobStateDeps
    from quotagov.governance.jobs.waiting import WaitExplainer
    from quotagov.governance.notifications import OwnerNotifier
    from quotagov.governance.ports import ChatNotifier
    from quotagov.governance.ports.handoff import DecisionHandoff
    from quotagov.governance.submission import SubmissionDeps
    from quotagov.governance.submission.reconcile import ReconcileDeps
    from quotagov.policy.models import Policy

logger = logging.getLogger(__name__)

_C = TypeVar("_C", bound="Composition")


class MissingSettingsError(RuntimeError):
    """A function started without environment variables it requires.

    Attributes:
        function: the template logical id (``JobsApiFunction``).
        missing: the variables, sorted (``["AUDIT_QUEUE_URL", "JOBS_TABLE"]``).
    """

    def __init__(self, function: str, missing: list[str]) -> None:
        self.function = function
        self.missing = missing
        super().__init__(
            f"{function}: required environment variable(s) not set: {', '.join(missing)}"
        )


def _scoped(settings: Settings, variables: frozenset[str]) -> Settings:
    """``settings`` with every field outside ``variables`` blanked."""
    return replace(
        settings,
        **{f.name: "" for f in fields(Settings) if f.name.upper() not in variables},
    )


class Composition(Services):
    """One Lambda function's dependencies (subclass per function, see the module doc).

    Args:
        settings: the environment (default: ``os.environ``); only :attr:`requires` and
            :attr:`reads` are kept.
        values: dependencies to inject (:meth:`~quotagov.wiring.Services.set`).

    Raises:
        MissingSettingsError: a variable of :attr:`requires` is empty or unset.
        KeyError: a name in ``values`` is not a dependency.
    """

    #: The function's logical id in ``template.yaml``.
    function: ClassVar[str] = ""
    #: Environment variables that must be set (non-empty).
    requires: ClassVar[frozenset[str]] = frozenset()
    #: Environment variables read that may be empty (each documented in
    #: :class:`~quotagov.settings.Settings`).
    reads: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, settings: Settings | None = None, **values: Any) -> None:
        given = settings or Settings.from_env()
        missing = sorted(name for name in self.requires if not getattr(given, name.lower()))
        if missing:
            raise MissingSettingsError(self.function, missing)
        super().__init__(_scoped(given, self.requires | self.reads))
        for name, value in values.items():
            self.set(name, value)

    @classmethod
    def variables(cls) -> frozenset[str]:
        """Every environment variable the function reads (required or not)."""
        return cls.requires | cls.reads


#: Every function reads these (``Globals`` of the template): the governed queue and
#: the message key sealing and verifying queue messages.
_COMMON = frozenset({"JOB_QUEUE", "MESSAGE_KEY"})
#: Local runs point Slack at the loopback fake (``SLACK_API_URL``; unset in AWS).
_SLACK = frozenset({"SLACK_SECRET_ARN"})
_SLACK_READS = frozenset({"SLACK_API_URL"})


class _PolicyReader(Composition):
    """Shared pieces of the functions that read the policy (``POLICY_PARAMETER``)."""

    def escalations_with(
        self,
        *,
        chat: ChatNotifier,
        handoff: DecisionHandoff | None,
        notify: bool,
        batch: bool = True,
    ) -> Escalations:
        """The escalation use case over the current policy, posting with ``chat``;
        ``handoff``: decisions and direct levels go to the apply function (None: a
        function that only settles or expires them); ``notify``: owners get a DM;
        ``batch`` False: no Batch client nor impact previewer is built (the Slack
        function only records clicks: :class:`_NoBatch` stands in)."""
        from quotagov.governance.escalations import Escalations, JobRecordLookup
        from quotagov.governance.escalations.preview import SchedulerImpactPreviewer

        policy, clock = self.policy, self.clock
        jobs = JobRecordLookup(self.jobs)
        port: Any = self.batch if batch else _NoBatch()
        return Escalations(
            policy=policy,
            jobs=jobs,
            batch=port,
            repository=self.escalations_table,
            chat=chat,
            audit=self.audit,
            clock=clock,
            previewer=(
                SchedulerImpactPreviewer(policy=policy, batch=port, jobs=jobs, clock=clock)
                if batch
                else port
            ),
            default_channel=self.settings.approval_channel,
            notifier=self.make_owner_notifier(chat) if notify else None,
            handoff=handoff,
            proofs=self.message_mac,
            sender=sender_name,
        )

    def dispositions_with(
        self, *, chat: ChatNotifier | None, handoff: DecisionHandoff | None
    ) -> DispositionDeps:
        """What the disposition use cases talk to, over the current policy; ``chat``
        None: the function holds no bot token (questions are the apply function's);
        with a ``handoff`` no Batch client is built (:class:`_NoBatch`: the decision is
        recorded and handed off, the apply function submits the successor)."""
        from quotagov.governance.dispositions import DispositionDeps

        batch: Any = self.batch if handoff is None else _NoBatch()
        return DispositionDeps(
            store=self.jobs,
            batch=batch,
            policy=self.policy,
            audit=self.audit,
            clock=self.clock,
            chat=chat,
            job_queue=self.settings.require("job_queue"),
            platform_channel=self.settings.platform_channel,
            notifier=self.make_owner_notifier(chat) if chat is not None else None,
            handoff=handoff,
            proofs=self.message_mac,
            sender=sender_name,
        )

    def submission_with(
        self,
        *,
        submit: bool,
        notifier: OwnerNotifier | None,
    ) -> SubmissionDeps:
        """The submission use cases' dependencies: ``submit`` True for the worker
        (Batch, the pacer, the owner notice queue), False for the API (the submission
        queue and the environment capacity)."""
        from quotagov.governance.submission import SubmissionDeps

        return SubmissionDeps(
            policy=self.policy,
            jobs=self.jobs,
            clock=self.clock,
            audit=self.audit,
            job_queue=self.settings.require("job_queue"),
            batch=self.batch if submit else None,
            queue=None if submit else self.submission_queue,
            pace=self.submit_pacer if submit else None,
            notifier=notifier,
            capacity=None if submit else self.environment_capacity,
            notices=self.owner_notices if submit else None,
            proofs=self.message_mac,
            sender=sender_name,
        )


class JobsApi(_PolicyReader):
    """``JobsApiFunction``: ``POST/GET /jobs``, ``GET /jobs/{jobId}`` and
    ``POST /jobs/{jobId}/disposition`` (which submits the successor itself: the function
    holds ``batch:SubmitServiceJob``)."""

    function = "JobsApiFunction"
    requires = (
        _COMMON
        | _SLACK
        | frozenset(
            {
                "AUDIT_QUEUE_URL",
                "JOBS_TABLE",
                "PLATFORM_CHANNEL",
                "POLICY_PARAMETER",
                "SUBMISSION_QUEUE_URL",
            }
        )
    )
    reads = _SLACK_READS | frozenset({"JOB_VIEW_URL"})

    @dependency(cached=False)
    def submission(self) -> SubmissionDeps:
        """``POST /jobs``: records, queues, audits refusals, DMs the owner."""
        return self.submission_with(submit=False, notifier=self.make_owner_notifier(self.chat))

    @dependency(cached=False)
    def dispositions(self) -> DispositionDeps:
        """``POST /jobs/{jobId}/disposition``, applied in this function."""
        return self.dispositions_with(chat=self.chat, handoff=None)

    @dependency(cached=False)
    def wait_explainer(self) -> WaitExplainer:
        """Why a RUNNABLE job waits (``GET /jobs/{jobId}``)."""
        from quotagov.governance.escalations import JobRecordLookup
        from quotagov.governance.jobs.waiting import WaitExplainer

        return WaitExplainer(
            policy=self.policy,
            batch=self.batch,
            jobs=JobRecordLookup(self.jobs),
            clock=self.clock,
            capacity=self.environment_capacity,
            readings=self.queue_readings,
        )


class SubmitWorker(_PolicyReader):
    """``SubmitWorkerFunction``: submits queued submissions to Batch; a submission it
    fails goes to the ``OwnerNoticeQueue`` (it holds no Slack token)."""

    function = "SubmitWorkerFunction"
    requires = _COMMON | frozenset(
        {
            "AUDIT_QUEUE_URL",
            "IDEMPOTENCY_TABLE",
            "JOBS_TABLE",
            "OWNER_NOTICE_QUEUE_URL",
            "POLICY_PARAMETER",
        }
    )

    @dependency(cached=False)
    def submission(self) -> SubmissionDeps:
        """The worker's submission dependencies (Batch, pacer, owner notice queue)."""
        return self.submission_with(submit=True, notifier=None)


class JobState(_PolicyReader):
    """``JobStateFunction``: Batch job-state events; dispositions of failed jobs (it
    submits successors itself) and the owners' DMs."""

    function = "JobStateFunction"
    requires = (
        _COMMON
        | _SLACK
        | frozenset({"AUDIT_QUEUE_URL", "JOBS_TABLE", "PLATFORM_CHANNEL", "POLICY_PARAMETER"})
    )
    reads = _SLACK_READS | frozenset({"JOB_VIEW_URL"})

    @dependency(cached=False)
    def dispositions(self) -> DispositionDeps:
        """Dispositions applied in this function, questions posted with the bot token."""
        return self.dispositions_with(chat=self.chat, handoff=None)

    @dependency(cached=False)
    def job_state(self) -> JobStateDeps:
        """What the job-state use case talks to (the store plus :attr:`dispositions`)."""
        from quotagov.governance.job_state.updates import JobStateDeps

        dispositions = self.dispositions
        return JobStateDeps(
            store=self.jobs, dispositions=dispositions, notifier=dispositions.notifier
        )


class EscalationsApi(_PolicyReader):
    """``EscalationsApiFunction``: ``POST /escalations``; approvals and direct levels go
    to the ``ApplyQueue`` (only the apply function calls ``UpdateServiceJob``)."""

    function = "EscalationsApiFunction"
    requires = (
        _COMMON
        | _SLACK
        | frozenset(
            {
                "APPLY_QUEUE_URL",
                "AUDIT_QUEUE_URL",
                "ESCALATIONS_TABLE",
                "JOBS_TABLE",
                "PLATFORM_CHANNEL",
                "POLICY_PARAMETER",
            }
        )
    )
    reads = _SLACK_READS | frozenset({"APPROVAL_CHANNEL", "JOB_VIEW_URL"})

    @dependency(cached=False)
    def escalations(self) -> Escalations:
        """Requests, cards posted with the bot token, decisions handed off."""
        return self.escalations_with(chat=self.chat, handoff=self.decision_handoff, notify=True)


class _NoBotToken:
    """The Slack function's :class:`~quotagov.governance.ports.ChatNotifier`: it holds
    the signing secret only, never the bot token, so any post or update raises
    :class:`~quotagov.governance.ports.ChatError` (its use cases hand cards to the
    apply function; reaching this is a wiring fault, never a silent no-op)."""

    def _refuse(self, *_: Any, **__: Any) -> Any:
        from quotagov.governance.ports import ChatError

        raise ChatError("no_bot_token: SlackInteractionsFunction holds no Slack bot token")

    post = update = _refuse


class _NoBatch:
    """The Slack function's Batch port and impact previewer: it records clicks and
    hands them off, so it calls Batch for nothing and is built no Batch client; any
    call raises :class:`RuntimeError` (a wiring fault, never a silent no-op)."""

    def __getattr__(self, name: str) -> Any:
        def refuse(*_: Any, **__: Any) -> Any:
            raise RuntimeError(f"no_batch: SlackInteractionsFunction calls no Batch API ({name})")

        if name.startswith("__"):
            raise AttributeError(name)
        return refuse


class SlackInteractions(_PolicyReader):
    """``SlackInteractionsFunction``: verifies and records clicks; every decision is
    handed to the ``ApplyQueue`` (no Batch action, no bot token, no audit table)."""

    function = "SlackInteractionsFunction"
    requires = _COMMON | frozenset(
        {
            "APPLY_QUEUE_URL",
            "AUDIT_QUEUE_URL",
            "ESCALATIONS_TABLE",
            "IDEMPOTENCY_TABLE",
            "JOBS_TABLE",
            "PLATFORM_CHANNEL",
            "POLICY_PARAMETER",
            "SLACK_SIGNING_SECRET_ARN",
        }
    )
    reads = frozenset({"APPROVAL_CHANNEL", "JOB_VIEW_URL"})

    @dependency(cached=False)
    def escalations(self) -> Escalations:
        """Approve/Deny clicks: recorded, then handed off."""
        chat: Any = _NoBotToken()
        return self.escalations_with(
            chat=chat, handoff=self.decision_handoff, notify=False, batch=False
        )

    @dependency(cached=False)
    def dispositions(self) -> DispositionDeps:
        """Disposition clicks: recorded, then handed off."""
        return self.dispositions_with(chat=None, handoff=self.decision_handoff)

    @dependency()
    def slack_signing_secret(self) -> str:
        """Slack's signing secret (``SLACK_SIGNING_SECRET_ARN``), for ``X-Slack-Signature``."""
        from quotagov.adapters.slack import load_signing_secret

        return load_signing_secret(self.settings.require("slack_signing_secret_arn"))


class ApplyDecisions(_PolicyReader):
    """``ApplyDecisionsFunction``: applies the handed-off decisions (the only
    ``UpdateServiceJob`` caller), tells owners of failed submissions, retries."""

    function = "ApplyDecisionsFunction"
    requires = (
        _COMMON
        | _SLACK
        | frozenset(
            {
                "AUDIT_QUEUE_URL",
                "ESCALATIONS_TABLE",
                "IDEMPOTENCY_TABLE",
                "JOBS_TABLE",
                "OWNER_NOTICE_QUEUE_URL",
                "PLATFORM_CHANNEL",
                "POLICY_PARAMETER",
            }
        )
    )
    reads = _SLACK_READS | frozenset({"APPROVAL_CHANNEL", "JOB_VIEW_URL"})

    @dependency(cached=False)
    def escalations(self) -> Escalations:
        """Settles approvals here (no hand-off: this is where decisions are applied)."""
        return self.escalations_with(chat=self.chat, handoff=None, notify=True)

    @dependency(cached=False)
    def dispositions(self) -> DispositionDeps:
        """Submits the successors of handed-off dispositions."""
        return self.dispositions_with(chat=self.chat, handoff=None)

    @dependency(cached=False)
    def owner_notifier(self) -> OwnerNotifier:
        """Owner DMs of failed submissions and their retries."""
        return self.make_owner_notifier(self.chat)


class EscalationExpiry(_PolicyReader):
    """``EscalationExpiryFunction``: expires escalations and restores priorities."""

    function = "EscalationExpiryFunction"
    requires = (
        _COMMON
        | _SLACK
        | frozenset(
            {
                "AUDIT_QUEUE_URL",
                "ESCALATIONS_TABLE",
                "JOBS_TABLE",
                "PLATFORM_CHANNEL",
                "POLICY_PARAMETER",
            }
        )
    )
    reads = _SLACK_READS | frozenset({"APPROVAL_CHANNEL", "JOB_VIEW_URL"})

    @dependency(cached=False)
    def escalations(self) -> Escalations:
        """Expiry, in this function."""
        return self.escalations_with(chat=self.chat, handoff=None, notify=True)


def _settle_seconds(text: str) -> float:
    """``AUDIT_SETTLE_SECONDS`` as seconds (the template sets 300; ``0`` writes every call
    on arrival, in arrival order).

    Raises:
        ValueError: naming the variable, when ``text`` is not a number (a negative one
            is refused by :class:`~quotagov.governance.audit.trail.AuditTrail`).
    """
    try:
        return float(text.strip())
    except ValueError:
        raise ValueError(f"AUDIT_SETTLE_SECONDS: {text!r} is not a number of seconds") from None


class Audit(Composition):
    """``AuditFunction``: the one audit writer (CloudTrail-recorded calls, the policy
    parameter's changes, the decisions of the audit queue)."""

    function = "AuditFunction"
    requires = (
        _COMMON
        | _SLACK
        | frozenset(
            {
                "AUDIT_SEAL_KEY",
                "AUDIT_SETTLE_SECONDS",
                "AUDIT_TABLE",
                "CONTROLLER_PRINCIPALS",
                "PLATFORM_CHANNEL",
                "POLICY_PARAMETER",
            }
        )
    )
    reads = _SLACK_READS | frozenset({"JOB_VIEW_URL"})

    def _alert_chat(self) -> ChatNotifier | None:
        """The risk alerts' Slack: a secret that cannot be read never stops a record
        (logged; the finding is recorded, not posted)."""
        try:
            return self.chat
        except Exception:
            logger.warning("chat notifier unavailable; risky changes are recorded, not posted")
            return None

    @dependency()
    def decision_log(self) -> DecisionLog:
        """The writer's decision log: the audit queue's decisions go in here."""
        return self.audit_log

    @dependency(cached=False)
    def audit_trail(self) -> AuditTrail:
        """The audit of CloudTrail-recorded Batch calls, over the current policy."""
        from quotagov.governance.audit.trail import AuditTrail

        settings = self.settings
        return AuditTrail(
            chains=self.audit_chains,
            versions=self.audit_versions,
            batch=self.batch,
            policy=self.policy,
            policy_version=self.loaded_policy_version(),
            clock=self.clock,
            controller_principals=[
                p.strip() for p in settings.require("controller_principals").split(",")
            ],
            chat=self._alert_chat(),
            platform_channel=settings.platform_channel,
            writer=self.audit_writer,
            settle_seconds=_settle_seconds(settings.require("audit_settle_seconds")),
        )

    @dependency(cached=False)
    def policy_parameter_audit(self) -> PolicyParameterAudit:
        """The audit of changes to ``POLICY_PARAMETER`` (chain of ``JOB_QUEUE``); built
        even when the parameter holds an invalid policy."""
        from quotagov.governance.audit.policy_parameter import PolicyParameterAudit
        from quotagov.policy import PolicyError

        settings = self.settings
        try:
            policy: Policy | None = self.policy
        except PolicyError as exc:  # the change being audited may be what broke it
            logger.warning("policy not loaded: %s", exc)
            policy = None
        return PolicyParameterAudit(
            parameter=settings.require("policy_parameter"),
            history=self.policy_history,
            writer=self.audit_writer,
            governed_queue=settings.require("job_queue"),
            policy=policy,
            policy_version=self.loaded_policy_version(),
            clock=self.clock,
            chat=self._alert_chat(),
            platform_channel=settings.platform_channel,
        )


class Reconciler(Composition):
    """``ReconcilerFunction``: re-queues or fails submissions stuck QUEUED."""

    function = "ReconcilerFunction"
    requires = _COMMON | frozenset(
        {"AUDIT_QUEUE_URL", "JOBS_TABLE", "OWNER_NOTICE_QUEUE_URL", "SUBMISSION_QUEUE_URL"}
    )
    reads = frozenset({"JOB_VIEW_URL", "STALE_SUBMISSION_SECONDS"})

    @dependency(cached=False)
    def reconcile(self) -> ReconcileDeps:
        """The reconciler's dependencies; ``STALE_SUBMISSION_SECONDS`` (empty: 900).

        Raises:
            ValueError: ``STALE_SUBMISSION_SECONDS`` is not a whole number >= 1.
        """
        from quotagov.governance.submission.reconcile import (
            DEFAULT_STALE_AFTER_SECONDS,
            ReconcileDeps,
        )

        raw = self.settings.stale_submission_seconds.strip()
        try:
            stale = int(raw) if raw else DEFAULT_STALE_AFTER_SECONDS
        except ValueError:
            raise ValueError(
                f"STALE_SUBMISSION_SECONDS: {raw!r} is not a whole number of seconds"
            ) from None
        return ReconcileDeps(
            jobs=self.jobs,
            queue=self.submission_queue,
            batch=self.batch,
            audit=self.audit,
            clock=self.clock,
            job_queue=self.settings.require("job_queue"),
            stale_after_seconds=stale,
            notices=self.owner_notices,
            proofs=self.message_mac,
        )


class AuditDigest(Composition):
    """``AuditDigestFunction``: signs the chains' digests into the Object Lock bucket."""

    function = "AuditDigestFunction"
    requires = frozenset(
        {"AUDIT_DIGEST_BUCKET", "AUDIT_DIGEST_KEY", "AUDIT_SEAL_KEY", "AUDIT_TABLE"}
    )

    @dependency()
    def audit_digests(self) -> DigestPublisher:
        """The digest function's use case (chains read-only, bucket, signing key, seals)."""
        from quotagov.governance.audit.digests import DigestPublisher

        return DigestPublisher(
            chains=self.audit_chains,
            store=self.audit_digest_store,
            signer=self.audit_digest_signer,
            clock=self.clock,
            sealer=self.audit_sealer,
        )


#: Every function's composition by template logical id.
COMPOSITIONS: Mapping[str, type[Composition]] = {
    kind.function: kind
    for kind in (
        JobsApi,
        SubmitWorker,
        JobState,
        EscalationsApi,
        SlackInteractions,
        ApplyDecisions,
        EscalationExpiry,
        Audit,
        Reconciler,
        AuditDigest,
    )
}

_lock = threading.Lock()
_settings: Settings | None = None
_injected: dict[str, Any] = {}
_built: dict[type[Composition], Composition] = {}


def current(kind: type[_C]) -> _C:
    """This process's composition of ``kind``, built on first use from the injected
    settings (else ``os.environ``) and values.

    Raises:
        MissingSettingsError: a required variable is not set (the invocation fails
            before any work).
    """
    with _lock:
        built = _built.get(kind)
        if built is None:
            built = kind(_settings, **{n: v for n, v in _injected.items() if n in kind.names()})
            _built[kind] = built
    assert isinstance(built, kind)
    return built


def inject(settings: Settings | None = None, **values: Any) -> None:
    """Build every composition from now on with ``settings`` (None: ``os.environ`` at
    build time) and the dependencies ``values`` (e.g. ``clock``, ``batch``); forgets
    those built so far.

    Raises:
        KeyError: a name in ``values`` is a dependency of no composition.
    """
    known = frozenset().union(*(kind.names() for kind in COMPOSITIONS.values()))
    unknown = sorted(set(values) - known)
    if unknown:
        raise KeyError(f"no dependency named {unknown[0]!r}")
    global _settings
    with _lock:
        _settings = settings
        _injected.clear()
        _injected.update(values)
        _built.clear()


def provide(*, settings: Settings | None = None, **values: Any) -> None:
    """Add ``values`` to what :func:`inject` gave and, when given, replace its
    ``settings``; forgets the built compositions, so every function gets them.

    Raises:
        KeyError: a name in ``values`` is a dependency of no composition.
    """
    with _lock:
        base, merged = settings or _settings, {**_injected, **values}
    inject(base, **merged)


def injected_settings() -> Settings | None:
    """The settings :func:`inject` gave (None: each composition reads ``os.environ``)."""
    return _settings


def built() -> list[Composition]:
    """The compositions built so far (in build order), e.g. to refresh what they cache."""
    with _lock:
        return list(_built.values())


def cold_start() -> None:
    """Forget the built compositions (each function starts cold: new clients and
    caches) but keep what :func:`inject` gave."""
    with _lock:
        _built.clear()


def reset() -> None:
    """Forget every built composition and injected value."""
    global _settings
    with _lock:
        _settings = None
        _injected.clear()
        _built.clear()
