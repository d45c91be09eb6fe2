"""Sample data and helpers of the audit tests: policy, events, the simulated Batch."""

from __future__ import annotations

import json
from typing import Any

from quotagov.clock import ManualClock
from quotagov.governance.audit.cloudtrail_calls import CloudTrailApiCall
from quotagov.policy import Policy
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.simbatch import RUN_SECONDS_HINT
from support import events
from support.aws import ACCOUNT, GPU, QUEUE_ARN
from support.payloads import training_job_request

TABLE = "quotagov-audit-test"
PLATFORM_CHANNEL = "C0PLATFORM"
CONTROLLER_ROLE = f"arn:aws:iam::{ACCOUNT}:role/quotagov-SlackInteractionsRole"


def share_arn(name: str) -> str:
    """The ARN of quota share ``name`` on the test queue."""
    return f"{QUEUE_ARN}/quota-share/{name}"


POLICY_DOCUMENT: dict[str, Any] = {
    "jobQueue": QUEUE_ARN,
    "quotaShares": [
        {
            "quotaShareName": "research",
            "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 4}],
            "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 50},
            "preemptionConfiguration": {"inSharePreemption": "ENABLED"},
        },
        {
            "quotaShareName": "applied",
            "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
            "resourceSharingConfiguration": {"strategy": "LEND"},
            "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
        },
        {
            "quotaShareName": "release",
            "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}],
            "resourceSharingConfiguration": {"strategy": "RESERVE"},
            "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
        },
    ],
    "priorityLevels": [
        {"name": "standard", "schedulingPriority": 10},
        {"name": "high", "schedulingPriority": 50},
        {"name": "urgent", "schedulingPriority": 90},
    ],
    "workloadClasses": {
        "exploratory": {
            "checkpointRequired": True,
            "shares": ["research", "applied"],
            "instanceTypes": ["ml.g5.xlarge"],
            "onRetriesExhausted": {"action": "reclassify"},
        },
        "scheduled": {
            "checkpointRequired": False,
            "shares": ["applied"],
            "instanceTypes": ["ml.g5.xlarge"],
        },
        "release-builds": {
            "checkpointRequired": False,
            "shares": ["release"],
            "instanceTypes": ["ml.g5.xlarge"],
        },
    },
    "teams": {
        "research": {
            "classes": ["exploratory"],
            "directLevels": ["standard"],
            "approvalLevels": ["high", "urgent"],
        },
        "applied": {"classes": ["scheduled"], "directLevels": ["standard"]},
    },
}


def load_event(name: str) -> dict[str, Any]:
    """The EventBridge event ``events/audit_trail-<name>.json``."""
    return events.load_event(f"audit_trail-{name}")


def load_call(name: str) -> CloudTrailApiCall:
    """The CloudTrail record (``detail``) of ``events/audit_trail-<name>.json``."""
    return CloudTrailApiCall.model_validate(load_event(name)["detail"])


def simulated_batch(policy: Policy, clock: ManualClock) -> SimulatedBatch:
    """The simulated Batch with the policy's queue and shares, 8 ``ml.g5.xlarge``."""
    return SimulatedBatch.from_policy(policy, capacity={GPU: 8}, clock=clock, seed=7)


def submit(
    batch: SimulatedBatch, name: str, share: str, *, run_seconds: float = 36000, priority: int = 10
) -> str:
    """Submit a one-instance training job to ``share``; returns its job id."""
    payload = training_job_request(name)
    answer = batch.submit_service_job(
        jobName=name,
        jobQueue=QUEUE_ARN,
        serviceJobType="SAGEMAKER_TRAINING",
        serviceRequestPayload=json.dumps(payload),
        quotaShareName=share,
        schedulingPriority=priority,
        tags={RUN_SECONDS_HINT: str(run_seconds)},
    )
    return str(answer["jobId"])


def perform(batch: SimulatedBatch, clock: ManualClock, call: CloudTrailApiCall) -> None:
    """Make the call CloudTrail recorded, on the simulated Batch at its ``eventTime``, and
    let 40 s pass (EventBridge delivery) before the audit sees it."""
    clock.set(call.event_ms / 1000)
    batch.sync()
    operation = {
        "CreateQuotaShare": batch.create_quota_share,
        "UpdateQuotaShare": batch.update_quota_share,
        "DeleteQuotaShare": batch.delete_quota_share,
        "UpdateServiceJob": batch.update_service_job,
        "TerminateServiceJob": batch.terminate_service_job,
    }[call.eventName]
    operation(**call.parameters)
    batch.advance(40)


def with_job(call: CloudTrailApiCall, job_id: str) -> CloudTrailApiCall:
    """``call`` about the simulated job ``job_id`` (the sample events' ids are invented)."""
    return call.model_copy(update={"requestParameters": {**call.parameters, "jobId": job_id}})


def create_audit_table(client: Any, name: str = TABLE) -> None:
    """The ``AuditTable`` layout of docs/architecture.md: ``pk``/``sk`` strings."""
    client.create_table(
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
