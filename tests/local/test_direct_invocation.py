"""What the stack cannot refuse is detected: a direct invocation becomes an audit finding.

The attacker holds ``lambda:InvokeFunction`` on the stack's functions (no guardrails
applied). The local runtime runs the invoked handler and puts the CloudTrail data
event a trail logging Lambda data events records on the bus; the template's rule hands
it to the audit function, which appends a sealed record with the finding
``DIRECT_INVOCATION`` naming the caller, and posts it to the platform channel.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from quotagov_tools.local.cloudtrail import lambda_invoke_envelope
from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

pytestmark = pytest.mark.slow  # a whole local runtime

ROOT = Path(__file__).resolve().parents[2]
MALLORY = "arn:aws:sts::111122223333:assumed-role/developer/mallory"


@pytest.fixture(scope="module")
def runtime() -> Iterator[LocalRuntime]:
    with contextlib.redirect_stdout(io.StringIO()):
        rt = LocalRuntime(RuntimeOptions()).start()
    try:
        yield rt
    finally:
        rt.stop()


def _forged_get(job_id: str) -> dict[str, Any]:
    """A REST event naming alice, as API Gateway would have built it for her."""
    event: dict[str, Any] = json.loads((ROOT / "events" / "jobs_api-get.json").read_text())
    event["pathParameters"] = {"jobId": job_id}
    return event


def test_a_direct_invocation_is_recorded_with_the_caller_and_alerted(runtime: LocalRuntime) -> None:
    before = len(runtime.audit_records())
    posted = len(runtime.slack.messages)
    with contextlib.redirect_stdout(io.StringIO()):
        runtime.invoke_directly("JobsApiFunction", _forged_get("no-such-job"), MALLORY)
    records = runtime.audit_records()
    assert len(records) == before + 1
    record = records[-1]
    assert record["action"] == "Invoke"
    assert record["resource"]["type"] == "function"
    assert record["resource"]["arn"] == runtime.stack.get_att("JobsApiFunction", "Arn")
    assert record["actor"]["principalArn"] == MALLORY
    assert record["actor"]["sessionIssuerArn"] == "arn:aws:iam::111122223333:role/developer"
    assert record["actor"]["quotagov"] is False
    assert [f["code"] for f in record["findings"]] == ["DIRECT_INVOCATION"]
    assert record["jobQueue"] == runtime.job_queue.rsplit("/", 1)[-1]
    # the platform channel is told, and the record is sealed in the chain like any other
    alerts = runtime.slack.messages[posted:]
    assert any("Invoke" in m.text and MALLORY in m.text for m in alerts)
    assert runtime.audit_verify()
    delivered = [i for i in runtime.invocations if i.function == "AuditFunction"][-1]
    assert delivered.ok and delivered.result["findings"] == ["DIRECT_INVOCATION"]


def test_the_same_event_delivered_twice_is_one_record(runtime: LocalRuntime) -> None:
    envelope = lambda_invoke_envelope(
        function_arn=runtime.stack.get_att("AuditFunction", "Arn"),
        principal_arn=MALLORY,
        at=runtime.clock.now(),
        role_arns=runtime.stack.role_arns(),
    )
    before = len(runtime.audit_records())
    first = runtime.invoke("AuditFunction", envelope, trigger="eventbridge")
    second = runtime.invoke("AuditFunction", envelope, trigger="eventbridge")
    assert (first.result["status"], second.result["status"]) == ("recorded", "duplicate")
    assert len(runtime.audit_records()) == before + 1


def test_an_invocation_by_the_trigger_is_not_a_finding(runtime: LocalRuntime) -> None:
    envelope = lambda_invoke_envelope(
        function_arn=runtime.stack.get_att("JobStateFunction", "Arn"),
        principal_arn=MALLORY,
        at=runtime.clock.now(),
    )
    envelope["detail"]["userIdentity"] = {"type": "AWSService", "invokedBy": "events.amazonaws.com"}
    before = len(runtime.audit_records())
    answer = runtime.invoke("AuditFunction", envelope, trigger="eventbridge")
    assert answer.result == {"status": "trigger", "function": answer.result["function"]}
    assert len(runtime.audit_records()) == before
