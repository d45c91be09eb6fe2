"""Escalation latency: impact preview size scaling and the Slack click round trip.

Slack wants the answer to an interaction within 3 seconds (Slack, "Handling user
interaction in your Slack apps",
https://docs.slack.dev/interactivity/handling-user-interaction), and the
preview runs before the request is posted. This script prints:

- the impact-preview time for queues of N active jobs (simulated Batch, in-process);
- the ``POST /slack/interactions`` handler time for approval clicks (signature check,
  conditional DynamoDB write on moto, UpdateServiceJob on the simulated Batch,
  chat.update on the loopback fake Slack), p50/p95/max.

Run: ``.venv/bin/python benchmarks/escalation_latency.py [--jobs 50 200 500] [--clicks 30]``.
Figures depend on the machine; moto and the fake Slack are slower than the real
services' network round trips are fast, so treat them as an upper bound of our code.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import boto3
import yaml
from moto import mock_aws

ROOT = Path(__file__).resolve().parents[1]
T0 = 1_764_547_200.0
SECRET = "benchmark-signing-secret"
TOKEN = "xoxb-benchmark"
ALICE = "arn:aws:sts::111122223333:assumed-role/researcher/alice"


def _payload(name: str) -> str:
    return json.dumps(
        {
            "TrainingJobName": name,
            "RoleArn": "arn:aws:iam::111122223333:role/sm-exec",
            "AlgorithmSpecification": {"TrainingImage": "img:1", "TrainingInputMode": "File"},
            "ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1},
            "OutputDataConfig": {"S3OutputPath": "s3://bucket/out/"},
            "CheckpointConfig": {"S3Uri": f"s3://bucket/ckpt/{name}/"},
            "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        }
    )


def _setup(active_jobs: int) -> dict[str, Any]:
    from quotagov import wiring
    from quotagov.adapters.dynamodb_escalations import EscalationsTable, create_escalations_table
    from quotagov.adapters.dynamodb_jobs import DynamoDBJobsRepository, jobs_table_definition
    from quotagov.adapters.slack import SlackCredentials
    from quotagov.clock import ManualClock
    from quotagov.governance.model.job import JobRecord, SubmissionState
    from quotagov.policy import parse_policy
    from quotagov.settings import Settings
    from quotagov_tools.batch_simulated import SimulatedBatch
    from quotagov_tools.local.fake_slack import FakeSlack

    data = yaml.safe_load((ROOT / "src/quotagov/examples/policy.yaml").read_text())
    data["teams"]["research"]["escalationBudget"] = {"count": 100000, "periodSeconds": 604800}
    policy = parse_policy(data)
    clock = ManualClock(T0)
    client = boto3.client("dynamodb", region_name="eu-west-1")
    client.create_table(**jobs_table_definition("jobs"))
    create_escalations_table(client, "escalations")
    # the audit table (pk/sk, as template.yaml's AuditTable): approvals append to it
    client.create_table(
        TableName="audit",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
    )
    jobs = DynamoDBJobsRepository("jobs", clock, client)
    batch = SimulatedBatch.from_policy(
        policy, capacity={"ml.g5.xlarge": max(3, active_jobs // 4)}, clock=clock
    )
    for n in range(active_jobs):
        name = f"job-{n}"
        answer = batch.submit_service_job(
            jobName=name,
            jobQueue=policy.jobQueue,
            serviceJobType="SAGEMAKER_TRAINING",
            quotaShareName="background",
            schedulingPriority=10,
            serviceRequestPayload=_payload(name),
        )
        jobs.create_if_absent(
            JobRecord(
                pk=f"sub-{n}",
                state=SubmissionState.SUBMITTED,
                team="research",
                jobName=name,
                principal=ALICE,
                quotaShareName="background",
                schedulingPriority=10,
                checkpointIntervalSeconds=600,
                batchJobId=answer["jobId"],
            )
        )
        clock.advance(1)
    batch.sync()
    clock.advance(900)
    batch.sync()
    slack = FakeSlack(token=TOKEN).start()
    wiring.override(
        Settings(
            job_queue=policy.jobQueue,
            approval_channel="C0GOVERN",
            slack_api_url=slack.base_url,
            audit_table="audit",
        ),
        clock=clock,
        policy=policy,
        batch=batch,
        jobs=jobs,
        escalations_table=EscalationsTable(client, "escalations"),
        slack_credentials=SlackCredentials(bot_token=TOKEN, signing_secret=SECRET),
    )
    return {"clock": clock, "batch": batch, "slack": slack, "policy": policy}


def _click_event(escalation_id: str, now: float) -> dict[str, Any]:
    payload = {
        "type": "block_actions",
        "user": {"id": "U0CAROL"},
        "actions": [{"action_id": "escalation_approve", "value": escalation_id}],
    }
    body = urlencode({"payload": json.dumps(payload)}).encode()
    ts = str(int(now))
    signature = (
        "v0="
        + hmac.new(SECRET.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256).hexdigest()
    )
    return {
        "body": base64.b64encode(body).decode(),
        "isBase64Encoded": True,
        "httpMethod": "POST",
        "path": "/slack/interactions",
        "resource": "/slack/interactions",
        "headers": {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature},
        "requestContext": {"requestId": "bench", "stage": "Prod", "identity": {}},
    }


class _Context:
    function_name = "bench"
    function_version = "$LATEST"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:eu-west-1:111122223333:function:bench"
    aws_request_id = "bench"


def _quantiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"p50 {statistics.median(ordered) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms  "
        f"max {ordered[-1] * 1000:7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, nargs="+", default=[20, 100, 300])
    parser.add_argument("--clicks", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(key, "testing")

    from quotagov import wiring
    from quotagov.governance.escalations import EscalationRequest, JobRecordLookup
    from quotagov.handlers import slack_interactions

    for active in args.jobs:
        with mock_aws():
            world = _setup(active)
            use_case = wiring.services().escalations
            waiting = [
                job["jobId"]
                for job in world["batch"].list_service_jobs(
                    jobQueue=world["policy"].jobQueue, jobStatus="RUNNABLE"
                )["jobSummaryList"]
            ]
            lookup = JobRecordLookup(wiring.services().jobs)
            previews = []
            for job_id in waiting[:5]:
                job = lookup.find(job_id)
                assert job is not None
                description = world["batch"].describe_service_job(jobId=job_id)
                start = time.perf_counter()
                use_case.deps.previewer.preview(job, description, 50)
                previews.append(time.perf_counter() - start)
            clicks = []
            for job_id in waiting[: args.clicks]:
                escalation = use_case.request(EscalationRequest(job_id, "high", "benchmark", ALICE))
                event = _click_event(escalation.escalation_id, world["clock"].now())
                start = time.perf_counter()
                response = slack_interactions.handler(event, _Context())  # type: ignore[arg-type]
                clicks.append(time.perf_counter() - start)
                assert response["statusCode"] == 200
            print(
                f"{active:4d} active jobs ({len(waiting)} RUNNABLE): "
                f"preview {_quantiles(previews)} | approval click {_quantiles(clicks)} "
                f"({len(clicks)} clicks)"
            )
            world["slack"].stop()
            wiring.reset()


if __name__ == "__main__":
    main()
