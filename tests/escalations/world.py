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

import boto3
import yaml

from quotagov.adapters.dynamodb_escalations import EscalationsTable, create_escalations_table
from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository, jobs_table_definition
from quotagov.adapters.slack import SlackCredentials
from quotagov.clock import ManualClock
from quotagov.governance.model.job import JobRecord, SubmissionState
from quotagov.governance.ports import NullAuditSink
from quotagov.policy import Policy, parse_policy
from quotagov.settings import Settings
from quotagov_tools.batch_simulated import SimulatedBatch
from quotagov_tools.local.fake_slack import FakeSlack
from support.aws import REGION
from support.compose import MemoryReplays, wire
from support.events import load_event, rest_event
from support.lambda_context import LambdaContext
from support.payloads import training_job_request
from support.policies import example_policy_text
from support.principals import ALICE, DAVE, ERIN
from support.slack import click_event, click_payload, slack_signature

ROOT = Path(__file__).resolve().parents[2]

T0 = 1_764_547_200.0  # 2025-12-01T00:00:00Z = walkthrough t=0
BOT_TOKEN = "xoxb-escalation-tests"
SIGNING_SECRET = "escalation-tests-signing-secret"


def walkthrough_policy(**research_overrides: Any) -> Policy:
    """The example policy, with Erin (a research approver) also a research member.

    ``research_overrides`` replace fields of the research team, e.g.
    ``escalationBudget={"count": 1, "periodSeconds": 604800}``.
    """
    data = yaml.safe_load(example_policy_text())
    research = data["teams"]["research"]
    research["members"].append({"principal": ERIN, "slackUserId": "U0ERIN"})
    research.update(research_overrides)
    data["priorityLevels"].append({"name": "critical", "schedulingPriority": 99})
    return parse_policy(data)


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

        event = rest_event(
            "escalations_api-request",
            path=f"/jobs/{submission_id}/escalations",
            path_parameters={"jobId": submission_id},
            body={"level": level, "reason": reason},
            principal=principal,
        )
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
        value: str | None = None,
    ) -> dict[str, Any]:
        """A signed ``block_actions`` click on the escalation's message, as Slack sends it;
        the button ``value`` is the current card's (escalation id and preview round)
        unless ``value`` is given."""
        from quotagov.governance.slack.escalations import button_value

        stored = self.escalations.get(escalation_id)
        assert stored is not None and stored.channel and stored.ts
        payload = click_payload(
            user=user,
            channel=stored.channel,
            ts=stored.ts,
            response_url=self.slack.response_url_for(stored.channel, stored.ts),
            action_id=action,
            value=button_value(stored) if value is None else value,
            block_id=f"escalation:{escalation_id}",
        )

        def forge(body: bytes) -> bytes:
            return body.replace(b"escalation_deny", b"escalation_approve").replace(
                user.encode(), b"U0CAROL"
            )

        ts = int(self.clock.now()) if timestamp is None else timestamp
        return click_event(payload, secret=secret, timestamp=ts, tamper=forge if tamper else None)

    def raw_click_event(self, escalation_id: str, raw: bytes) -> dict[str, Any]:
        """A click event on the escalation's message whose body is ``raw``, signed correctly
        (single-value headers only)."""
        event = self.click_event(escalation_id, "U0CAROL")
        ts = event["headers"]["X-Slack-Request-Timestamp"]
        event["body"] = base64.b64encode(raw).decode()
        event["headers"]["X-Slack-Signature"] = slack_signature(SIGNING_SECRET, ts, raw)
        event["multiValueHeaders"] = None
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
        """Run the two 5-minute schedules with the sample event: the expiry function
        (``expired``), then the apply function's retry run (``retried``)."""
        from quotagov.handlers import apply_decisions, escalation_expiry

        event = load_event("escalation_expiry-scheduled")
        result: dict[str, Any] = escalation_expiry.handler(event, LambdaContext())  # type: ignore[arg-type]
        retry: dict[str, Any] = apply_decisions.handler(event, LambdaContext())  # type: ignore[arg-type]
        return result | retry

    def describe(self, name: str) -> dict[str, Any]:
        answer: dict[str, Any] = self.batch.describe_service_job(jobId=self.job_ids[name])
        return answer


def _payload(name: str, checkpointing: bool) -> str:
    request = training_job_request(
        name,
        role_arn="arn:aws:iam::111122223333:role/sm-exec-research",
        volume_gb=50,
        output_path="s3://example-ml-artifacts-euw1/out/",
        checkpoint_uri=f"s3://example-ml-artifacts-euw1/ckpt/{name}/" if checkpointing else None,
    )
    return json.dumps(request)


#: (job name, team, share, level, submitted at (s from t=0), owner, checkpoint interval,
#: run seconds), as in src/quotagov/examples/aws-walkthrough.json
WALKTHROUGH_JOBS = [
    ("bg-1", "research", "background", "standard", 0, ALICE, 600, 3600),
    ("bg-2", "research", "background", "standard", 0, ALICE, 600, 3600),
    ("res-1", "release", "reserved", "low", 300, None, None, 1800),
    ("med-1", "applied", "medium", "low", 600, DAVE, None, 1200),
]


class ApplyQueueRelay:
    """The ``ApplyQueue`` as the world drains it: each hand-off the Slack and
    escalation API functions send is settled at once by the apply function's own
    composition (:class:`quotagov.composition.ApplyDecisions`), as
    ``ApplyDecisionsFunction`` would on delivery (its SQS and Idempotency layers are
    tested in ``test_handoff_messages.py``). ``sent`` keeps every message."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, message: Any) -> None:
        from quotagov import composition
        from quotagov.governance.apply_messages import ESCALATION, parse_message
        from quotagov.governance.dispositions import settle_disposition

        self.sent.append(dict(message))
        parsed = parse_message(dict(message))
        applying = composition.current(composition.ApplyDecisions)
        if parsed.kind == ESCALATION:
            applying.escalations.settle(parsed.record_id)
        else:
            settle_disposition(parsed.record_id, applying.dispositions)


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
                # as quotagov tags every job it submits (service_job_request)
                "quotagov:submissionId": f"sub-{name}",
                "quotagov:team": team,
                "quotagov:simRunSeconds": str(run_seconds),
                "quotagov:simCheckpointIntervalSeconds": str(checkpoint or 600),
            },
        )
        job_ids[name] = answer["jobId"]
        jobs.create_if_absent(
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
    wire(
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
        slack_signing_secret=SIGNING_SECRET,
        decision_handoff=ApplyQueueRelay(),
        slack_replays=MemoryReplays(),
        # The world predates the message key: its hand-offs and items carry no proofs,
        # which no deployed function accepts (MESSAGE_KEY is required); the local
        # runtime's tests run every hand-off sealed under the stack's message key.
        message_mac=None,
    )
    return World(clock, policy, batch, slack, jobs, escalations, audit, job_ids)
