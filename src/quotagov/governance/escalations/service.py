"""The :class:`Escalations` facade: the one entry point the handlers use.

It holds the collaborators (:class:`~.context.EscalationDeps`) and delegates every
method to the module that owns the step: :mod:`.requesting` (with :mod:`.checks`),
:mod:`.decision`, :mod:`.housekeeping` and :mod:`.messages`.
"""

from __future__ import annotations

from collections.abc import Callable

from quotagov.clock import Clock
from quotagov.governance.escalations import (
    authority,
    decision,
    housekeeping,
    messages,
    requesting,
)
from quotagov.governance.escalations.checks import EscalationRequest
from quotagov.governance.escalations.context import EscalationDeps, new_escalation_id
from quotagov.governance.escalations.decision import DecisionResult
from quotagov.governance.model.escalation import Escalation
from quotagov.governance.notifications import OwnerNotifier
from quotagov.governance.ports import AuditSink, BatchPort, ChatNotifier
from quotagov.governance.ports.escalations import (
    EscalationRepository,
    GovernedJobs,
    ImpactPreviewer,
)
from quotagov.governance.ports.handoff import DecisionHandoff
from quotagov.governance.ports.messages import MessageMac
from quotagov.policy.models import Policy


class Escalations:
    """The escalation use case. All collaborators are ports; nothing here talks to AWS.

    Args:
        policy: the governance policy.
        jobs: quotagov's job records (e.g. :class:`~.job_lookup.JobRecordLookup`).
        batch: the Batch port (``DescribeServiceJob``, ``UpdateServiceJob``).
        repository: escalation storage.
        chat: Slack messages.
        audit: the audit log.
        clock: time source (epoch seconds).
        previewer: computes the impact preview.
        default_channel: ``APPROVAL_CHANNEL``, for shares without ``approvalChannel``.
        new_id: makes escalation ids (default ``esc-`` and 32 hex digits).
        notifier: tells the job's owner when its priority changed (None: nobody).
        handoff: the hand-off to the apply function, required to record a decision
            or a direct level (None: a function that only settles or expires them).

    Attributes:
        deps: the collaborators, as every step of the use case receives them.
    """

    def __init__(
        self,
        *,
        policy: Policy,
        jobs: GovernedJobs,
        batch: BatchPort,
        repository: EscalationRepository,
        chat: ChatNotifier,
        audit: AuditSink,
        clock: Clock,
        previewer: ImpactPreviewer,
        default_channel: str = "",
        new_id: Callable[[], str] = new_escalation_id,
        notifier: OwnerNotifier | None = None,
        handoff: DecisionHandoff | None = None,
        proofs: MessageMac | None = None,
        sender: Callable[[], str] | None = None,
    ) -> None:
        self.deps = EscalationDeps(
            policy=policy,
            jobs=jobs,
            batch=batch,
            repository=repository,
            chat=chat,
            audit=audit,
            clock=clock,
            previewer=previewer,
            default_channel=default_channel,
            new_id=new_id,
            notifier=notifier,
            handoff=handoff,
            proofs=proofs,
            **({"sender": sender} if sender is not None else {}),
        )

    @property
    def level_names(self) -> dict[int, str]:
        """``schedulingPriority`` -> priority level name."""
        return messages.level_names(self.deps.policy)

    def approvers_of(self, escalation: Escalation) -> frozenset[str]:
        """Slack user ids who may decide ``escalation``: share approvers plus team approvers."""
        return authority.approvers_of(self.deps.policy, escalation)

    def request(self, request: EscalationRequest) -> Escalation:
        """Check, then hand off (direct level) or store PENDING and ask in Slack.

        Returns:
            The stored escalation: APPROVED (direct, handed to the apply function) or
            PENDING with ``channel``/``ts``.

        Raises:
            EscalationPolicyRefusedError: a rule refuses it (see :mod:`.checks`), the
                team's budget is spent, or the job has an open escalation.
            (A caller outside the job's team gets the refusal of an unknown job.)
            EscalationUnavailableError: Batch or Slack could not be reached (nothing
                is left changed).

            Both are :class:`~.errors.EscalationRefusedError`.
        """
        return requesting.request_escalation(self.deps, request)

    def decide(
        self,
        escalation_id: str,
        *,
        approve: bool,
        user_id: str,
        shown_round: int | None = None,
    ) -> DecisionResult:
        """A Slack user's click on Approve (``approve=True``) or Deny, on a card showing
        the preview round ``shown_round`` (epoch ms; see :func:`.decision.record_decision`).

        Safe to call any number of times for the same click: only the call that moves
        PENDING to APPROVED/DENIED acts and hands it to the apply function; the others
        report ``already_decided``.

        Raises:
            MissingHandoffError: built without a hand-off (nothing is stored).
        """
        return decision.decide(
            self.deps, escalation_id, approve=approve, user_id=user_id, shown_round=shown_round
        )

    def record_decision(self, escalation_id: str, *, approve: bool, user_id: str) -> DecisionResult:
        """Only the verification/record step of :meth:`decide` (no Batch call, no
        message update); see :func:`~.decision.record_decision`."""
        return decision.record_decision(self.deps, escalation_id, approve=approve, user_id=user_id)

    def settle(self, escalation_id: str) -> Escalation | None:
        """The apply function's step: apply an APPROVED escalation in Batch, free a
        DENIED one's job, and show the outcome in Slack (:func:`~.decision.settle`).

        Returns:
            The escalation after, or None when there is no such escalation (nothing
            is done).
        """
        stored = self.deps.repository.get(escalation_id) if escalation_id else None
        return decision.settle(self.deps, stored) if stored is not None else None

    def update_message(self, escalation: Escalation) -> bool:
        """Show ``escalation``'s outcome in its Slack message (``chat.update``).

        Returns False (and logs) when there is no message or Slack refused; the
        decision itself is already stored, so this never undoes anything.
        """
        return messages.update_message(self.deps, escalation)

    def retry_card_updates(self) -> messages.CardRetries:
        """Show the current state in every card whose last ``chat.update`` failed;
        park those that failed :data:`~.context.MAX_CARD_UPDATE_ATTEMPTS` times
        (:func:`~.messages.retry_card_updates`)."""
        return messages.retry_card_updates(self.deps)

    def expire_due(self) -> list[Escalation]:
        """Move every PENDING request past its expiry to EXPIRED; returns those moved."""
        return housekeeping.expire_due(self.deps)

    def retry_failed(self) -> list[Escalation]:
        """Call ``UpdateServiceJob`` again for APPLY_FAILED requests with attempts left
        (up to :data:`~.context.MAX_APPLY_ATTEMPTS` in all), after releasing APPROVED
        requests whose claim is older than :data:`~.context.STALE_APPROVAL_SECONDS`.

        Returns:
            The requests this run retried, after their ``UpdateServiceJob`` outcome.
        """
        return housekeeping.retry_failed(self.deps)
