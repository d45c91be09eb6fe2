"""The invariants a run of the local runtime must keep, whatever faults it met.

:func:`check_invariants` reads the stack's state the way an operator would (DynamoDB
tables, the simulated Batch, the fake Slack, the audit chains, the queues, the
invocations the runtime recorded) and returns one :class:`Invariant` per rule:

1. ``submissions``: every submission record is either SUBMITTED with exactly one Batch
   service job tagged with its id, or REFUSED/FAILED with its reasons and its owner told
   (a notification naming the submission), or still QUEUED with its message in flight;
   no Batch job carries a submission id twice.
2. ``escalations``: every escalation is in a final state (APPLIED, SUPERSEDED, DENIED,
   EXPIRED), or APPLY_FAILED with no attempts left, and its Slack card shows that state
   (no buttons; the status named in the fallback text).
3. ``audit``: every audit record present once (no two records share a dedup id), every
   chain and seal intact (``quotagov audit verify``), and, when a fault-free run's
   findings are given, the same findings.
4. ``answers``: no API answer 5xx but the documented 503s, no Lambda error on an API route.
5. ``dead letters``: nothing left in a dead-letter queue that no alarm watches.
6. ``dispositions``: every job's disposition (retry exhaustion, thrash guard) is in a
   final state (:data:`~quotagov.governance.dispositions.record.FINAL_STATUSES`: applied,
   abandoned, not needed): none left ``applying`` or waiting for a termination. The one
   exception is a ``pending-owner`` disposition whose question reached its owner (its
   Slack ``message`` is recorded): it waits for a person, not for quotagov.
7. ``owner DMs``: every owner DM the fault-free run delivered (``posted`` or folded into
   a ``digest``; counted by job name and kind) was delivered in this run too; none is
   left ``failed`` or ``retrying`` (a ``parked`` one breaks it as well: it was alarmed,
   but the owner was not told).

Rules 3 and 7 compare with a fault-free run's :class:`Baseline` when one is given.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from quotagov.governance.dispositions.record import FINAL_STATUSES as DISPOSITION_FINAL
from quotagov.governance.dispositions.record import DispositionStatus
from quotagov.governance.escalations.context import MAX_APPLY_ATTEMPTS
from quotagov.governance.model.escalation import FINAL_STATUSES, EscalationStatus
from quotagov.governance.submission.to_batch import SUBMISSION_TAG
from quotagov_tools.local.runtime import LocalRuntime


@dataclass(frozen=True)
class Invariant:
    """One rule's verdict: ``name``, whether it ``holds`` and what was seen (``detail``:
    the first violation when it does not hold)."""

    name: str
    holds: bool
    detail: str


@dataclass(frozen=True)
class Baseline:
    """What a fault-free run of the same walkthrough left: its audit ``findings``
    (:func:`findings_of`) and its delivered owner DMs (:func:`delivered_dms`)."""

    findings: list[str]
    owner_dms: list[str]


#: Deliveries that reached the owner (a new DM, or an update of the digest DM).
DELIVERED = ("posted", "digest")


def delivered_dms(notifications: Iterable[dict[str, Any]]) -> list[str]:
    """The delivered owner DMs as sorted ``<job name> <kind>`` lines (one per DM; ids
    and times differ between runs, names and kinds do not)."""
    return sorted(
        f"{n.get('jobName')} {n.get('kind')}"
        for n in notifications
        if n.get("delivery") in DELIVERED
    )


def baseline_of(runtime: LocalRuntime) -> Baseline:
    """The :class:`Baseline` of a finished run."""
    return Baseline(findings_of(runtime.audit_records()), delivered_dms(runtime.notifications()))


def _scan(client: Any, table: str) -> list[dict[str, Any]]:
    from boto3.dynamodb.types import TypeDeserializer

    deserializer = TypeDeserializer()
    items: list[dict[str, Any]] = []
    for page in client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        items += [{k: deserializer.deserialize(v) for k, v in i.items()} for i in page["Items"]]
    return items


def _batch_jobs(runtime: LocalRuntime) -> list[dict[str, Any]]:
    """Every service job of the governed queue, with its tags (every status)."""
    jobs: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        request: dict[str, Any] = {
            "jobQueue": runtime.job_queue,
            "filters": [{"name": "JOB_NAME", "values": ["*"]}],
            "maxResults": 100,
        }
        if token:
            request["nextToken"] = token
        page = runtime.batch.list_service_jobs(**request)
        for summary in page.get("jobSummaryList", []):
            jobs.append(runtime.batch.describe_service_job(jobId=summary["jobId"]))
        token = page.get("nextToken")
        if not token:
            return jobs


def submissions(runtime: LocalRuntime, dynamodb: Any) -> Invariant:
    """Rule 1 (see the module docstring)."""
    table = runtime.environments["SubmitWorkerFunction"]["JOBS_TABLE"]
    records = [i for i in _scan(dynamodb, table) if "state" in i and "team" in i]
    by_submission = Counter(
        str((job.get("tags") or {}).get(SUBMISSION_TAG)) for job in _batch_jobs(runtime)
    )
    told = {str(n.get("submissionId")) for n in runtime.notifications()}
    for record in records:
        pk, state = str(record["pk"]), str(record["state"])
        count = by_submission.get(pk, 0)
        if state == "SUBMITTED" and count != 1:
            return Invariant("submissions", False, f"{pk}: SUBMITTED with {count} Batch jobs")
        if state in ("REFUSED", "FAILED"):
            if count:
                return Invariant("submissions", False, f"{pk}: {state} but {count} Batch jobs")
            if not record.get("reasons"):
                return Invariant("submissions", False, f"{pk}: {state} without reasons")
            if state == "FAILED" and pk not in told:
                return Invariant("submissions", False, f"{pk}: FAILED, owner not told")
    doubled = [pk for pk, n in by_submission.items() if n > 1]
    if doubled:
        return Invariant(
            "submissions", False, f"{doubled[0]}: submitted {by_submission[doubled[0]]} times"
        )
    states = Counter(str(r["state"]) for r in records)
    return Invariant(
        "submissions", True, f"{len(records)} records ({dict(sorted(states.items()))}), each once"
    )


def escalations(runtime: LocalRuntime, dynamodb: Any) -> Invariant:
    """Rule 2 (see the module docstring)."""
    table = runtime.environments["EscalationsApiFunction"]["ESCALATIONS_TABLE"]
    items = [i for i in _scan(dynamodb, table) if str(i.get("pk", "")).startswith("esc-")]
    for item in items:
        status = EscalationStatus(str(item["status"]))
        settled = status in FINAL_STATUSES or (
            status is EscalationStatus.APPLY_FAILED
            and int(item.get("applyAttempts") or 0) >= MAX_APPLY_ATTEMPTS
        )
        if not settled:
            return Invariant("escalations", False, f"{item['pk']}: still {status.value}")
        if item.get("channel") and item.get("ts"):
            card = runtime.slack.message(str(item["channel"]), str(item["ts"]))
            buttons = [b for b in card.blocks if b.get("type") == "actions"]
            if buttons or status.value not in card.text:
                return Invariant(
                    "escalations",
                    False,
                    f"{item['pk']}: {status.value} but its card reads "
                    f"{card.text!r}" + (" with buttons" if buttons else ""),
                )
    statuses = Counter(str(i["status"]) for i in items)
    return Invariant(
        "escalations", True, f"{len(items)} final ({dict(sorted(statuses.items()))}), cards agree"
    )


def findings_of(records: Iterable[dict[str, Any]]) -> list[str]:
    """The audit's findings as sorted ``code: message`` lines."""
    found: list[str] = []
    for record in records:
        for item in record.get("findings") or []:
            found.append(f"{item.get('code')}: {item.get('message')}")
    return sorted(found)


def audit(runtime: LocalRuntime, baseline: list[str] | None) -> Invariant:
    """Rule 3 (see the module docstring)."""
    records = runtime.audit_records()
    ids = Counter(f"{r.get('chain')}/{r.get('dedupKey')}" for r in records)
    twice = [key for key, n in ids.items() if n > 1 and key != "None"]
    if twice:
        return Invariant("audit", False, f"record {twice[0]} present {ids[twice[0]]} times")
    if not runtime.audit_verify():
        broken = [r for r in runtime.audit_reports() if not r.intact]
        return Invariant("audit", False, f"chain not intact: {broken[0] if broken else '?'}")
    found = findings_of(records)
    if baseline is not None and found != baseline:
        extra = sorted(set(found) - set(baseline)) or sorted(set(baseline) - set(found))
        return Invariant("audit", False, f"findings differ from the fault-free run: {extra[:1]}")
    same = ", the same findings as the fault-free run" if baseline is not None else ""
    return Invariant(
        "audit", True, f"{len(records)} records once each, chains and seals intact{same}"
    )


def answers(runtime: LocalRuntime) -> Invariant:
    """Rule 4 (see the module docstring)."""
    unavailable = 0
    for invocation in runtime.invocations:
        if not invocation.trigger.startswith("api "):
            continue
        if invocation.error:
            return Invariant(
                "answers", False, f"{invocation.trigger}: Lambda error {invocation.error}"
            )
        status = int((invocation.result or {}).get("statusCode") or 0)
        if status == 503:
            unavailable += 1
        elif status >= 500:
            return Invariant("answers", False, f"{invocation.trigger}: answered {status}")
    return Invariant("answers", True, f"no 5xx but {unavailable} documented 503s")


def dead_letters(runtime: LocalRuntime) -> Invariant:
    """Rule 5 (see the module docstring)."""
    alarmed: set[str] = set()
    for alarm in runtime.stack.of_type("AWS::CloudWatch::Alarm").values():
        for dimension in (alarm.get("Properties") or {}).get("Dimensions") or []:
            value = dimension.get("Value")
            if isinstance(value, dict):
                attr = value.get("Fn::GetAtt")
                if isinstance(attr, str):
                    attr = attr.split(".")
                logical = value.get("Ref") or (attr[0] if isinstance(attr, list) else None)
                if logical:
                    alarmed.add(str(logical))
    parked = 0
    for logical_id in runtime.stack.of_type("AWS::SQS::Queue"):
        if not any(word in logical_id for word in ("DeadLetter", "DLQ", "FailedEvents")):
            continue
        url = str(runtime.stack.ref(logical_id))
        attributes = runtime.sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        count = int(attributes.get("ApproximateNumberOfMessages") or 0)
        parked += count
        if count and logical_id not in alarmed:
            return Invariant(
                "dead letters", False, f"{logical_id}: {count} messages and no alarm watches it"
            )
    return Invariant("dead letters", True, f"{parked} parked, every such queue alarmed")


def dispositions(runtime: LocalRuntime, dynamodb: Any) -> Invariant:
    """Rule 6 (see the module docstring)."""
    table = runtime.environments["SubmitWorkerFunction"]["JOBS_TABLE"]
    items = [i for i in _scan(dynamodb, table) if isinstance(i.get("disposition"), dict)]
    for item in items:
        disposition = item["disposition"]
        status = DispositionStatus(str(disposition.get("status")))
        asked = status is DispositionStatus.PENDING_OWNER and disposition.get("message")
        if status not in DISPOSITION_FINAL and not asked:
            return Invariant(
                "dispositions",
                False,
                f"{item['pk']} ({item.get('jobName')}): still {status.value} "
                f"(choice {disposition.get('choice')}, successor "
                f"{disposition.get('successorId')}, error {disposition.get('lastError')})",
            )
    statuses = Counter(str(i["disposition"].get("status")) for i in items)
    return Invariant("dispositions", True, f"{len(items)} final ({dict(sorted(statuses.items()))})")


def owner_dms(runtime: LocalRuntime, baseline: list[str] | None) -> Invariant:
    """Rule 7 (see the module docstring)."""
    notifications = runtime.notifications()
    for notification in notifications:
        if notification.get("delivery") in ("failed", "retrying", "parked"):
            return Invariant(
                "owner DMs",
                False,
                f"{notification.get('jobName')} {notification.get('kind')} "
                f"({notification.get('eventKey')}): {notification.get('delivery')}",
            )
    delivered = Counter(delivered_dms(notifications))
    if baseline is not None:
        missing = Counter(baseline) - delivered
        if missing:
            first = sorted(missing)[0]
            return Invariant(
                "owner DMs",
                False,
                f"{first}: delivered {delivered[first]} times, "
                f"{Counter(baseline)[first]} in the fault-free run",
            )
    same = ", every one the fault-free run sent" if baseline is not None else ""
    return Invariant("owner DMs", True, f"{sum(delivered.values())} delivered{same}")


def check_invariants(runtime: LocalRuntime, baseline: Baseline | None = None) -> list[Invariant]:
    """Every rule of the module docstring, in order (``baseline``: a fault-free run's
    :func:`baseline_of`, or None to skip the comparisons)."""
    from quotagov.adapters import aws_clients

    dynamodb = aws_clients.client("dynamodb")
    return [
        submissions(runtime, dynamodb),
        escalations(runtime, dynamodb),
        audit(runtime, baseline.findings if baseline is not None else None),
        answers(runtime),
        dead_letters(runtime),
        dispositions(runtime, dynamodb),
        owner_dms(runtime, baseline.owner_dms if baseline is not None else None),
    ]
