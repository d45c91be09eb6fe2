"""Use case: a change of the governance policy parameter becomes an audit record.

Anyone with ``ssm:PutParameter`` on the policy parameter can rewrite the rules (add
themselves to a team with a direct ``urgent`` level, say); IAM, not quotagov, decides
who may. quotagov cannot refuse such a write, so it detects it: every change is recorded
in the governed queue's audit chain with who made it, the change in governance terms
(:func:`~quotagov.governance.audit.policy_diff.policy_difference`, the same list as
``quotagov policy review``) and the risk findings
(:func:`~quotagov.governance.audit.findings.policy_change_findings`, the same rules),
and a change with a ``high`` finding is posted to the platform team's channel.

Two events announce a change (either may reach :meth:`PolicyParameterAudit.record`):

- the CloudTrail record of ``PutParameter``/``DeleteParameter`` (EventBridge
  ``AWS API Call via CloudTrail``, source ``aws.ssm``): it names the caller
  (``userIdentity``) and the new version (``responseElements.version``), not the value
  (https://docs.aws.amazon.com/systems-manager/latest/userguide/monitoring-cloudtrail-logs.html);
- EventBridge ``Parameter Store Change`` (``detail: {operation, name, type}``), which
  names neither: the newest version and its ``LastModifiedUser`` are used
  (https://docs.aws.amazon.com/systems-manager/latest/userguide/monitoring-systems-manager-event-examples.html#SSM-Parameter-Store-event-types).

The values of version V and V-1 are read from the parameter's history
(:class:`~quotagov.governance.ports.policy_history.PolicyHistory`). One record per
version: the dedup key is ``policy-parameter:<name>:<version>``, so the second event of
the same change is a duplicate.

Record shape (plus the chain fields, :mod:`quotagov.governance.audit.chain`)::

    {recordType: "PolicyParameter", kind: "CHANGE"|"ATTEMPT", time, recordedAt, eventId,
     actor: {principalArn, type, source: "cloudtrail"|"history", quotagov: false,
             historyUser: SSM's LastModifiedUser of the version, or null},
     action: "PutParameter"|"DeleteParameter"|<operation>, resource: {type:
     "ssm-parameter", name}, jobQueue, policyVersion, previousVersion,
     error: {code, message}|null, difference: [policy_difference changes],
     findings: [{code, severity, message}], lookupErrors: [str],
     loadedPolicyVersion: the version this function ran with (None: unknown)}
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from quotagov.batch_semantics import queue_name
from quotagov.clock import Clock
from quotagov.governance.audit.chain import ChainWriter
from quotagov.governance.audit.cloudtrail_calls import UserIdentity, iso_utc
from quotagov.governance.audit.errors import AuditEventError
from quotagov.governance.audit.findings import finding, invalid_policy, policy_change_findings
from quotagov.governance.audit.policy_diff import policy_difference
from quotagov.governance.ports import ChatError, ChatNotifier
from quotagov.governance.ports.policy_history import (
    PolicyHistory,
    PolicyHistoryError,
    PolicyVersion,
)
from quotagov.governance.slack.audit import risk_message
from quotagov.policy import Policy, PolicyError, load_policy

logger = logging.getLogger(__name__)

#: SSM calls that change a parameter's value or remove it.
AUDITED_PARAMETER_CALLS = ("PutParameter", "DeleteParameter")


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class ParameterApiCall(_Lenient):
    """The CloudTrail record of an SSM call on a parameter (``detail`` of the event)."""

    userIdentity: UserIdentity
    eventTime: datetime
    eventSource: Literal["ssm.amazonaws.com"]
    eventName: str = Field(min_length=1)
    requestParameters: dict[str, Any] | None = None
    responseElements: dict[str, Any] | None = None
    errorCode: str | None = None
    errorMessage: str | None = None
    eventID: str = Field(min_length=1)


class ParameterStoreChange(_Lenient):
    """``detail`` of an EventBridge ``Parameter Store Change`` event."""

    operation: str = Field(min_length=1)
    name: str = Field(min_length=1)


@dataclass(frozen=True)
class ParameterChange:
    """Either event, reduced to what the audit uses.

    Attributes:
        name: the parameter name (``/quotagov/policy``), an ARN reduced to its name.
        action: ``PutParameter``, ``DeleteParameter`` or the Parameter Store operation.
        event_id: the CloudTrail ``eventID``, or the EventBridge event id.
        time: when the change was made (epoch seconds).
        version: the new version (CloudTrail ``responseElements.version``), or None.
        principal: the caller's ARN (CloudTrail), or None (taken from the history).
        principal_type: ``userIdentity.type``, or None.
        error: ``(errorCode, errorMessage)`` of a refused call, or None.
    """

    name: str
    action: str
    event_id: str
    time: float
    version: int | None = None
    principal: str | None = None
    principal_type: str | None = None
    error: tuple[str, str] | None = None

    @classmethod
    def from_cloudtrail(cls, call: ParameterApiCall) -> ParameterChange:
        """From a CloudTrail record.

        Raises:
            AuditEventError: not an audited call, or no ``requestParameters.name``.
        """
        if call.eventName not in AUDITED_PARAMETER_CALLS:
            raise AuditEventError(f"detail.eventName: {call.eventName!r} is not audited")
        name = (call.requestParameters or {}).get("name")
        if not isinstance(name, str) or not name:
            raise AuditEventError("detail.requestParameters.name: missing")
        version = (call.responseElements or {}).get("version")
        return cls(
            name=parameter_name(name),
            action=call.eventName,
            event_id=call.eventID,
            time=call.eventTime.timestamp(),
            version=version if isinstance(version, int) and version > 0 else None,
            principal=call.userIdentity.principal,
            principal_type=call.userIdentity.type,
            error=(call.errorCode, call.errorMessage or "") if call.errorCode else None,
        )

    @classmethod
    def from_parameter_store(
        cls, change: ParameterStoreChange, event_id: str, time: float
    ) -> ParameterChange:
        """From a ``Parameter Store Change`` event (its ``id`` and ``time``)."""
        action = "DeleteParameter" if change.operation == "Delete" else change.operation
        return cls(name=parameter_name(change.name), action=action, event_id=event_id, time=time)


def parameter_name(name_or_arn: str) -> str:
    """``arn:aws:ssm:r:a:parameter/quotagov/policy`` -> ``/quotagov/policy``; a name is
    returned with a leading ``/`` when it has a path."""
    if name_or_arn.startswith("arn:") and ":parameter" in name_or_arn:
        return name_or_arn.split(":parameter", 1)[1]
    return name_or_arn


@dataclass(frozen=True)
class PolicyChangeResult:
    """Outcome of :meth:`PolicyParameterAudit.record`: the record, whether it is new,
    whether a high finding was posted."""

    record: dict[str, Any]
    created: bool
    alerted: bool = False


class PolicyParameterAudit:
    """Records changes of the policy parameter in the governed queue's chain.

    Args:
        parameter: the policy parameter's name (``POLICY_PARAMETER``).
        history: its versions (``GetParameterHistory``).
        writer: the chain writer (the one audit writer's).
        governed_queue: the deployment's governed queue (``JOB_QUEUE``): its chain
            records the change. Empty: the previous version's ``jobQueue`` when it is
            readable, else ``policy``'s.
        policy: the policy this function loaded, or None when it could not (the
            parameter holds an invalid policy: that change must still be recorded).
        clock: for ``recordedAt``.
        chat: where high findings are posted (None: not posted).
        platform_channel: the platform team's Slack channel id.
        policy_version: the SSM version of ``policy`` (``loadedPolicyVersion``).
    """

    def __init__(
        self,
        *,
        parameter: str,
        history: PolicyHistory,
        writer: ChainWriter,
        policy: Policy | None,
        clock: Clock,
        governed_queue: str = "",
        chat: ChatNotifier | None = None,
        platform_channel: str = "",
        policy_version: int | None = None,
    ) -> None:
        self._policy_version = policy_version
        self._parameter = parameter_name(parameter)
        self._history = history
        self._writer = writer
        self._governed = queue_name(governed_queue) if governed_queue else ""
        self._loaded_queue = queue_name(policy.jobQueue) if policy is not None else ""
        self._clock = clock
        self._chat = chat
        self._channel = platform_channel

    def record(self, change: ParameterChange) -> PolicyChangeResult:
        """Record ``change`` once (per parameter version); post a high finding.

        Raises:
            AuditEventError: the change is about another parameter, or no governed
                queue is known (``JOB_QUEUE`` unset and no readable policy).
            PolicyHistoryError: the history could not be read, or does not hold the
                version the event names (retry later).
            ChainContentionError: the chain head kept moving (retry later).
        """
        if change.name != self._parameter:
            raise AuditEventError(
                f"detail: parameter {change.name!r} is not the policy parameter {self._parameter!r}"
            )
        errors: list[str] = []
        after: PolicyVersion | None = None
        if change.error is None and change.action != "DeleteParameter":
            after = self._history.version(self._parameter, change.version)
            if after is None and change.version is not None:
                # A version the history does not hold (yet) is not recorded: the event
                # came before SSM shows the write, or it is forged (an event invoked
                # into the function naming a future version would otherwise take that
                # version's one record, and the real event would be its duplicate).
                # Retried, then parked in the rule's DLQ with its alarm.
                raise PolicyHistoryError(
                    f"detail.responseElements.version: version {change.version} of "
                    f"{self._parameter} is not in its history (yet): retried"
                )
            if after is None:
                errors.append(f"the newest version of {self._parameter} is not in its history")
        version = after.version if after else change.version
        before = (
            self._history.version(self._parameter, version - 1)
            if version is not None and version > 1
            else None
        )
        difference, findings, chain = self._governance(change, before, after, errors)
        principal = change.principal or (after.modified_by if after else None)
        body: dict[str, Any] = {
            "recordType": "PolicyParameter",
            "kind": "ATTEMPT" if change.error else "CHANGE",
            "time": iso_utc(change.time),
            "recordedAt": iso_utc(self._clock.now()),
            "eventId": change.event_id,
            "actor": {
                "principalArn": principal or "unknown",
                "type": change.principal_type,
                "source": "cloudtrail" if change.principal else "history",
                "quotagov": False,
                # SSM's own LastModifiedUser of the version, beside the event's claim
                "historyUser": after.modified_by if after else None,
            },
            "action": change.action,
            "resource": {"type": "ssm-parameter", "name": self._parameter},
            "jobQueue": chain,
            "policyVersion": version,
            "previousVersion": before.version if before else None,
            "error": (
                {"code": change.error[0], "message": change.error[1]} if change.error else None
            ),
            "difference": difference,
            "findings": findings,
            "lookupErrors": errors,
            "loadedPolicyVersion": self._policy_version,
        }
        dedup = (
            f"policy-parameter:{self._parameter}:{version}"
            if version is not None and not change.error
            else f"event:{change.event_id}"
        )
        appended = self._writer.append(chain, dedup, body)
        alerted = False
        if appended.created and any(f["severity"] == "high" for f in findings):
            alerted = self._alert(appended.record)
        return PolicyChangeResult(appended.record, appended.created, alerted)

    def _governance(
        self,
        change: ParameterChange,
        before: PolicyVersion | None,
        after: PolicyVersion | None,
        errors: list[str],
    ) -> tuple[list[dict[str, Any]], list[dict[str, str]], str]:
        """The difference and findings from version V-1 to V (empty for an attempt), and
        the chain: the governed queue of version V-1 when it is readable (a change that
        moves ``jobQueue`` is recorded where the queue it leaves keeps its history), else
        of the policy this function loaded."""
        old: Policy | None = None
        if before is not None and change.error is None:
            try:
                old = load_policy(before.text)
            except PolicyError as exc:
                errors.append(f"version {before.version} was invalid ({len(exc.faults)} faults)")
        chain = self._governed or (queue_name(old.jobQueue) if old else self._loaded_queue)
        if not chain:
            raise AuditEventError(
                "no governed queue to record the change in: JOB_QUEUE is not set and no "
                "readable policy names one"
            )
        if change.error is not None:
            return [], [], chain
        if change.action == "DeleteParameter":
            return (
                [],
                [
                    finding(
                        "POLICY_DELETED",
                        "high",
                        f"the policy parameter {self._parameter} was deleted; functions that "
                        "load the policy fail until it is put back",
                    )
                ],
                chain,
            )
        if after is None:
            return [], [], chain
        try:
            new = load_policy(after.text)
        except PolicyError as exc:
            return [], invalid_policy(exc.faults), chain
        if before is None:
            errors.append(f"no version before {after.version}: compared with nothing")
            return [], [], chain
        if old is None:
            return [], [], chain
        return policy_difference(old, new), policy_change_findings(old, new), chain

    def _alert(self, record: Mapping[str, Any]) -> bool:
        if self._chat is None or not self._channel:
            return False
        text, blocks = risk_message(record)
        try:
            self._chat.post(self._channel, text, blocks)
        except ChatError as exc:
            logger.error("policy change alert for record %s not posted: %s", record["seq"], exc)
            return False
        return True
