"""CloudTrail events of the real envelope for each kind of change: the stored record,
its exact difference and its findings."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from audit.support import (
    ACCOUNT,
    PLATFORM_CHANNEL,
    QUEUE_ARN,
    TABLE,
    load_call,
    perform,
    share_arn,
    submit,
    with_job,
)
from quotagov.adapters.dynamodb_audit import DynamoDBChainStore, from_item
from quotagov.adapters.dynamodb_known import DynamoDBVersionStore
from quotagov.clock import ManualClock
from quotagov.governance.audit.chain import GENESIS_HASH, record_hash
from quotagov.governance.audit.cloudtrail_calls import CloudTrailApiCall
from quotagov.governance.audit.decisions import DecisionLog
from quotagov.governance.audit.known import CALL, CONFIG
from quotagov.governance.audit.trail import AuditTrail
from quotagov.governance.ports import ControllerDecision
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.local.fake_slack import FakeSlack

XL = "ml.g5.xlarge"


def stored(dynamodb: Any, chain: str, seq: int) -> dict[str, Any]:
    """The raw audit table item of record ``seq`` (as DynamoDB holds it)."""
    item = dynamodb.get_item(
        TableName=TABLE,
        Key={"pk": {"S": f"CHAIN#{chain}"}, "sk": {"S": f"SEQ#{seq:012d}"}},
        ConsistentRead=True,
    )["Item"]
    return from_item(item)


def release_config(limit: int, **overrides: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "capacityLimits": [{"capacityUnit": XL, "maxCapacity": limit}],
        "resourceSharingConfiguration": {"strategy": "RESERVE"},
        "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
        "state": "ENABLED",
    }
    config.update(overrides)
    return config


def test_capacity_limit_lowered_below_use_of_a_reserve_share(
    trail: AuditTrail,
    batch: SimulatedBatch,
    dynamodb: Any,
    versions: DynamoDBVersionStore,
    slack: FakeSlack,
    clock: ManualClock,
) -> None:
    call = load_call("update-quota-share")
    # two release builds run on the share's 2 instances, a third waits; research runs one
    for name in ("rel-1", "rel-2", "rel-3"):
        submit(batch, name, "release")
    submit(batch, "res-1", "research")
    batch.advance(60)
    # quotagov knew the share from a DescribeQuotaShare refresh
    trail._configs.refresh_quota_share(share_arn("release"), int(clock.now() * 1000))
    # then alice lowered it to 1 (on Batch), and the event arrives 40 s later
    perform(batch, clock, call)
    requests_before = len(batch.requests)

    result = trail.record_call(call)

    assert result.created and result.alerted
    item = stored(dynamodb, "ml-gov-queue", 1)
    assert (item.pop("pk"), item.pop("sk")) == ("CHAIN#ml-gov-queue", "SEQ#000000000001")
    assert item == result.record
    record = item
    assert record["seq"] == 1 and record["prevHash"] == GENESIS_HASH
    assert record["hash"] == record_hash(record)
    assert record["kind"] == "CHANGE"
    assert record["time"] == "2026-05-04T10:02:09Z"
    assert record["recordedAt"] == "2026-05-04T10:02:49Z"
    assert record["action"] == "UpdateQuotaShare"
    assert record["eventId"] == call.eventID
    assert record["actor"] == {
        "principalArn": f"arn:aws:sts::{ACCOUNT}:assumed-role/ml-admins/alice",
        "type": "AssumedRole",
        "sessionIssuerArn": f"arn:aws:iam::{ACCOUNT}:role/ml-admins",
        "quotagov": False,
        "decisionId": None,
        "decisionAction": None,
    }
    assert record["resource"] == {
        "type": "quota-share",
        "name": "release",
        "arn": share_arn("release"),
    }
    assert record["jobQueue"] == "ml-gov-queue"
    assert record["requestParameters"] == {
        "quotaShareArn": share_arn("release"),
        "capacityLimits": [{"capacityUnit": XL, "maxCapacity": 1}],
    }
    assert record["error"] is None
    assert record["beforeSource"] == "last-known"
    assert record["before"] == release_config(2)
    assert record["after"] == release_config(1)
    assert record["difference"] == [
        {"path": f"capacityLimits[{XL}].maxCapacity", "before": 2, "after": 1}
    ]
    assert record["findings"] == [
        {
            "code": "CAPACITY_LIMIT_BELOW_USE",
            "severity": "high",
            "message": f"quota share release: {XL} capacity limit lowered to 1 from 2 while "
            "2 instances are in use by 2 job(s); the excess becomes preemptible even "
            "though the share is RESERVE",
        },
        {
            "code": "POLICY_DRIFT",
            "severity": "medium",
            "message": f"quota share release: capacityLimits[{XL}].maxCapacity is 1, policy says 2",
        },
    ]
    assert record["lookupErrors"] == []
    # the use came from ListServiceJobs per capacity-holding state, filtered on the share
    listed = [req for name, req in batch.requests[requests_before:] if name == "ListServiceJobs"]
    assert [req["jobStatus"] for req in listed] == [
        "SCHEDULED",
        "STARTING",
        "RUNNING",
        "RUNNABLE",
        "FAILED",
    ]
    assert all(
        req["filters"] == [{"name": "QUOTA_SHARE_NAME", "values": ["release"]}] for req in listed
    )
    # the last known configuration is now the live one, refreshed with DescribeQuotaShare
    latest = versions.latest(CONFIG, share_arn("release"))
    assert latest is not None and latest.tag == "DescribeQuotaShare"
    assert latest.value == release_config(1)
    # and the platform team heard of it
    assert len(slack.messages) == 1
    post = slack.messages[0]
    assert post.channel == PLATFORM_CHANNEL
    assert post.text == (
        "Risky Batch change: UpdateQuotaShare on quota-share release by "
        f"arn:aws:sts::{ACCOUNT}:assumed-role/ml-admins/alice: 2 finding(s)"
    )
    assert "CAPACITY_LIMIT_BELOW_USE" in post.blocks[2]["text"]["text"]
    assert post.blocks[4]["elements"][0]["text"].startswith("audit chain ml-gov-queue record 1")


def test_strategy_away_from_reserve_with_unlimited_borrowing_compared_to_the_policy(
    trail: AuditTrail, batch: SimulatedBatch, chains: DynamoDBChainStore, clock: ManualClock
) -> None:
    call = load_call("update-quota-share-strategy")
    perform(batch, clock, call)
    requests_before = len(batch.requests)

    result = trail.record_call(call)

    record = result.record
    assert record["beforeSource"] == "policy"
    assert record["before"] == release_config(2)
    assert record["difference"] == [
        {"path": "resourceSharingConfiguration.borrowLimit", "before": None, "after": -1},
        {
            "path": "resourceSharingConfiguration.strategy",
            "before": "RESERVE",
            "after": "LEND_AND_BORROW",
        },
    ]
    assert [f["code"] for f in record["findings"]] == [
        "STRATEGY_AWAY_FROM_RESERVE",
        "BORROW_LIMIT_RAISED",
        "POLICY_DRIFT",
    ]
    assert record["findings"][0]["message"] == (
        "quota share release: strategy changed from RESERVE to LEND_AND_BORROW; its idle "
        "capacity is now lent and taken back by cross-share preemption"
    )
    assert record["findings"][1]["message"] == (
        "quota share release: borrow limit raised from 0% to unlimited (-1)"
    )
    assert record["findings"][2]["message"] == (
        "quota share release: resourceSharingConfiguration.borrowLimit is -1, policy says "
        "None; resourceSharingConfiguration.strategy is 'LEND_AND_BORROW', policy says 'RESERVE'"
    )
    # no capacity limit changed and the share was not disabled: Batch jobs not listed
    assert [name for name, _ in batch.requests[requests_before:]] == ["DescribeQuotaShare"]
    assert chains.find("ml-gov-queue", f"event:{record['eventId']}") == record


def test_borrow_limit_raised(trail: AuditTrail, batch: SimulatedBatch, clock: ManualClock) -> None:
    call = load_call("update-quota-share-borrow")
    perform(batch, clock, call)

    record = trail.record_call(call).record

    assert record["difference"] == [
        {"path": "resourceSharingConfiguration.borrowLimit", "before": 50, "after": 200}
    ]
    assert record["findings"] == [
        {
            "code": "BORROW_LIMIT_RAISED",
            "severity": "medium",
            "message": "quota share research: borrow limit raised from 50% to 200%",
        },
        {
            "code": "POLICY_DRIFT",
            "severity": "medium",
            "message": "quota share research: resourceSharingConfiguration.borrowLimit is 200, "
            "policy says 50",
        },
    ]


def test_in_share_preemption_on_a_share_with_non_checkpointing_classes(
    trail: AuditTrail, batch: SimulatedBatch, clock: ManualClock
) -> None:
    call = load_call("update-quota-share-preemption")
    perform(batch, clock, call)

    record = trail.record_call(call).record

    assert record["difference"] == [
        {
            "path": "preemptionConfiguration.inSharePreemption",
            "before": "DISABLED",
            "after": "ENABLED",
        }
    ]
    assert record["findings"][0] == {
        "code": "IN_SHARE_PREEMPTION_WITHOUT_CHECKPOINTING",
        "severity": "high",
        "message": "quota share applied: in-share preemption ENABLED but policy classes "
        "scheduled run there without checkpointing and lose their work when preempted",
    }
    assert [f["code"] for f in record["findings"]] == [
        "IN_SHARE_PREEMPTION_WITHOUT_CHECKPOINTING",
        "POLICY_DRIFT",
    ]


def fill_applied(batch: SimulatedBatch) -> None:
    """applied (limit 2, LEND): one job done, two running, one waiting."""
    submit(batch, "app-short", "applied", run_seconds=60)
    submit(batch, "app-long-1", "applied")
    batch.advance(600)
    submit(batch, "app-long-2", "applied")
    submit(batch, "app-long-3", "applied")
    batch.advance(60)
    states = {
        j["jobName"]: j["status"]
        for status in ("SUCCEEDED", "RUNNING", "RUNNABLE")
        for j in batch.list_service_jobs(jobQueue=QUEUE_ARN, jobStatus=status)["jobSummaryList"]
    }
    assert states == {
        "app-short": "SUCCEEDED",
        "app-long-1": "RUNNING",
        "app-long-2": "RUNNING",
        "app-long-3": "RUNNABLE",
    }


def test_share_disabled_with_jobs_in_it(
    trail: AuditTrail, batch: SimulatedBatch, clock: ManualClock
) -> None:
    fill_applied(batch)
    call = load_call("update-quota-share-disable")
    perform(batch, clock, call)

    record = trail.record_call(call).record

    assert record["difference"] == [{"path": "state", "before": "ENABLED", "after": "DISABLED"}]
    assert record["findings"] == [
        {
            "code": "SHARE_DISABLED_WITH_JOBS",
            "severity": "medium",
            "message": "quota share applied: DISABLED with 3 unfinished job(s) in it; new "
            "submissions are rejected and deleting it next terminates them",
        },
        {
            "code": "POLICY_DRIFT",
            "severity": "medium",
            "message": "quota share applied: state is 'DISABLED', policy says 'ENABLED'",
        },
    ]


def test_share_deleted_with_jobs_in_it(
    trail: AuditTrail, batch: SimulatedBatch, versions: DynamoDBVersionStore, clock: ManualClock
) -> None:
    fill_applied(batch)
    disable, delete = load_call("update-quota-share-disable"), load_call("delete-quota-share")
    perform(batch, clock, disable)
    trail.record_call(disable)
    perform(batch, clock, delete)

    record = trail.record_call(delete).record

    assert record["seq"] == 2
    assert record["beforeSource"] == "last-known"
    assert record["after"] is None
    assert record["difference"] == [
        {"path": f"capacityLimits[{XL}].maxCapacity", "before": 2, "after": None},
        {"path": "preemptionConfiguration.inSharePreemption", "before": "DISABLED", "after": None},
        {"path": "resourceSharingConfiguration.strategy", "before": "LEND", "after": None},
        {"path": "state", "before": "DISABLED", "after": None},
    ]
    assert record["findings"] == [
        {
            "code": "SHARE_DELETED_WITH_JOBS",
            "severity": "high",
            "message": "quota share applied: deleted with 3 unfinished job(s) in it (3 already "
            "stopped since the change); Batch terminates all of them",
        },
        {
            "code": "POLICY_DRIFT",
            "severity": "medium",
            "message": "quota share applied: deleted, but the policy declares it",
        },
    ]
    # the delete joined the share's ordered history (eventTime, eventID)
    gone = versions.latest(CALL, share_arn("applied"))
    assert gone is not None and gone.tag == delete.eventID
    assert gone.value == {"eventName": "DeleteQuotaShare", "parameters": delete.parameters}


def test_share_created_outside_the_policy(
    trail: AuditTrail, batch: SimulatedBatch, clock: ManualClock, versions: DynamoDBVersionStore
) -> None:
    call = load_call("create-quota-share")
    perform(batch, clock, call)

    record = trail.record_call(call).record

    assert record["resource"]["arn"] == share_arn("adhoc")
    assert record["before"] is None and record["beforeSource"] == "none"
    assert record["difference"] == [
        {"path": f"capacityLimits[{XL}].maxCapacity", "before": None, "after": 1},
        {"path": "preemptionConfiguration.inSharePreemption", "before": None, "after": "DISABLED"},
        {"path": "resourceSharingConfiguration.strategy", "before": None, "after": "LEND"},
        {"path": "state", "before": None, "after": "ENABLED"},
    ]
    assert record["findings"] == [
        {
            "code": "POLICY_DRIFT",
            "severity": "medium",
            "message": f"quota share adhoc: not declared in the policy for {QUEUE_ARN}",
        }
    ]
    refreshed = versions.latest(CONFIG, share_arn("adhoc"))
    assert refreshed is not None and refreshed.tag == "DescribeQuotaShare"
    assert refreshed.value == record["after"]


def controller_submission(job_id: str, priority: int, at: str) -> CloudTrailApiCall:
    """The CloudTrail record of quotagov's own ``SubmitServiceJob`` of ``job_id`` (the
    submit worker's role) at ``priority``, made at ``at`` (ISO-8601)."""
    call = load_call("submit-service-job")
    controller = load_call("update-service-job-controller").userIdentity
    return call.model_copy(
        update={
            "userIdentity": controller,
            "eventTime": datetime.fromisoformat(at),
            "eventID": f"submit-{job_id}",
            "requestParameters": {
                **call.parameters,
                "quotaShareName": "research",
                "schedulingPriority": priority,
            },
            "responseElements": {"jobId": job_id, "jobName": "res-sweep-017"},
        }
    )


def test_priority_raised_by_a_researcher_bypasses_approval(
    trail: AuditTrail,
    batch: SimulatedBatch,
    clock: ManualClock,
    slack: FakeSlack,
) -> None:
    clock.set(1777890000.0)  # 2026-05-04T10:20:00Z, the submission
    job_a = submit(batch, "res-sweep-017", "research", priority=10)
    submitted = trail.record_call(controller_submission(job_a, 10, "2026-05-04T10:20:00+00:00"))
    assert submitted.record["findings"] == []
    call = with_job(load_call("update-service-job"), job_a)
    perform(batch, clock, call)

    record = trail.record_call(call).record

    assert record["seq"] == 2
    assert record["beforeSource"] == "cloudtrail"
    assert record["resource"] == {
        "type": "service-job",
        "name": job_a,
        "arn": f"service-job/{job_a}",
        "quotaShareName": "research",
    }
    assert record["actor"]["quotagov"] is False
    submitted_as = {
        "jobName": "sneaky-train",
        "serviceJobType": "SAGEMAKER_TRAINING",
        "quotaShareName": "research",
    }
    assert record["before"] == submitted_as | {"schedulingPriority": 10}
    assert record["after"] == submitted_as | {"schedulingPriority": 90}
    assert record["difference"] == [{"path": "schedulingPriority", "before": 10, "after": 90}]
    assert record["findings"] == [
        {
            "code": "PRIORITY_RAISED_OUTSIDE_QUOTAGOV",
            "severity": "high",
            "message": f"service job {job_a}: schedulingPriority raised from 10 to 90 outside "
            "quotagov, bypassing escalation approval",
        }
    ]
    assert len(slack.messages) == 1


def test_a_forged_decision_cannot_hide_a_direct_priority_raise(
    trail: AuditTrail,
    batch: SimulatedBatch,
    decisions: DecisionLog,
    versions: DynamoDBVersionStore,
    clock: ManualClock,
    slack: FakeSlack,
) -> None:
    """Attacker: can write the audit table past its policy (as an admin can) and call
    ``UpdateServiceJob``. They plant a decision setting the job's last known priority to
    90, and a last-known version that claims a CloudTrail call did, then raise the job
    10 -> 90 directly. The "before" comes from the recorded CloudTrail history (the
    submission at 10), so the raise is still a finding."""
    clock.set(1777890000.0)
    job_a = submit(batch, "res-sweep-017", "research", priority=10)
    trail.record_call(controller_submission(job_a, 10, "2026-05-04T10:20:00+00:00"))
    clock.set(1777892000.0)  # 10:53:20: the forged decision, seemingly quotagov's
    decisions.record_decision(
        ControllerDecision(
            action="EscalationApproved",
            actor="U0ERIN",
            job_queue=QUEUE_ARN,
            resource="esc-forged",
            decision_id="esc-forged:approved",
            details={"jobId": job_a, "schedulingPriority": 90},
        )
    )
    versions.put(
        CONFIG, f"service-job/{job_a}", 1777892001000, "made-up-event", {"schedulingPriority": 90}
    )
    forged = versions.latest(CONFIG, f"service-job/{job_a}")
    assert forged is not None and forged.value == {"schedulingPriority": 90}
    call = with_job(load_call("update-service-job"), job_a)
    perform(batch, clock, call)

    record = trail.record_call(call).record

    assert record["before"] == {
        "jobName": "sneaky-train",
        "serviceJobType": "SAGEMAKER_TRAINING",
        "quotaShareName": "research",
        "schedulingPriority": 10,
    }
    assert record["beforeSource"] == "cloudtrail"
    assert record["difference"] == [{"path": "schedulingPriority", "before": 10, "after": 90}]
    assert [f["code"] for f in record["findings"]] == ["PRIORITY_RAISED_OUTSIDE_QUOTAGOV"]
    assert "raised from 10 to 90" in record["findings"][0]["message"]
    assert len(slack.messages) == 1


def test_priority_set_outside_quotagov_with_unknown_previous_value(
    trail: AuditTrail, batch: SimulatedBatch, clock: ManualClock
) -> None:
    job_a = submit(batch, "res-sweep-018", "research", priority=10)
    call = with_job(load_call("update-service-job"), job_a)
    perform(batch, clock, call)

    record = trail.record_call(call).record

    assert record["difference"] == [{"path": "schedulingPriority", "before": None, "after": 90}]
    assert record["findings"][0]["message"] == (
        f"service job {job_a}: schedulingPriority set to 90 outside quotagov (previous "
        "priority unknown); escalations need approval"
    )


def test_controller_priority_change_names_its_decision_and_has_no_finding(
    trail: AuditTrail,
    batch: SimulatedBatch,
    decisions: DecisionLog,
    clock: ManualClock,
    slack: FakeSlack,
) -> None:
    clock.set(1777892400.0)  # 11:00:00, submitted at priority 10
    job_b = submit(batch, "app-nightly-042", "applied", priority=10)
    decisions.record_decision(
        ControllerDecision(
            action="SubmissionAccepted",
            actor="arn:aws:sts::111122223333:assumed-role/researcher/dave",
            job_queue="ml-gov-queue",
            resource="sub-0002",
            decision_id="submit-sub-0002",
            details={"jobId": job_b, "schedulingPriority": 10},
        )
    )
    call = with_job(load_call("update-service-job-controller"), job_b)
    clock.set(call.event_ms / 1000)  # 11:10:02 the controller applies the approval ...
    batch.update_service_job(jobId=job_b, schedulingPriority=50)
    clock.set(1777893003.0)  # ... and records the decision a second later
    decisions.record_decision(
        ControllerDecision(
            action="EscalationApproved",
            actor="U0CAROL",
            job_queue="ml-gov-queue",
            resource="esc-0007",
            decision_id="esc-0007-approved",
            details={"jobId": job_b, "schedulingPriority": 50, "requestedBy": "U0DAVE"},
        )
    )
    batch.advance(40)

    record = trail.record_call(call).record

    assert record["seq"] == 3
    assert record["actor"] == {
        "principalArn": f"arn:aws:sts::{ACCOUNT}:assumed-role/quotagov-SlackInteractionsRole/"
        "quotagov-SlackInteractionsFunction",
        "type": "AssumedRole",
        "sessionIssuerArn": f"arn:aws:iam::{ACCOUNT}:role/quotagov-SlackInteractionsRole",
        "quotagov": True,
        "decisionId": "esc-0007-approved",
        "decisionAction": "EscalationApproved",
    }
    assert record["difference"] == [{"path": "schedulingPriority", "before": 10, "after": 50}]
    assert record["findings"] == []
    assert slack.messages == []


def test_controller_termination_names_the_decision_in_its_reason(
    trail: AuditTrail, batch: SimulatedBatch, clock: ManualClock
) -> None:
    job_b = submit(batch, "app-nightly-043", "applied")
    batch.advance(60)
    call = with_job(load_call("terminate-service-job"), job_b)
    perform(batch, clock, call)

    record = trail.record_call(call).record

    assert record["action"] == "TerminateServiceJob"
    assert record["actor"]["quotagov"] is True
    assert record["actor"]["decisionId"] == "disp-4b7d1f02-1"
    assert record["after"] == {
        "reason": "owner chose to stop after retries ran out (quotagov-decision:disp-4b7d1f02-1)",
        "terminated": True,
    }
    assert record["findings"] == []
    assert record["resource"]["quotaShareName"] == "applied"
    assert batch.describe_service_job(jobId=job_b)["status"] == "FAILED"


def test_failed_call_is_an_attempt_without_change_findings(
    trail: AuditTrail,
    batch: SimulatedBatch,
    versions: DynamoDBVersionStore,
    slack: FakeSlack,
) -> None:
    call = load_call("update-quota-share-denied")
    requests_before = len(batch.requests)

    record = trail.record_call(call).record

    assert record["kind"] == "ATTEMPT"
    assert record["error"] == {"code": "AccessDeniedException", "message": call.errorMessage}
    assert record["actor"]["principalArn"] == (
        f"arn:aws:sts::{ACCOUNT}:assumed-role/researcher/mallory"
    )
    assert record["requestParameters"]["capacityLimits"] == [{"capacityUnit": XL, "maxCapacity": 8}]
    assert record["before"] is None and record["after"] is None
    assert record["difference"] == []
    assert record["findings"] == []
    assert batch.requests[requests_before:] == []  # nothing looked up: nothing changed
    assert versions.latest(CONFIG, share_arn("research")) is None
    assert slack.messages == []


def test_other_resources_record_their_request_as_after(trail: AuditTrail) -> None:
    queue = trail.record_call(load_call("update-job-queue")).record
    policy_change = trail.record_call(load_call("update-scheduling-policy")).record
    environment = trail.record_call(load_call("update-service-environment")).record

    assert queue["resource"] == {"type": "job-queue", "name": "ml-gov-queue", "arn": QUEUE_ARN}
    assert queue["difference"] == [
        {"path": "priority", "before": None, "after": 10},
        {"path": "state", "before": None, "after": "ENABLED"},
    ]
    assert policy_change["resource"]["arn"] == (
        f"arn:aws:batch:eu-west-1:{ACCOUNT}:scheduling-policy/ml-gov-quota"
    )
    assert policy_change["difference"] == [
        {
            "path": "quotaSharePolicy.idleResourceAssignmentStrategy",
            "before": None,
            "after": "FIFO",
        }
    ]
    assert environment["jobQueue"] == "ml-gov-queue"
    assert environment["difference"] == [
        {"path": f"capacityLimits[{XL}].maxCapacity", "before": None, "after": 6}
    ]
    assert [r["seq"] for r in (queue, policy_change, environment)] == [1, 2, 3]
    assert all(r["findings"] == [] for r in (queue, policy_change, environment))


def test_slack_failure_keeps_the_record(
    chains: DynamoDBChainStore,
    batch: SimulatedBatch,
    trail: AuditTrail,
    clock: ManualClock,
    slack: FakeSlack,
) -> None:
    call = load_call("update-quota-share-borrow")
    perform(batch, clock, call)
    slack.fail_next("chat.postMessage", "channel_not_found")

    result = trail.record_call(call)

    assert result.created and not result.alerted
    assert chains.find("ml-gov-queue", f"event:{result.record['eventId']}") == result.record
    assert [c.response for c in slack.calls_to("chat.postMessage")] == [
        {"ok": False, "error": "channel_not_found"}
    ]
    assert slack.messages == []


def test_a_ratelimited_alert_is_sent_again_and_the_record_kept(
    chains: DynamoDBChainStore,
    batch: SimulatedBatch,
    trail: AuditTrail,
    clock: ManualClock,
    slack: FakeSlack,
) -> None:
    """Slack's ``ratelimited`` is a retryable answer
    (https://api.slack.com/apis/rate-limits): the alert is posted on the second try."""
    call = load_call("update-quota-share-borrow")
    perform(batch, clock, call)
    slack.fail_next("chat.postMessage", "ratelimited")

    result = trail.record_call(call)

    assert result.created and result.alerted
    assert chains.find("ml-gov-queue", f"event:{result.record['eventId']}") == result.record
    first, second = slack.calls_to("chat.postMessage")
    assert first.response == {"ok": False, "error": "ratelimited"}
    assert second.response["ok"] is True
    assert first.params == second.params
    assert len(slack.messages) == 1


def test_share_of_another_queue_goes_to_that_queues_chain_without_policy_findings(
    trail: AuditTrail, chains: DynamoDBChainStore
) -> None:
    call = load_call("create-quota-share")
    other = call.model_copy(
        update={"requestParameters": {**call.parameters, "jobQueue": "team-sandbox-queue"}}
    )

    record = trail.record_call(other).record

    assert record["jobQueue"] == "team-sandbox-queue" and record["seq"] == 1
    assert record["resource"]["arn"] == (
        f"arn:aws:batch:eu-west-1:{ACCOUNT}:job-queue/team-sandbox-queue/quota-share/adhoc"
    )
    assert record["findings"] == []
    assert chains.chains() == ["team-sandbox-queue"]


@pytest.mark.parametrize(
    ("job_queue", "decision_id", "field"), [("", "d-1", "job_queue"), ("q", "", "decision_id")]
)
def test_decision_needs_a_job_queue_and_an_id(
    decisions: DecisionLog, chains: DynamoDBChainStore, job_queue: str, decision_id: str, field: str
) -> None:
    decision = ControllerDecision(
        action="SubmissionRefused",
        actor="quotagov",
        job_queue=job_queue,
        resource="sub-1",
        decision_id=decision_id,
    )
    with pytest.raises(ValueError, match=f"^decision.{field}: empty"):
        decisions.record_decision(decision)
    assert chains.chains() == []


def test_lowered_limit_is_judged_on_the_use_before_batch_preempted(
    chains: DynamoDBChainStore,
    versions: DynamoDBVersionStore,
    policy: Any,
    clock: ManualClock,
) -> None:
    """Batch may act on the change before its CloudTrail event arrives: here a waiting
    applied job reclaims capacity from release at once, and the audit still counts the
    release build it preempted."""
    batch = SimulatedBatch.from_policy(policy, capacity={XL: 3}, clock=clock, seed=7)
    submit(batch, "rel-1", "release")
    submit(batch, "rel-2", "release")
    submit(batch, "app-1", "applied")
    batch.advance(30)
    submit(batch, "app-2", "applied")  # waits: the service environment is full
    batch.advance(30)
    trail = AuditTrail(chains=chains, versions=versions, batch=batch, policy=policy, clock=clock)
    call = load_call("update-quota-share")
    perform(batch, clock, call)
    running = batch.list_service_jobs(
        jobQueue=QUEUE_ARN,
        jobStatus="RUNNING",
        filters=[{"name": "QUOTA_SHARE_NAME", "values": ["release"]}],
    )["jobSummaryList"]
    assert len(running) == 1  # one release build was already preempted

    record = trail.record_call(call).record

    assert record["findings"][0] == {
        "code": "CAPACITY_LIMIT_BELOW_USE",
        "severity": "high",
        "message": f"quota share release: {XL} capacity limit lowered to 1 from 2 while 2 "
        "instances are in use by 2 job(s) (1 already stopped since the change); the excess "
        "becomes preemptible even though the share is RESERVE",
    }
    assert record["beforeSource"] == "policy"
