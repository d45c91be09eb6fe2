"""Test doubles and sample data of the audit tests: Batch double, chat recorder, policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from quotagov.governance.audit_events import CloudTrailApiCall
from quotagov.governance.ports import BatchNotFoundError, ChatError, PostedMessage

EVENTS = Path(__file__).resolve().parents[2] / "events"
REGION = "eu-west-1"
ACCOUNT = "111122223333"
QUEUE_ARN = f"arn:aws:batch:{REGION}:{ACCOUNT}:job-queue/ml-gov-queue"
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
    data: dict[str, Any] = json.loads((EVENTS / f"audit_trail-{name}.json").read_text())
    return data


def load_call(name: str) -> CloudTrailApiCall:
    """The CloudTrail record (``detail``) of ``events/audit_trail-<name>.json``."""
    return CloudTrailApiCall.model_validate(load_event(name)["detail"])


class RecordingBatch:
    """Test double of the Batch port for the three calls the audit trail makes.

    Holds quota shares (``DescribeQuotaShare`` responses by ARN) and service jobs
    (``ServiceJobSummary`` dicts plus ``jobQueue`` and ``schedulingPriority``), applies
    ``ListServiceJobs``' documented filter rule (``QUOTA_SHARE_NAME`` combines with
    ``jobStatus``; no ``jobStatus`` means ``RUNNING``), and records every call.
    """

    def __init__(self) -> None:
        self.shares: dict[str, dict[str, Any]] = {}
        self.jobs: list[dict[str, Any]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def set_share(self, name: str, **configuration: Any) -> None:
        self.shares[share_arn(name)] = {
            "quotaShareName": name,
            "quotaShareArn": share_arn(name),
            "jobQueueArn": QUEUE_ARN,
            "state": "ENABLED",
            "status": "VALID",
            "tags": {},
            **configuration,
        }

    def add_job(
        self, job_id: str, share: str, status: str, instances: int = 1, priority: int = 10
    ) -> None:
        usage = (
            [{"capacityUnit": "ml.g5.xlarge", "quantity": float(instances)}]
            if status in ("SCHEDULED", "STARTING", "RUNNING")
            else []
        )
        self.jobs.append(
            {
                "jobId": job_id,
                "jobArn": f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/{job_id}",
                "jobName": f"job-{job_id[:8]}",
                "jobQueue": QUEUE_ARN,
                "serviceJobType": "SAGEMAKER_TRAINING",
                "status": status,
                "quotaShareName": share,
                "capacityUsage": usage,
                "createdAt": 1777885000000,
                "schedulingPriority": priority,
            }
        )

    def describe_quota_share(self, *, quotaShareArn: str) -> dict[str, Any]:
        self.calls.append(("DescribeQuotaShare", {"quotaShareArn": quotaShareArn}))
        if quotaShareArn not in self.shares:
            raise BatchNotFoundError(
                "DescribeQuotaShare", "ClientException", f"{quotaShareArn} does not exist"
            )
        return json.loads(json.dumps(self.shares[quotaShareArn]))  # type: ignore[no-any-return]

    def describe_service_job(self, *, jobId: str) -> dict[str, Any]:
        self.calls.append(("DescribeServiceJob", {"jobId": jobId}))
        for job in self.jobs:
            if job["jobId"] == jobId:
                return dict(job)
        raise BatchNotFoundError("DescribeServiceJob", "ClientException", f"{jobId} not found")

    def list_service_jobs(self, **request: Any) -> dict[str, Any]:
        self.calls.append(("ListServiceJobs", request))
        status = request.get("jobStatus", "RUNNING")
        shares = [
            v
            for f in request.get("filters", [])
            if f["name"] == "QUOTA_SHARE_NAME"
            for v in f["values"]
        ]
        queue = request.get("jobQueue")
        found = [
            {k: v for k, v in job.items() if k not in ("jobQueue", "schedulingPriority")}
            for job in self.jobs
            if job["status"] == status
            and (not shares or job["quotaShareName"] in shares)
            and queue in (job["jobQueue"], "ml-gov-queue")
        ]
        return {"jobSummaryList": found}


class ChatRecorder:
    """A :class:`~quotagov.governance.ports.ChatNotifier` that keeps what it is asked to
    post; with ``fail`` set it answers like Slack refusing the call."""

    def __init__(self, fail: str | None = None) -> None:
        self.posts: list[dict[str, Any]] = []
        self.fail = fail

    def post(self, channel: str, text: str, blocks: list[dict[str, Any]]) -> PostedMessage:
        if self.fail:
            raise ChatError(self.fail)
        self.posts.append({"channel": channel, "text": text, "blocks": blocks})
        return PostedMessage(channel=channel, ts=f"1777890000.{len(self.posts):06d}")

    def update(self, message: PostedMessage, text: str, blocks: list[dict[str, Any]]) -> None:
        raise AssertionError("the audit trail never updates a message")


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
