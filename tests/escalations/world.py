"""The walkthrough world for end-to-end escalation tests.

AWS Batch quota-management walkthrough (``examples/policy.yaml`` shares, capacity 3 x
ml.g5.xlarge), driven through the simulated Batch's own API:

- t=0: bg-1 and bg-2 (background, priority 10, checkpoint every 600 s); bg-1 runs
  within quota, bg-2 borrows medium's idle instance;
- t=300: res-1 (reserved) runs within quota;
- t=600: med-1 (medium) reclaims its instance: bg-2 is preempted cross-share and waits;
- the tests start at t=900.

DynamoDB tables live on a loopback moto server (``ThreadedMotoServer``), Slack is the
loopback fake, and every handler gets its dependencies from ``quotagov.wiring``.
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import boto3
import yaml

from quotagov import wiring
from quotagov.adapters.batch_simulated import SimulatedBatch
from quotagov.adapters.dynamodb_escalations import EscalationsTable, create_escalations_table
from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository, jobs_table_definition
from quotagov.adapters.slack import SlackCredentials
from quotagov.clock import ManualClock
from quotagov.governance.ports import NullAuditSink
from quotagov.governance.records import JobRecord, SubmissionState
from quotagov.local.fake_slack import FakeSlack
from quotagov.policy import Policy, parse_policy
from quotagov.settings import Settings

from .conftest import REGION, slack_signature

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_POLICY = ROOT / "src" / "quotagov" / "examples" / "policy.yaml"
EVENTS = ROOT / "events"

T0 = 1_764_547_200.0  # 2025-12-01T00:00:00Z = walkthrough t=0
BOT_TOKEN = "xoxb-escalation-tests"
SIGNING_SECRET = "escalation-tests-signing-secret"
ALICE = "arn:aws:sts::111122223333:assumed-role/researcher/alice"
ERIN = "arn:aws:sts::111122223333:assumed-role/researcher/erin"
DAVE = "arn:aws:sts::111122223333:assumed-role/researcher/dave"


def walkthrough_policy(**research_overrides: Any) -> Policy:
    """The example policy, with Erin (a research approver) also a research member.

    ``research_overrides`` replace fields of the research team, e.g.
    ``escalationBudget={"count": 1, "periodSeconds": 604800}``.
    """
    data = yaml.safe_load(EXAMPLE_POLICY.read_text(encoding="utf-8"))
    research = data["teams"]["research"]
    research["members"].append({"principal": ERIN, "slackUserId": "U0ERIN"})
    research.update(research_overrides)
    data["priorityLevels"].append({"name": "critical", "schedulingPriority": 99})
    return parse_policy(data)


class LambdaContext:
    """The attributes of the Lambda context object Powertools reads."""

    function_name = "quotagov-tests"
    function_version = "$LATEST"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:eu-west-1:111122223333:function:quotagov-tests"
    aws_request_id = "00000000-0000-0000-0000-000000000000"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 3000


@dataclass
class World:
    """Everything a test needs, plus helpers that speak to the handlers."""

    clock: ManualClock
    policy: Policy
    batch: SimulatedBatch
    slack: FakeSlack
    jobs: DynamoDBJobsRepository
    escalations: EscalationsTable
    audit: NullAuditSink
    job_ids: dict[str, str] = field(default_factory=dict)  # job name -> Batch job id

    @property
    def update_calls(self) -> list[dict[str, Any]]:
        """Every ``UpdateServiceJob`` request the simulated Batch received, in order."""
        return [request for op, request in self.batch.requests if op == "UpdateServiceJob"]

    # -- the escalation API -----------------------------------------------------------

    def request(
        self, submission_id: str, level: str, reason: str, principal: str = ALICE
    ) -> tuple[int, dict[str, Any]]:
        """``POST /jobs/{submission_id}/escalations`` through the handler."""
        from quotagov.handlers import escalations_api

        event = json.loads((EVENTS / "escalations_api-request.json").read_text())
        event["path"] = f"/jobs/{submission_id}/escalations"
        event["pathParameters"] = {"jobId": submission_id}
        event["body"] = json.dumps({"level": level, "reason": reason})
        event["requestContext"]["identity"]["userArn"] = principal
        response = escalations_api.handler(event, LambdaContext())  # type: ignore[arg-type]
        return int(response["statusCode"]), json.loads(response["body"])

    # -- Slack clicks --------------------------------------------------------------------

    def click_event(
        self,
        escalation_id: str,
        user: str,
        action: str = "escalation_approve",
        *,
        timestamp: int | None = None,
        secret: str = SIGNING_SECRET,
        tamper: bool = False,
    ) -> dict[str, Any]:
        """A signed ``block_actions`` click on the escalation's message, as Slack sends it."""
        stored = self.escalations.get(escalation_id)
        assert stored is not None and stored.channel and stored.ts
        event = json.loads((EVENTS / "slack_interactions-approve.json").read_text())
        payload = _decode_payload(event["body"])
        payload["user"] = {"id": user, "username": user.lower(), "name": user.lower()}
        payload["container"].update(channel_id=stored.channel, message_ts=stored.ts)
        payload["channel"]["id"] = stored.channel
        payload["message"]["ts"] = stored.ts
        payload["response_url"] = self.slack.response_url_for(stored.channel, stored.ts)
        payload["actions"][0].update(
            action_id=action, value=escalation_id, block_id=f"escalation:{escalation_id}"
        )
        body = urlencode({"payload": json.dumps(payload, separators=(",", ":"))}).encode()
        ts = int(self.clock.now()) if timestamp is None else timestamp
        signature = slack_signature(secret, ts, body)
        if tamper:
            body = body.replace(b"escalation_deny", b"escalation_approve").replace(
                user.encode(), b"U0CAROL"
            )
        event["body"] = base64.b64encode(body).decode()
        event["isBase64Encoded"] = True
        event["headers"]["X-Slack-Request-Timestamp"] = str(ts)
        event["headers"]["X-Slack-Signature"] = signature
        event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
        return event

    def click(
        self, escalation_id: str, user: str, action: str = "escalation_approve", **kw: Any
    ) -> int:
        """Send a click to ``POST /slack/interactions``; returns the HTTP status."""
        from quotagov.handlers import slack_interactions

        event = self.click_event(escalation_id, user, action, **kw)
        response = slack_interactions.handler(event, LambdaContext())  # type: ignore[arg-type]
        return int(response["statusCode"])

    def expire(self) -> dict[str, Any]:
        """Run the scheduled expiry function with the sample event."""
        from quotagov.handlers import escalation_expiry

        event = json.loads((EVENTS / "escalation_expiry-scheduled.json").read_text())
        result: dict[str, Any] = escalation_expiry.handler(event, LambdaContext())  # type: ignore[arg-type]
        return result

    def describe(self, name: str) -> dict[str, Any]:
        answer: dict[str, Any] = self.batch.describe_service_job(jobId=self.job_ids[name])
        return answer


def _decode_payload(b64_body: str) -> dict[str, Any]:
    from urllib.parse import parse_qs

    form = parse_qs(base64.b64decode(b64_body).decode())
    payload: dict[str, Any] = json.loads(form["payload"][0])
    return payload


def _payload(name: str, checkpointing: bool) -> str:
    request: dict[str, Any] = {
        "TrainingJobName": name,
        "RoleArn": "arn:aws:iam::111122223333:role/sm-exec-research",
        "AlgorithmSpecification": {
            "TrainingImage": "111122223333.dkr.ecr.eu-west-1.amazonaws.com/train:1",
            "TrainingInputMode": "File",
        },
        "ResourceConfig": {
            "InstanceType": "ml.g5.xlarge",
            "InstanceCount": 1,
            "VolumeSizeInGB": 50,
        },
        "OutputDataConfig": {"S3OutputPath": "s3://example-ml-artifacts-euw1/out/"},
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
    }
    if checkpointing:
        request["CheckpointConfig"] = {"S3Uri": f"s3://example-ml-artifacts-euw1/ckpt/{name}/"}
    return json.dumps(request)


#: (job name, team, share, level, submitted at (s from t=0), owner, checkpoint interval,
#: run seconds), as in shared/scenarios/aws-walkthrough.json
WALKTHROUGH_JOBS = [
    ("bg-1", "research", "background", "standard", 0, ALICE, 600, 3600),
    ("bg-2", "research", "background", "standard", 0, ALICE, 600, 3600),
    ("res-1", "release", "reserved", "low", 300, None, None, 1800),
    ("med-1", "applied", "medium", "low", 600, DAVE, None, 1200),
]


def build_world(policy: Policy, dynamodb_endpoint: str) -> World:
    """Set up the walkthrough at t=900 and wire the handlers to it."""
    clock = ManualClock(T0)
    suffix = uuid.uuid4().hex[:8]
    client = boto3.client("dynamodb", region_name=REGION, endpoint_url=dynamodb_endpoint)
    client.create_table(**jobs_table_definition(f"jobs-{suffix}"))
    create_escalations_table(client, f"escalations-{suffix}")
    jobs = DynamoDBJobsRepository(f"jobs-{suffix}", clock, client)
    escalations = EscalationsTable(client, f"escalations-{suffix}")

    scenario = json.loads(
        (ROOT / "src" / "quotagov" / "examples" / "aws-walkthrough.json").read_text()
    )
    batch = SimulatedBatch.from_policy(
        policy, capacity=dict(scenario["capacity"]), options=dict(scenario["options"]), clock=clock
    )
    job_ids: dict[str, str] = {}
    for name, team, share, level, at, owner, checkpoint, run_seconds in WALKTHROUGH_JOBS:
        if clock.now() < T0 + at:
            clock.set(T0 + at)
            batch.sync()
        priority = policy.level(level).schedulingPriority
        payload = _payload(name, checkpoint is not None)
        answer = batch.submit_service_job(
            jobName=name,
            jobQueue=policy.jobQueue,
            serviceJobType="SAGEMAKER_TRAINING",
            quotaShareName=share,
            schedulingPriority=priority,
            serviceRequestPayload=payload,
            tags={
                "quotagov:simRunSeconds": str(run_seconds),
                "quotagov:simCheckpointIntervalSeconds": str(checkpoint or 600),
            },
        )
        job_ids[name] = answer["jobId"]
        jobs.create(
            JobRecord(
                pk=f"sub-{name}",
                state=SubmissionState.SUBMITTED,
                team=team,
                workloadClass=policy.teams[team].classes[0],
                priorityLevel=level,
                jobName=name,
                principal=owner or f"arn:aws:sts::111122223333:assumed-role/{team}/owner",
                quotaShareName=share,
                schedulingPriority=priority,
                checkpointIntervalSeconds=checkpoint,
                serviceRequestPayload=payload,
                instanceType="ml.g5.xlarge",
                instanceCount=1,
                batchJobId=answer["jobId"],
                batchJobArn=answer["jobArn"],
                createdAt=int(T0 + at),
            )
        )
    clock.set(T0 + 900)
    batch.sync()

    slack = FakeSlack(token=BOT_TOKEN, channels=["C0GOVERN", "C0PLATFORM"]).start()
    audit = NullAuditSink()
    wiring.override(
        Settings(
            job_queue=policy.jobQueue,
            approval_channel="C0GOVERN",
            slack_api_url=slack.base_url,
        ),
        clock=clock,
        policy=policy,
        batch=batch,
        jobs=jobs,
        escalations_table=escalations,
        audit=audit,
        slack_credentials=SlackCredentials(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET),
    )
    return World(clock, policy, batch, slack, jobs, escalations, audit, job_ids)
