"""Use case: turn a CloudTrail-recorded Batch call into an audit record, and alert on risk.

``docs/design.md``, "Audit of policy changes". For each call in
:data:`~quotagov.governance.audit.cloudtrail_calls.AUDITED_CALLS`:

1. find the resource, and the job queue whose chain records it (quota shares and
   service jobs belong to their queue; job queues to themselves; scheduling policies
   and service environments to the governed queue);
2. a redelivered event (same ``eventID``) stops here: its record exists (or it is held);
3. a successful call joins its resource's ordered history (``CALL`` versions, by
   ``eventTime`` then ``eventID``); with a settling window (``settle_seconds``, the
   template's ``AUDIT_SETTLE_SECONDS``) a call that arrives within it is held
   (``STAGED``) with the share's use read now, and the held calls whose window has
   passed are written in ``(eventTime, eventID)`` order by :meth:`AuditTrail.release`
   (every call taken in, and the function's schedule); a call arriving after its
   window is written at once with a ``RECORDED_LATE`` finding. Why a window: the chain
   is append-only, so a change written before an earlier one arrives could never see
   it; holding every record for a few minutes (CloudTrail delivers most within that)
   makes any delivery order within the window give the same records, at the cost of
   that delay, and is simpler than rewriting or correcting records;
4. name the actor: the principal ARN, and for quotagov's own calls (a controller role
   or session) the decision behind it;
5. a failed call (``errorCode``) is an ``ATTEMPT`` record with no difference and no
   findings; a successful one is a ``CHANGE`` whose before is replayed from the
   ordered history (never from arrival order), with its after, their difference and
   the risk findings (:mod:`quotagov.governance.audit.findings`);
6. append it to the chain (exactly once per event id), refresh the share from
   ``DescribeQuotaShare``, and post risky changes to the platform team's Slack
   channel. A Slack failure is logged; the record is already stored.

Record shape (all records also carry ``chain``, ``seq``, ``dedupKey``, ``prevHash``,
``hash``, see :mod:`quotagov.governance.audit.chain`)::

    {recordType: "CloudTrail", kind: "CHANGE"|"ATTEMPT", time, recordedAt, eventId,
     requestId, actor: {principalArn, type, sessionIssuerArn, quotagov, decisionId,
     decisionAction}, action, resource: {type, name, arn, quotaShareName?},
     jobQueue, requestParameters, error: {code, message}|null, before, beforeSource,
     after, difference: [{path, before, after}], findings: [{code, severity, message}],
     lookupErrors: [str], loadedPolicyVersion: int|null}
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from quotagov.batch_semantics import ACTIVE_STATUSES, HOLDING_STATUSES, queue_name
from quotagov.clock import Clock
from quotagov.governance.audit import findings as rules
from quotagov.governance.audit.chain import ChainWriter
from quotagov.governance.audit.cloudtrail_calls import (
    AUDITED_CALLS,
    CloudTrailApiCall,
    LambdaInvokeCall,
    iso_utc,
)
from quotagov.governance.audit.diff import (
    configuration_after,
    difference,
    quota_share_configuration,
)
from quotagov.governance.audit.errors import AuditEventError as AuditEventError
from quotagov.governance.audit.errors import ForeignCallError as ForeignCallError
from quotagov.governance.audit.known import (
    CALL,
    DECISION,
    RELEASED,
    STAGED,
    LastKnownConfigurations,
)
from quotagov.governance.audit.targets import Target, TargetResolver
from quotagov.governance.audit.usage import ShareUsageReader
from quotagov.governance.ports import (
    BatchError,
    BatchPort,
    ChainStore,
    ChatError,
    ChatNotifier,
    VersionStore,
)
from quotagov.governance.slack.audit import risk_message
from quotagov.policy import Policy

logger = logging.getLogger(__name__)

#: How far around a controller call's ``eventTime`` a recorded decision about the same
#: job may lie to be named as the decision behind it (milliseconds).
DECISION_WINDOW_BEFORE_MS = 15 * 60 * 1000
DECISION_WINDOW_AFTER_MS = 5 * 60 * 1000

#: A decision id quotagov writes into free-text request fields (``reason``, ``clientToken``).
DECISION_REFERENCE = re.compile(r"quotagov-decision[:=]\s*([A-Za-z0-9_.:#/-]+)")

#: Key of the held CloudTrail calls and of the release watermark (one for all chains).
STAGE_KEY = "cloudtrail"

#: How far the functions' clocks are assumed to disagree (milliseconds): a call held
#: this close to the end of its window is checked against releases that may have
#: passed it (:meth:`AuditTrail.record_call`).
CLOCK_ALLOWANCE_MS = 1000


def _usage_item(usage: rules.ShareUsage) -> dict[str, Any]:
    """A :class:`ShareUsage` as a stored map (for a held call)."""
    return {
        "capacity": {unit: str(used) for unit, used in usage.capacity.items()},
        "holdingJobs": list(usage.holding_jobs),
        "activeJobs": list(usage.active_jobs),
        "stoppedJobs": list(usage.stopped_jobs),
    }


def _usage_from_item(item: Mapping[str, Any]) -> rules.ShareUsage:
    """The :class:`ShareUsage` :func:`_usage_item` stored."""
    return rules.ShareUsage(
        {str(unit): float(used) for unit, used in (item.get("capacity") or {}).items()},
        tuple(str(j) for j in item.get("holdingJobs") or []),
        tuple(str(j) for j in item.get("activeJobs") or []),
        stopped_jobs=tuple(str(j) for j in item.get("stoppedJobs") or []),
    )


@dataclass(frozen=True)
class _Pending:
    """A record body built for ``call``, before it is appended; ``refresh``: re-read
    the share's configuration once it is stored."""

    call: CloudTrailApiCall
    target: Target
    body: dict[str, Any]
    refresh: bool


@dataclass(frozen=True)
class RecordResult:
    """Outcome of :meth:`AuditTrail.record_call`.

    Attributes:
        record: the stored record (the first one, for a redelivered event); None
            while the call is held for its settling window.
        created: False when the event was already recorded (or is held).
        alerted: True when the risky change was posted to Slack.
        held_until: for a held call, when its window ends (ISO 8601 UTC; written by
            the first :meth:`AuditTrail.release` after that).
    """

    record: dict[str, Any] | None
    created: bool
    alerted: bool = False
    held_until: str | None = None


class AuditTrail:
    """Records CloudTrail-recorded Batch calls in the per-queue audit chain.

    Args:
        chains: the chain storage (also read to skip redelivered events).
        versions: last known configurations and decisions by subject.
        batch: the Batch port (``DescribeQuotaShare``, ``ListServiceJobs``,
            ``DescribeServiceJob``).
        policy: the governance policy (drift, classes per share, governed queue).
        clock: for ``recordedAt``.
        controller_principals: ARNs of quotagov's own roles (matched against the
            caller's ARN and its session issuer's ARN).
        chat: where risky changes are posted (None: not posted).
        platform_channel: the platform team's Slack channel id.
        writer: the chain writer (default: a :class:`ChainWriter` over ``chains``).
        policy_version: the SSM version of ``policy`` (None: unknown or a file), kept in
            each record as ``loadedPolicyVersion``: the policy its drift and class
            findings were judged against.
        settle_seconds: the settling window (seconds after a call's ``eventTime``)
            during which calls are held and then written in ``(eventTime, eventID)``
            order; 0 writes each call on arrival (its before/after still from the
            ordered history, but a later change that arrives before an earlier one
            does not see it).

    Raises:
        ValueError: ``settle_seconds`` is negative.
    """

    def __init__(
        self,
        *,
        chains: ChainStore,
        versions: VersionStore,
        batch: BatchPort,
        policy: Policy,
        clock: Clock,
        controller_principals: Iterable[str] = (),
        chat: ChatNotifier | None = None,
        platform_channel: str = "",
        writer: ChainWriter | None = None,
        policy_version: int | None = None,
        settle_seconds: float = 0,
    ) -> None:
        self._policy_version = policy_version
        if settle_seconds < 0:
            raise ValueError(f"settle_seconds: {settle_seconds} is negative")
        self._settle_ms = int(settle_seconds * 1000)
        self._chains = chains
        self._versions = versions
        self._configs = LastKnownConfigurations(versions, batch)
        self._batch = batch
        self._policy = policy
        self._clock = clock
        self._controller = frozenset(p for p in controller_principals if p)
        self._chat = chat
        self._channel = platform_channel
        self._writer = writer or ChainWriter(chains)
        self.governed_queue = queue_name(policy.jobQueue)
        arn_parts = policy.jobQueue.split(":")
        governed_arn = policy.jobQueue.startswith("arn:") and len(arn_parts) >= 6
        self._queue_region = arn_parts[3] if governed_arn else ""
        self._queue_account = arn_parts[4] if governed_arn else ""
        self._targets = TargetResolver(batch, self.governed_queue)
        self._usage_reader = ShareUsageReader(batch)

    # -- step 1: the resource and its chain -------------------------------------------

    def target(self, call: CloudTrailApiCall) -> Target:
        """The resource ``call`` is about, and its chain (:class:`TargetResolver`)."""
        return self._targets.target(call)

    # -- step 3: the actor -------------------------------------------------------------

    def is_controller(self, call: CloudTrailApiCall) -> bool:
        """True when quotagov's own role made the call."""
        identity = call.userIdentity
        return bool({identity.arn, identity.issuer_arn} & self._controller)

    def _decision_behind(self, call: CloudTrailApiCall, target: Target) -> dict[str, Any] | None:
        for value in call.parameters.values():
            if isinstance(value, str) and (match := DECISION_REFERENCE.search(value)):
                return {"decisionId": match.group(1)}
        for subject in (target.name, target.key):
            version = self._versions.latest(
                DECISION,
                subject,
                before_ms=call.event_ms + DECISION_WINDOW_AFTER_MS,
                since_ms=max(0, call.event_ms - DECISION_WINDOW_BEFORE_MS),
            )
            if version is not None:
                return {
                    "decisionId": version.value.get("decisionId"),
                    "decisionAction": version.value.get("action"),
                }
        return None

    def actor(self, call: CloudTrailApiCall, target: Target) -> dict[str, Any]:
        """The ``actor`` field: principal, and the quotagov decision for controller calls."""
        identity = call.userIdentity
        controller = self.is_controller(call)
        decision = self._decision_behind(call, target) if controller else None
        return {
            "principalArn": identity.principal,
            "type": identity.type,
            "sessionIssuerArn": identity.issuer_arn,
            "quotagov": controller,
            "decisionId": (decision or {}).get("decisionId"),
            "decisionAction": (decision or {}).get("decisionAction"),
        }

    # -- step 4: configurations (from the ordered history) and findings -----------------

    def _policy_configuration(self, target: Target) -> dict[str, Any] | None:
        if target.chain != self.governed_queue:
            return None
        try:
            return quota_share_configuration(self._policy.share(target.name).batch_configuration())
        except KeyError:
            return None

    def _history_before(
        self, call: CloudTrailApiCall, target: Target, *, calls_only: bool = False
    ) -> tuple[dict[str, Any] | None, str]:
        """The configuration just before ``call`` and where it came from.

        The base is the last known configuration before the call's second (a
        ``DescribeQuotaShare`` read, a controller decision; else the policy, for a
        governed quota share); on it the resource's ordered history (``CALL``
        versions by ``(eventTime, eventID)``) is replayed from the base's time up to,
        not including, ``call``. Delivery order plays no part.

        With ``calls_only`` the base is left out: only the calls CloudTrail recorded
        count (for a priority change made around quotagov, whose "before" must never
        come from a decision record, a table item and so a claim: a forged decision
        setting a job's last known priority cannot hide a later raise).

        Returns:
            ``(before, source)``; source ``last-known`` (a stored version or the
            history), ``cloudtrail`` (``calls_only``: the recorded calls), ``policy`` or
            ``unknown``.
        """
        base = None if calls_only else self._configs.before_version(target.key, call.event_ms)
        before: dict[str, Any] | None = None if base is None else dict(base.value)
        source = "last-known" if base is not None else "unknown"
        if base is None and target.type == "quota-share":
            before = self._policy_configuration(target)
            source = "policy" if before is not None else "unknown"
        history = self._versions.versions(
            CALL,
            target.key,
            since_ms=0 if base is None else base.at_ms,
            before_ms=call.event_ms + 1,
        )
        quota_share = target.type == "quota-share"
        for version in history:
            if (version.at_ms, version.tag) >= (call.event_ms, call.eventID):
                continue
            before = configuration_after(
                str(version.value["eventName"]),
                dict(version.value.get("parameters") or {}),
                before,
                quota_share=quota_share,
            )
            source = "cloudtrail" if calls_only else "last-known"
        return before, source

    def _usage_snapshot(
        self, call: CloudTrailApiCall, target: Target
    ) -> tuple[rules.ShareUsage | None, list[str]]:
        """What the share held at the call's ``eventTime``, read when the call arrives
        (``ListServiceJobs``; jobs the change already stopped are counted), for the
        calls whose findings need it: a quota share deleted, its capacity limits set,
        or its ``state`` set to ``DISABLED``. None for the others.

        Read at arrival, not when a held record is written, so that the holding
        window does not change the use a change is judged against.
        """
        params = call.parameters
        states: tuple[str, ...] = ()
        if call.eventName == "DeleteQuotaShare" or (
            call.eventName != "CreateQuotaShare" and params.get("state") == "DISABLED"
        ):
            states = ACTIVE_STATUSES
        elif "capacityLimits" in quota_share_configuration(params):
            states = HOLDING_STATUSES
        if call.failed or target.type != "quota-share" or not states:
            return None, []
        errors: list[str] = []
        queue_ref = f"{target.key.split(':job-queue/')[0]}:job-queue/{target.chain}"
        usage = self._usage_reader.usage(
            queue_ref, target.name, states, errors, since_ms=call.event_ms
        )
        return usage, errors

    def _quota_share_findings(
        self,
        call: CloudTrailApiCall,
        target: Target,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        usage: rules.ShareUsage,
    ) -> list[dict[str, str]]:
        share = target.name
        governed = target.chain == self.governed_queue  # the policy speaks of this queue only
        findings: list[dict[str, str]] = []
        if after is None:  # DeleteQuotaShare
            findings += rules.deleted_with_jobs(share, usage)
            if governed:
                findings += rules.policy_drift(share, None, self._policy)
            return findings
        if "capacityLimits" in quota_share_configuration(call.parameters):
            findings += rules.lowered_below_use(share, before, after, usage)
        findings += rules.away_from_reserve(share, before, after)
        findings += rules.borrow_raised(share, before, after)
        if governed:
            findings += rules.in_share_preemption_without_checkpoints(
                share, before, after, self._policy
            )
        findings += rules.disabled_with_jobs(share, before, after, usage)
        if governed:
            findings += rules.policy_drift(share, after, self._policy)
        return findings

    def _other_findings(
        self,
        call: CloudTrailApiCall,
        target: Target,
        before: dict[str, Any] | None,
        controller: bool,
    ) -> list[dict[str, str]]:
        params = call.parameters
        if call.eventName == "UpdateServiceJob" and not controller:
            old = (before or {}).get("schedulingPriority")
            new = params.get("schedulingPriority")
            return rules.priority_outside_quotagov(
                target.name,
                None if old is None else int(old),
                None if new is None else int(new),
            )
        if call.eventName == "SubmitServiceJob" and not controller:
            if target.chain != self.governed_queue:
                return []
            priority = params.get("schedulingPriority")
            return rules.submitted_outside_quotagov(
                target.name,
                str(params["jobName"]) if isinstance(params.get("jobName"), str) else None,
                target.quota_share,
                None if priority is None else int(priority),
                self.governed_queue,
            )
        return []

    def _check_origin(self, call: CloudTrailApiCall) -> None:
        """Refuse a call of another account or Region than the governed queue's.

        Raises:
            ForeignCallError: naming the call's and the queue's account and Region.
        """
        if not self._queue_region or not self._queue_account:
            return
        if call.account != self._queue_account or call.awsRegion != self._queue_region:
            raise ForeignCallError(
                f"detail: call {call.eventID} was made in account {call.account or '?'} "
                f"Region {call.awsRegion}, not the governed queue's ({self._queue_account} "
                f"{self._queue_region}): counted and dropped, not recorded in its chain"
            )

    # -- the whole use case --------------------------------------------------------------

    def record_call(self, call: CloudTrailApiCall) -> RecordResult:
        """Take ``call`` in: hold it for the settling window, or record it once in its
        queue's chain (posting risky changes to Slack).

        First the held calls whose window has passed are written (:meth:`release`),
        so a redelivery finds its record. A successful call joins its resource's
        ordered history at once. With a settling window (``settle_seconds`` > 0) a
        call that arrives within it is held (``RecordResult.held``); one that arrives
        later is recorded now, with a ``RECORDED_LATE`` finding on a change.

        Raises:
            AuditEventError: the call is not audited, lacks its resource parameter, or
                (a successful one) has request parameters of the wrong type.
            ForeignCallError: (an ``AuditEventError``) the call was made in another
                account or Region than the governed queue's; nothing is stored.
            BatchError: a Batch lookup needed to place the record failed (retry later).
            ChainContentionError: the chain head kept moving (retry later).
        """
        if call.eventName not in AUDITED_CALLS:
            raise AuditEventError(f"detail.eventName: {call.eventName!r} is not an audited call")
        self._check_origin(call)
        call.check_parameters()
        target = self.target(call)
        self.release()
        existing = self._chains.find(target.chain, f"event:{call.eventID}")
        if existing is not None:
            return RecordResult(existing, created=False)
        if not call.failed:
            self._versions.put(
                CALL,
                target.key,
                call.event_ms,
                call.eventID,
                {"eventName": call.eventName, "parameters": call.parameters},
            )
        usage, errors = self._usage_snapshot(call, target)
        delay_ms = int(self._clock.now() * 1000) - call.event_ms
        if self._settle_ms > 0 and delay_ms <= self._settle_ms:
            self._versions.put(
                STAGED,
                STAGE_KEY,
                call.event_ms,
                call.eventID,
                {
                    "call": call.model_dump_json(),  # text: the record exactly as delivered
                    "target": asdict(target),
                    "usage": None if usage is None else _usage_item(usage),
                    "lookupErrors": errors,
                },
            )
            release_at = (call.event_ms + self._settle_ms) / 1000
            held = RecordResult(None, created=False, held_until=iso_utc(release_at))
            return self._after_hold(call, target, held)
        late_s = delay_ms / 1000 if self._settle_ms > 0 else None
        [result] = self._append([self._record_body(call, target, usage, errors, late_s)])
        return result

    def _after_hold(
        self, call: CloudTrailApiCall, target: Target, held: RecordResult
    ) -> RecordResult:
        """``held``, unless a release may have passed ``call``'s time before its hold
        was stored: then the held calls through it are written now (so none is left).

        A release that did not see the hold read its clock before the hold was stored;
        its cut-off is then before ``call``'s time unless the window has (nearly) passed
        by now, the clock read after the put (:data:`CLOCK_ALLOWANCE_MS`).
        """
        now_ms = int(self._clock.now() * 1000)
        if now_ms - call.event_ms <= self._settle_ms - CLOCK_ALLOWANCE_MS:
            return held
        cutoff = max(now_ms - self._settle_ms, call.event_ms)
        for result in self._release(cutoff, floor_ms=call.event_ms):
            if result.record is not None and result.record.get("eventId") == call.eventID:
                return result
        existing = self._chains.find(target.chain, f"event:{call.eventID}")
        return held if existing is None else RecordResult(existing, created=False)

    def release(self) -> list[RecordResult]:
        """Write the held calls whose settling window has passed, in ``(eventTime,
        eventID)`` order, one sealed run per chain; a call already in its chain is
        left as it is (exactly once).

        Reads the ``RELEASED`` watermark (the cut-off of the last release that wrote
        its calls) and the held calls after it up to ``now - settle_seconds``: at most
        two small queries when nothing is due, and each held call is read by one release.
        A call held after a release passed its time is written by its own holder
        (:meth:`record_call`), so none is left behind the watermark.

        Returns:
            The records written now (``created`` True, in ``(eventTime, eventID)``
            order; empty without a window).

        Raises:
            BatchError, ChainContentionError: as :meth:`record_call` (retry later; the
                calls stay held, the watermark stays, and the next release writes them).
        """
        if self._settle_ms <= 0:
            return []
        return self._release(int(self._clock.now() * 1000) - self._settle_ms)

    def _release(self, cutoff: int, floor_ms: int | None = None) -> list[RecordResult]:
        """Write the held calls after the watermark (and from ``floor_ms``, when given
        and earlier) through ``cutoff`` (epoch ms); then move the watermark to it."""
        mark = self._versions.latest(RELEASED, STAGE_KEY)
        since = 0 if mark is None else mark.at_ms + 1
        if floor_ms is not None:
            since = min(since, floor_ms)
        if since > cutoff:
            return []
        held = self._versions.versions(STAGED, STAGE_KEY, since_ms=since, before_ms=cutoff + 1)
        if not held:
            return []
        bodies = []
        for version in held:
            usage = version.value.get("usage")
            bodies.append(
                self._record_body(
                    CloudTrailApiCall.model_validate_json(str(version.value["call"])),
                    Target(**version.value["target"]),
                    None if usage is None else _usage_from_item(usage),
                    [str(e) for e in version.value.get("lookupErrors") or []],
                    None,
                )
            )
        written = [result for result in self._append(bodies) if result.created]
        if mark is None or cutoff > mark.at_ms:
            self._versions.put(RELEASED, STAGE_KEY, cutoff, "release", {"cutoffMs": cutoff})
        return written

    def _record_body(
        self,
        call: CloudTrailApiCall,
        target: Target,
        usage: rules.ShareUsage | None,
        errors: list[str],
        late_s: float | None,
    ) -> _Pending:
        """``call``'s record body (before/after from the ordered history); ``late_s``:
        seconds past the call's ``eventTime`` when it arrived, for a call that came
        after its settling window."""
        actor = self.actor(call, target)
        before: dict[str, Any] | None = None
        after: dict[str, Any] | None = None
        source = "unknown"
        findings: list[dict[str, str]] = []
        if not call.failed:
            quota_share = target.type == "quota-share"
            around_quotagov = call.eventName == "UpdateServiceJob" and not actor["quotagov"]
            if call.eventName.startswith("Create") or call.eventName == "SubmitServiceJob":
                before, source = None, "none"  # a new resource: no history to read
            else:
                before, source = self._history_before(call, target, calls_only=around_quotagov)
            after = configuration_after(
                call.eventName, call.parameters, before, quota_share=quota_share
            )
            if quota_share:
                findings = self._quota_share_findings(
                    call, target, before, after, usage or rules.ShareUsage()
                )
            else:
                findings = self._other_findings(call, target, before, bool(actor["quotagov"]))
            if late_s is not None:
                findings += rules.recorded_late(late_s, self._settle_ms / 1000)
        body = {
            "recordType": "CloudTrail",
            "kind": "ATTEMPT" if call.failed else "CHANGE",
            "time": call.event_time_text,
            "recordedAt": iso_utc(self._clock.now()),
            "eventId": call.eventID,
            "requestId": call.requestID,
            "actor": actor,
            "action": call.eventName,
            "resource": target.as_record(),
            "jobQueue": target.chain,
            "requestParameters": call.parameters,
            "error": (
                {"code": call.errorCode, "message": call.errorMessage} if call.failed else None
            ),
            "before": before,
            "beforeSource": source if not call.failed else None,
            "after": after,
            "difference": [] if call.failed else difference(before, after),
            "findings": findings,
            "lookupErrors": errors,
            "loadedPolicyVersion": self._policy_version,
        }
        refresh = not call.failed and target.type == "quota-share" and after is not None
        return _Pending(call, target, body, refresh)

    def _append(self, pending: list[_Pending]) -> list[RecordResult]:
        """Append ``pending`` (in order) once each: one run per chain (one seal per run,
        :meth:`ChainWriter.append_run`); then refresh the changed shares and post the
        risky new records. Results in the order of ``pending``."""
        by_chain: dict[str, list[int]] = {}
        for index, item in enumerate(pending):
            by_chain.setdefault(item.target.chain, []).append(index)
        appended: dict[int, Any] = {}
        for chain, indexes in by_chain.items():
            entries = [(f"event:{pending[i].call.eventID}", pending[i].body) for i in indexes]
            appended.update(zip(indexes, self._writer.append_run(chain, entries), strict=True))
        results = []
        for index, item in enumerate(pending):
            stored = appended[index]
            if stored.created and item.refresh:
                self._refresh(item.call, item.target)
            alerted = (
                self._alert(stored.record) if stored.created and item.body["findings"] else False
            )
            results.append(RecordResult(stored.record, stored.created, alerted))
        return results

    def record_invocation(self, call: LambdaInvokeCall) -> RecordResult | None:
        """Record a direct invocation of one of the stack's functions, with the finding
        ``DIRECT_INVOCATION``, in the governed queue's chain; post it to Slack.

        The rule delivering these events matches the stack's functions only. An
        invocation by an AWS service (the function's trigger) is not recorded: returns
        None. A redelivered event is found by its ``eventID`` (``created`` False).

        Raises:
            AuditEventError: the event names no function.
            ForeignCallError: the call was made in another account or Region.
            ChainContentionError: the chain head kept moving (retry later).
        """
        if not call.function_arn:
            raise AuditEventError("detail.requestParameters.functionName: missing")
        self._check_origin(call)
        if call.by_trigger:
            return None
        chain = self.governed_queue
        dedup_key = f"event:{call.eventID}"
        existing = self._chains.find(chain, dedup_key)
        if existing is not None:
            return RecordResult(existing, created=False)
        identity = call.userIdentity
        findings = rules.direct_invocation(call.function_name, identity.principal)
        body = {
            "recordType": "CloudTrail",
            "kind": "ATTEMPT" if call.failed else "CHANGE",
            "time": call.event_time_text,
            "recordedAt": iso_utc(self._clock.now()),
            "eventId": call.eventID,
            "requestId": call.requestID,
            "actor": {
                "principalArn": identity.principal,
                "type": identity.type,
                "sessionIssuerArn": identity.issuer_arn,
                "quotagov": self.is_controller(call),
                "decisionId": None,
                "decisionAction": None,
            },
            "action": call.eventName,
            "resource": {"type": "function", "name": call.function_name, "arn": call.function_arn},
            "jobQueue": chain,
            "requestParameters": call.parameters,
            "error": (
                {"code": call.errorCode, "message": call.errorMessage} if call.failed else None
            ),
            "before": None,
            "beforeSource": None,
            "after": None,
            "difference": [],
            "findings": findings,
            "lookupErrors": [],
        }
        appended = self._writer.append(chain, dedup_key, body)
        alerted = self._alert(appended.record) if appended.created else False
        return RecordResult(appended.record, appended.created, alerted)

    def _refresh(self, call: CloudTrailApiCall, target: Target) -> None:
        """Remember the share's live configuration (``DescribeQuotaShare``) as of now."""
        try:
            self._configs.refresh_quota_share(
                target.key, int(self._clock.now() * 1000), after_call_ms=call.event_ms
            )
        except BatchError as exc:
            logger.warning("DescribeQuotaShare %s failed: %s", target.key, exc)

    # -- Slack -------------------------------------------------------------------------

    def _alert(self, record: Mapping[str, Any]) -> bool:
        if self._chat is None or not self._channel:
            return False
        text, blocks = risk_message(record)
        try:
            self._chat.post(self._channel, text, blocks)
        except ChatError as exc:
            logger.error("risk alert for record %s not posted: %s", record.get("seq"), exc)
            return False
        except Exception:  # the record is stored; a chat adapter bug must not undo that
            logger.exception("risk alert for record %s not posted", record.get("seq"))
            return False
        return True
