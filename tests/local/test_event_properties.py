"""Property: each handler, given mutated versions of the events its trigger
sends (``events/*.json``, mutated where the sender has a say, see
:func:`mutated_events`), never raises and never answers an API request with a 5xx;
and whatever it stored reads back whole.

One local runtime (the real template, moto, the simulated Batch) for the module; the
sample events are the ones ``quotagov invoke`` and the README use. After each example
every item of the jobs table must read back as a
:class:`~quotagov.governance.model.job.JobRecord`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from quotagov.adapters.dynamodb_jobs import FOREIGN_PREFIX, DynamoDBJobsRepository
from quotagov_tools.local.fake_slack import sign_event
from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions
from support.mutations import mutated

ROOT = Path(__file__).resolve().parents[2]
EVENTS = sorted((ROOT / "events").glob("*.json"))
FUNCTION_OF = {
    "apply_decisions": "ApplyDecisionsFunction",
    "audit_digest": "AuditDigestFunction",
    "audit_trail": "AuditFunction",
    "escalation_expiry": "EscalationExpiryFunction",
    "escalations_api": "EscalationsApiFunction",
    "job_state": "JobStateFunction",
    "jobs_api": "JobsApiFunction",
    "reconciler": "ReconcilerFunction",
    "slack_interactions": "SlackInteractionsFunction",
    "submit_worker": "SubmitWorkerFunction",
}
SAMPLES = [(FUNCTION_OF[p.name.split("-", 1)[0]], json.loads(p.read_text())) for p in EVENTS]
API_FUNCTIONS = {"JobsApiFunction", "EscalationsApiFunction", "SlackInteractionsFunction"}


@pytest.fixture(scope="module")
def runtime() -> Iterator[LocalRuntime]:
    with LocalRuntime(RuntimeOptions()) as rt:
        yield rt


#: The parts of an API Gateway REST event a client controls; API Gateway writes the rest
#: (``path``, ``httpMethod``, ``resource``, the request context) itself.
CLIENT_PARTS = ("headers", "multiValueHeaders", "queryStringParameters", "pathParameters")


@st.composite
def mutated_events(draw: st.DrawFn) -> tuple[str, Any]:
    """A sample event with mutations where its sender has a say.

    API requests: the body (inside its JSON, or replaced), the headers, the query string,
    the path parameters and the caller identity. SQS batches: each record's body and
    message attributes. EventBridge events (job state, CloudTrail, the schedule): anywhere.
    """
    function, sample = draw(st.sampled_from(SAMPLES))
    changed = json.loads(json.dumps(sample))
    if function in API_FUNCTIONS:
        part = draw(st.sampled_from(["body", "body", *CLIENT_PARTS, "identity"]))
        if part == "body" and str(changed.get("body") or "").startswith(("{", "[")):
            changed["body"] = json.dumps(draw(mutated(json.loads(changed["body"]))))
        elif part == "body":
            changed["body"] = draw(st.one_of(st.none(), st.text(max_size=60)))
        elif part == "identity":
            # REST v1 events carry the caller in requestContext.identity; HTTP API v2 and
            # function URL events (the Slack route's other shapes) in requestContext.http
            context = changed.get("requestContext") or {}
            key = "identity" if "identity" in context else "http"
            if key in context:
                context[key] = draw(mutated(context[key], max_changes=2))
        else:
            changed[part] = draw(mutated(changed.get(part) or {"x": "y"}, max_changes=2))
        return function, changed
    if "Records" in changed:
        for record in changed["Records"]:
            if draw(st.booleans()) and str(record.get("body", ""))[:1] == "{":
                record["body"] = json.dumps(draw(mutated(json.loads(record["body"]))))
            else:
                record["messageAttributes"] = draw(
                    mutated(record.get("messageAttributes") or {"x": {}}, max_changes=2)
                )
        return function, changed
    return function, draw(mutated(changed, max_changes=2))


def _records_read_back_whole(runtime: LocalRuntime) -> None:
    table = runtime.environments["JobsApiFunction"]["JOBS_TABLE"]
    client = boto3.client("dynamodb")
    jobs = DynamoDBJobsRepository(table, runtime.clock, client)
    for item in client.scan(TableName=table)["Items"]:
        if item["pk"]["S"].startswith(FOREIGN_PREFIX):
            continue  # the state of a job quotagov did not submit (job_state), not a record
        assert jobs.get(item["pk"]["S"]) is not None


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=mutated_events())
def test_mutated_events_never_raise_nor_answer_5xx(
    runtime: LocalRuntime, case: tuple[str, Any]
) -> None:
    function, sample = case
    if function == "SlackInteractionsFunction" and isinstance(sample, dict):
        # a body the signer cannot read is sent as mutated
        with contextlib.suppress(TypeError, ValueError, AttributeError):
            sample = sign_event(sample, runtime.signing_secret, runtime.clock.now())
    record = runtime.invoke(function, sample)
    event(f"{function} {'ok' if record.ok else 'raised'}")
    assert record.ok, (function, record.error)
    if function in API_FUNCTIONS:
        status = record.result["statusCode"]
        event(f"{function} {status}")
        assert status < 500, (function, record.result)
    runtime.pump()
    _records_read_back_whole(runtime)
