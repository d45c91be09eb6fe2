"""Use case: turn a CloudTrail-recorded Batch call into an audit record, and alert on risk.

``docs/design.md``, "Audit of policy changes". For each call in
:data:`~quotagov.governance.audit.events.AUDITED_CALLS`:

1. find the resource, and the job queue whose chain records it (quota shares and
   service jobs belong to their queue; job queues to themselves; scheduling policies
   and service environments to the governed queue);
2. a redelivered event (same ``eventID``) stops here: its record exists;
3. name the actor: the principal ARN, and for quotagov's own calls (a controller role
   or session) the decision behind it;
4. a failed call (``errorCode``) is an ``ATTEMPT`` record with no difference and no
   findings; a successful one is a ``CHANGE`` with the before/after configuration,
   their difference and the risk findings (:mod:`quotagov.governance.audit.findings`);
5. append it to the chain (exactly once per event id), remember the new configuration,
   refresh it from ``DescribeQuotaShare``, and post risky changes to the platform
   team's Slack channel. A Slack failure is logged; the record is already stored.

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
from dataclasses import dataclass
from typing import Any

from quotagov.batch_semantics import ACTIVE_STATUSES, HOLDING_STATUSES, queue_name
from quotagov.clock import Clock
from quotagov.governance.audit import findings as rules
from quotagov.governance.audit.chain import ChainWriter
from quotagov.governance.audit.diff import (
    apply_update,
    difference,
    quota_share_configuration,
    request_configuration,
)
from quotagov.governance.audit.errors import AuditEventError as AuditEventError
from quotagov.governance.audit.errors import ForeignCallError as ForeignCallError
from quotagov.governance.audit.events import (
    AUDITED_CALLS,
    CloudTrailApiCall,
    LambdaInvokeCall,
    iso_utc,
)
from quotagov.governance.audit.known import (
    CONFIG,
    DECISION,
    EVENT_TIME_RESOLUTION_MS,
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
#: How many last-known versions of a job :meth:`AuditTrail._recorded_call_before` reads
#: back looking for one a recorded CloudTrail call wrote (past that: unknown, a finding).
MAX_HISTORY_STEPS = 50

DECISION_WINDOW_BEFORE_MS = 15 * 60 * 1000
DECISION_WINDOW_AFTER_MS = 5 * 60 * 1000

#: A decision id quotagov writes into free-text request fields (``reason``, ``clientToken``).
DECISION_REFERENCE = re.compile(r"quotagov-decision[:=]\s*([A-Za-z0-9_.:#/-]+)")


@dataclass(frozen=True)
class RecordResult:
    """Outcome of :meth:`AuditTrail.record_call`.

    Attributes:
        record: the stored record (the first one, for a redelivered event).
        created: False when the event was already recorded.
        alerted: True when the risky change was posted to Slack.
    """

    record: dict[str, Any]
    created: bool
    alerted: bool = False


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
    ) -> None:
        self._policy_version = policy_version
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

    # -- step 4: configurations and findings -------------------------------------------

    def _policy_configuration(self, target: Target) -> dict[str, Any] | None:
        if target.chain != self.governed_queue:
            return None
        try:
            return quota_share_configuration(self._policy.share(target.name).batch_configuration())
        except KeyError:
            return None

    def _quota_share_change(
        self, call: CloudTrailApiCall, target: Target, errors: list[str]
    ) -> tuple[dict[str, Any] | None, str, dict[str, Any] | None, list[dict[str, str]]]:
        before = self._configs.before(target.key, call.event_ms)
        source = "last-known"
        if before is None:
            before = self._policy_configuration(target)
            source = "policy" if before is not None else "unknown"
        params = call.parameters
        share = target.name
        governed = target.chain == self.governed_queue  # the policy speaks of this queue only
        queue_ref = f"{target.key.split(':job-queue/')[0]}:job-queue/{target.chain}"
        findings: list[dict[str, str]] = []
        if call.eventName == "DeleteQuotaShare":
            usage = self._usage_reader.usage(
                queue_ref, share, ACTIVE_STATUSES, errors, since_ms=call.event_ms
            )
            findings += rules.deleted_with_jobs(share, usage)
            if governed:
                findings += rules.policy_drift(share, None, self._policy)
            return before, source, None, findings
        if call.eventName == "CreateQuotaShare":
            before, source = None, "none"
            after = quota_share_configuration(params)
        else:
            after = apply_update(before, params, quota_share=True)
        states: tuple[str, ...] = ()
        if after.get("state") == "DISABLED":
            states = ACTIVE_STATUSES
        elif "capacityLimits" in quota_share_configuration(params):
            states = HOLDING_STATUSES
        usage = (
            self._usage_reader.usage(queue_ref, share, states, errors, since_ms=call.event_ms)
            if states
            else rules.ShareUsage()
        )
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
        return before, source, after, findings

    def _other_change(
        self, call: CloudTrailApiCall, target: Target, controller: bool
    ) -> tuple[dict[str, Any] | None, str, dict[str, Any] | None, list[dict[str, str]]]:
        before = self._configs.before(target.key, call.event_ms)
        source = "last-known" if before is not None else "unknown"
        params = call.parameters
        findings: list[dict[str, str]] = []
        if call.eventName == "SubmitServiceJob":
            return self._submitted(call, target, controller)
        if call.eventName.startswith("Delete"):
            return before, source, None, findings
        if call.eventName.startswith("Create"):
            return None, "none", request_configuration(params), findings
        if call.eventName == "UpdateServiceJob" and not controller:
            # the "before" of a change made around quotagov is Batch's own history of the
            # job, never a decision record (a table item, so a claim)
            before = self._recorded_call_before(target, call.event_ms)
            source = "cloudtrail" if before is not None else "unknown"
        after = apply_update(before, params, quota_share=False)
        if call.eventName == "UpdateServiceJob" and not controller:
            old = (before or {}).get("schedulingPriority")
            new = params.get("schedulingPriority")
            findings += rules.priority_outside_quotagov(
                target.name,
                None if old is None else int(old),
                None if new is None else int(new),
            )
        if call.eventName == "TerminateServiceJob":
            after["terminated"] = True
        return before, source, after, findings

    def _recorded_call_before(self, target: Target, at_ms: int) -> dict[str, Any] | None:
        """The job's configuration after the last Batch call on it recorded from CloudTrail
        before ``at_ms`` (epoch ms), or None when there is none within
        :data:`MAX_HISTORY_STEPS` versions.

        Only a version written from a CloudTrail record counts, and only when the audit
        chain holds that record (found by its dedup key ``event:<eventID>``, the
        version's tag) with the same configuration as its ``after``: a version indexed
        from a decision record, or one written into the table by hand, is skipped. So a
        forged decision setting the job's last known priority cannot hide a later raise
        (``PRIORITY_RAISED_OUTSIDE_QUOTAGOV``); without a recorded call the previous
        priority is unknown, and any priority set is a finding.
        """
        second = at_ms - at_ms % EVENT_TIME_RESOLUTION_MS
        bound: int | None = second + EVENT_TIME_RESOLUTION_MS
        for _ in range(MAX_HISTORY_STEPS):
            if bound is None:
                return None
            version = self._versions.latest(CONFIG, target.key, before_ms=bound)
            if version is None:
                return None
            bound = version.at_ms
            record = self._chains.find(target.chain, f"event:{version.tag}")
            if (
                record is not None
                and record.get("recordType") == "CloudTrail"
                and record.get("eventId") == version.tag
                and record.get("after") == version.value
            ):
                return dict(version.value)
        return None

    def _submitted(
        self, call: CloudTrailApiCall, target: Target, controller: bool
    ) -> tuple[None, str, dict[str, Any], list[dict[str, str]]]:
        """A new service job: its scheduling fields as ``after``; a finding when someone
        other than quotagov submitted it to the governed queue."""
        params = call.parameters
        after = {
            k: params[k]
            for k in ("jobName", "serviceJobType", "quotaShareName", "schedulingPriority")
            if params.get(k) is not None
        }
        findings: list[dict[str, str]] = []
        if not controller and target.chain == self.governed_queue:
            priority = params.get("schedulingPriority")
            findings = rules.submitted_outside_quotagov(
                target.name,
                str(params["jobName"]) if isinstance(params.get("jobName"), str) else None,
                target.quota_share,
                None if priority is None else int(priority),
                self.governed_queue,
            )
        return None, "none", after, findings

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
        """Record ``call`` once in its queue's chain; post risky changes to Slack.

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
        dedup_key = f"event:{call.eventID}"
        existing = self._chains.find(target.chain, dedup_key)
        if existing is not None:
            return RecordResult(existing, created=False)
        actor = self.actor(call, target)
        errors: list[str] = []
        before: dict[str, Any] | None = None
        after: dict[str, Any] | None = None
        source = "unknown"
        findings: list[dict[str, str]] = []
        if not call.failed:
            if target.type == "quota-share":
                before, source, after, findings = self._quota_share_change(call, target, errors)
            else:
                before, source, after, findings = self._other_change(
                    call, target, bool(actor["quotagov"])
                )
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
        if not call.failed:
            self._remember(call, target, after)
        appended = self._writer.append(target.chain, dedup_key, body)
        alerted = False
        if appended.created and findings:
            alerted = self._alert(appended.record)
        return RecordResult(appended.record, appended.created, alerted)

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

    def _remember(
        self, call: CloudTrailApiCall, target: Target, after: Mapping[str, Any] | None
    ) -> None:
        self._configs.remember(
            target.key, call.event_ms, call.eventID, {} if after is None else after
        )
        if target.type == "quota-share" and after is not None:
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
