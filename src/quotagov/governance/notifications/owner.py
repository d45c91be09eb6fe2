"""The owner notifier: tell a job's owner what happened, once per event.

Rules (owner notifications, ``docs/design.md``, "People and operators are told"):

* the recipient is the owner's Slack user id from the policy
  (:func:`quotagov.governance.owners.owner_slack_id`); a message to a user id lands in
  the app's direct message with them (Slack, "chat.postMessage",
  https://api.slack.com/methods/chat.postMessage);
* one message per event: the event is claimed in the notification log with a
  conditional write before anything is posted, so a redelivered event posts nothing;
* a team with ``notifications.enabled: false`` gets no message (the entry is logged
  ``opted-out``);
* a job preempted again within ``notifications.digestWindowSeconds`` of the first
  preemption its owner was told about gets that first message updated in place into a
  digest (count, one line per preemption, total lost work) instead of a new message;
* a failed post never fails the use case that noticed the event: it is logged
  (``delivery: failed`` with Slack's error) and retried by :meth:`OwnerNotifier.retry_failed`
  (``ApplyDecisionsFunction``'s 5-minute schedule) until it is delivered or, after
  :data:`MAX_DELIVERY_ATTEMPTS` tries, ``parked`` (metric ``OwnerNoticesParked``,
  alarmed). An unreadable log loses the message, never the event (logged at ERROR).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from quotagov.clock import Clock
from quotagov.governance.model.job import JobRecord
from quotagov.governance.notifications.owner_messages import OwnerEvent, digest_text
from quotagov.governance.owners import owner_slack_id
from quotagov.governance.ports import ChatError, ChatNotifier, PostedMessage
from quotagov.governance.ports.notifications import (
    DigestConflictError,
    DigestState,
    NotificationEntry,
    NotificationKind,
    NotificationLog,
)
from quotagov.governance.slack.notifications import owner_blocks
from quotagov.policy.models import OwnerNotifications, Policy

logger = logging.getLogger(__name__)

#: Attempts at the read-update-write of a digest before posting a new message instead.
DIGEST_ATTEMPTS = 3

#: Slack posts of one owner DM before it is parked: the first and 11 retries, one per
#: 5-minute schedule tick (about an hour), as for escalation cards.
MAX_DELIVERY_ATTEMPTS = 12


@dataclass
class OwnerNotifier:
    """Direct messages to job owners.

    Attributes:
        log: the notification log (claims, outcomes, digests).
        chat: Slack; None = nothing is posted (entries are logged ``no-recipient``).
        policy: the governance policy (owners' Slack ids, teams' settings).
        clock: epoch seconds.
        job_view_url: the job view's URL with ``{jobId}`` in it, e.g.
            ``https://portal.example.com/jobs/{jobId}``; empty = the message names the
            API route ``GET /jobs/<id>`` instead.
        load_job: reads a job record by submission id (for :meth:`notify_by_id`).
    """

    log: NotificationLog
    chat: ChatNotifier | None
    policy: Policy
    clock: Clock
    job_view_url: str = ""
    load_job: Callable[[str], JobRecord | None] | None = None

    def link(self, submission_id: str) -> str:
        """Where the owner sees the job: the configured URL, else the API route."""
        if self.job_view_url:
            return self.job_view_url.replace("{jobId}", submission_id)
        return f"GET /jobs/{submission_id}"

    def notify(self, job: JobRecord, event: OwnerEvent) -> NotificationEntry | None:
        """Tell ``job``'s owner about ``event`` unless it was told already.

        Returns:
            The logged entry after delivery, or None when the event had been claimed
            before (a redelivery) or the log could not be used (logged).
        """
        settings = self._settings(job.team)
        entry = NotificationEntry(
            submission_id=job.pk,
            event_key=event.event_key,
            kind=str(event.kind),
            job_name=job.jobName,
            team=job.team,
            recipient=owner_slack_id(job, self.policy) or "",
            text=event.text,
            at=event.at,
            details=dict(event.details),
        )
        try:
            if not self.log.claim(entry):
                return None
        except Exception:  # the log is unavailable: the event itself must not fail
            logger.exception("could not claim notification %s of %s", event.event_key, job.pk)
            return None
        try:
            done = self._deliver(job, event, entry, settings)
        except Exception as error:  # e.g. the digest could not be read: keep the event
            logger.exception("could not deliver notification %s of %s", event.event_key, job.pk)
            done = replace(entry, delivery="failed", error=type(error).__name__)
        try:
            self.log.complete(done)
        except Exception:
            logger.exception("could not record notification %s of %s", event.event_key, job.pk)
        return done

    def retry_failed(self) -> list[NotificationEntry]:
        """Post again every DM whose delivery failed (:meth:`NotificationLog.undelivered`).

        Each entry is claimed first (:meth:`NotificationLog.claim_retry`, a conditional
        write), so two concurrent runs post it once. The retry posts the logged text as
        a new DM (a failed digest update is sent as a message of its own). An entry
        that has had :data:`MAX_DELIVERY_ATTEMPTS` tries is ``parked`` instead and
        logged at ERROR; the caller counts it (metric ``OwnerNoticesParked``).

        Returns:
            The entries handled, each as completed: ``posted``, ``failed`` (tried again
            on the next run) or ``parked``.

        Raises:
            Exception: the log could not be read (the next run tries again).
        """
        done: list[NotificationEntry] = []
        for entry in self.log.undelivered():
            claimed = self.log.claim_retry(entry, now=self.clock.now())
            if claimed is None:
                continue
            if claimed.attempts > MAX_DELIVERY_ATTEMPTS:
                outcome = replace(claimed, delivery="parked", attempts=entry.attempts)
                logger.error(
                    "owner DM %s of %s parked after %d tries: %s",
                    entry.event_key,
                    entry.submission_id,
                    entry.attempts,
                    entry.error,
                )
            else:
                outcome = self._post_again(claimed)
            self.log.complete(outcome)
            done.append(outcome)
        return done

    def _post_again(self, entry: NotificationEntry) -> NotificationEntry:
        """One more Slack post of a logged entry: ``posted`` or ``failed``."""
        if self.chat is None or not entry.recipient:
            return replace(entry, delivery="no-recipient")
        blocks = owner_blocks(
            entry.text,
            job_name=entry.job_name,
            submission_id=entry.submission_id,
            link=self.link(entry.submission_id),
        )
        try:
            posted = self.chat.post(entry.recipient, entry.text, blocks)
        except ChatError as error:
            logger.warning(
                "retry %d of the DM to the owner of %s failed: %s",
                entry.attempts,
                entry.submission_id,
                error.error,
            )
            return replace(entry, delivery="failed", error=error.error)
        return replace(entry, delivery="posted", channel=posted.channel, ts=posted.ts, error=None)

    def notify_by_id(
        self, submission_id: str, build: Callable[[JobRecord], OwnerEvent]
    ) -> NotificationEntry | None:
        """:meth:`notify` for a job known by id (read with :attr:`load_job`); None when
        the record cannot be read (logged) or no loader is configured."""
        if self.load_job is None:
            return None
        try:
            job = self.load_job(submission_id)
        except Exception:
            logger.exception("could not read job %s to notify its owner", submission_id)
            return None
        if job is None:
            return None
        return self.notify(job, build(job))

    def _settings(self, team: str) -> OwnerNotifications:
        found = self.policy.teams.get(team)
        return found.notifications if found is not None else OwnerNotifications()

    def _deliver(
        self,
        job: JobRecord,
        event: OwnerEvent,
        entry: NotificationEntry,
        settings: OwnerNotifications,
    ) -> NotificationEntry:
        if not settings.enabled:
            return replace(entry, delivery="opted-out")
        if self.chat is None or not entry.recipient:
            return replace(entry, delivery="no-recipient")
        if event.kind is NotificationKind.PREEMPTED:
            folded = self._fold_into_digest(job, event, entry, settings)
            if folded is not None:
                return folded
        blocks = owner_blocks(
            entry.text, job_name=job.jobName, submission_id=job.pk, link=self.link(job.pk)
        )
        try:
            posted = self.chat.post(entry.recipient, entry.text, blocks)
        except ChatError as error:
            logger.warning("could not tell the owner of %s: %s", job.pk, error.error)
            return replace(entry, delivery="failed", error=error.error)
        if event.kind is NotificationKind.PREEMPTED:
            self._start_digest(job.pk, posted, event)
        return replace(entry, delivery="posted", channel=posted.channel, ts=posted.ts)

    def _start_digest(self, submission_id: str, posted: PostedMessage, event: OwnerEvent) -> None:
        state = self.log.digest(submission_id)
        fresh = DigestState(
            submission_id=submission_id,
            channel=posted.channel,
            ts=posted.ts,
            first_at=event.at,
            lines=(event.digest_line,),
            version=(state.version if state else 0),
        )
        try:
            self.log.save_digest_if_version(
                fresh, expected_version=state.version if state else None
            )
        except DigestConflictError:
            logger.info("digest of %s changed meanwhile; kept the other writer's", submission_id)

    def _fold_into_digest(
        self,
        job: JobRecord,
        event: OwnerEvent,
        entry: NotificationEntry,
        settings: OwnerNotifications,
    ) -> NotificationEntry | None:
        """Update the job's digest message when it is recent enough; None = post anew."""
        assert self.chat is not None
        for _ in range(DIGEST_ATTEMPTS):
            state = self.log.digest(job.pk)
            if state is None or event.at - state.first_at > settings.digestWindowSeconds:
                return None
            lines = (*state.lines, event.digest_line)
            lost = sum(
                float(e.details.get("lostWorkSeconds") or 0)
                for e in self.log.entries(job.pk)
                if e.kind == NotificationKind.PREEMPTED.value
                and e.delivery in ("posted", "digest")
                and e.at >= state.first_at
            ) + float(event.details.get("lostWorkSeconds") or 0)
            text = digest_text(job.jobName, lines, lost, event.at - state.first_at)
            try:
                self.log.save_digest_if_version(
                    replace(state, lines=lines, version=state.version + 1),
                    expected_version=state.version,
                )
            except DigestConflictError:
                continue
            message = PostedMessage(channel=state.channel, ts=state.ts)
            blocks = owner_blocks(
                text, job_name=job.jobName, submission_id=job.pk, link=self.link(job.pk)
            )
            try:
                self.chat.update(message, text, blocks)
            except ChatError as error:
                logger.warning("could not update the digest of %s: %s", job.pk, error.error)
                return replace(entry, text=text, delivery="failed", error=error.error)
            return replace(entry, text=text, delivery="digest", channel=state.channel, ts=state.ts)
        return None
