"""The sample events under events/ are real envelopes the handler accepts.

The template invokes ``JobStateFunction`` from its EventBridge rule directly; the
handler also takes the SQS-fed form (an SQS queue as the rule's target), kept as a test
fixture because ``events/`` holds one sample per trigger the template declares.
"""

from __future__ import annotations

import json
from pathlib import Path

from quotagov.handlers import job_state
from quotagov.handlers.service_job_events import parse_state_change
from support.events import load_event
from support.lambda_context import LambdaContext

from .conftest import START, World

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_sample_envelopes_parse() -> None:
    for name in ("running", "preempted", "failed-retries-exhausted"):
        event = load_event(f"job_state-{name}")
        facts = parse_state_change(event).to_state_event()
        assert facts.job_id == event["detail"]["jobId"]


def test_sample_sqs_batch_is_processed_without_failures(world: World) -> None:
    batch = json.loads((FIXTURES / "sqs-batch.json").read_text())
    job_id = json.loads(batch["Records"][0]["body"])["detail"]["jobId"]
    world.clock.set(START + 4000)
    world.record("explore-sample", batch_job_id=job_id, instance_count=2)
    assert job_state.handler(batch, LambdaContext()) == {"batchItemFailures": []}
    item = world.store.get("explore-sample")
    assert item is not None
    assert item["jobState"]["preemptionCount"] == 2
    assert item["disposition"]["targetShare"] == "medium"
