"""``redrive`` of the failed-events queue in the embedded runtime: the real AuditFunction.

An event the audit function failed on after its retries sits in ``FailedEventsQueue``
(Lambda's ``OnFailure`` record); the replay invokes the function again, once, and the
audit records it once however often the redrive runs. A forged record that names a
function outside the stack, or carries no EventBridge event, is refused and left.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

import pytest

from quotagov.adapters.sqs_parked import SqsParkedQueue
from quotagov.governance.ports.parked import InvocationFailedError
from quotagov.governance.redrive.replay import (
    Outcome,
    ParkedKind,
    RedriveDeps,
    redrive,
    unqualified,
)
from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions
from support.events import load_event


class RuntimeInvoker:
    """:class:`FunctionInvoker` over the runtime: function ARN -> logical id -> handler."""

    def __init__(self, runtime: LocalRuntime) -> None:
        self._runtime = runtime
        self._by_arn = {
            runtime.stack.get_att(logical_id, "Arn"): logical_id for logical_id in runtime.functions
        }
        self.calls: list[str] = []

    @property
    def arns(self) -> frozenset[str]:
        return frozenset(self._by_arn)

    def invoke(self, function_arn: str, payload: Mapping[str, Any]) -> Any:
        function = self._by_arn[function_arn]
        self.calls.append(function)
        record = self._runtime.invoke(function, dict(payload), trigger="redrive")
        if not record.ok:
            raise InvocationFailedError(f"{function}: {record.error}")
        return record.result


@pytest.fixture
def runtime() -> Iterator[LocalRuntime]:
    with contextlib.redirect_stdout(io.StringIO()):
        rt = LocalRuntime(RuntimeOptions()).start()
    try:
        yield rt
    finally:
        rt.stop()


def _failure(function_arn: str, payload: Any) -> str:
    return json.dumps(
        {
            "version": "1.0",
            "timestamp": "2026-12-01T00:00:00.000Z",
            "requestContext": {
                "requestId": "0f1e2d3c-0000-4000-8000-000000000001",
                "functionArn": function_arn + ":$LATEST",
                "condition": "RetriesExhausted",
                "approximateInvokeCount": 3,
            },
            "requestPayload": payload,
            "responseContext": {"statusCode": 200, "functionError": "Unhandled"},
            "responsePayload": {"errorMessage": "Task timed out after 60.00 seconds"},
        }
    )


def test_failed_events_are_replayed_once_and_forgeries_refused(runtime: LocalRuntime) -> None:
    url = str(runtime.stack.ref("FailedEventsQueue"))
    invoker = RuntimeInvoker(runtime)
    audit_arn = runtime.stack.get_att("AuditFunction", "Arn")
    event = load_event("audit_trail-update-quota-share")
    sqs = runtime.sqs
    sqs.send_message(QueueUrl=url, MessageBody=_failure(audit_arn, event))
    foreign = "arn:aws:lambda:eu-west-1:111122223333:function:ops-admin-tool"
    sqs.send_message(QueueUrl=url, MessageBody=_failure(foreign, event))
    sqs.send_message(QueueUrl=url, MessageBody=_failure(audit_arn, {"not": "an event"}))
    records_before = len(runtime.audit_records())

    def run() -> list[Any]:
        deps = RedriveDeps(
            parked=SqsParkedQueue(url, sqs),
            audit=runtime.composition_of("ReconcilerFunction").audit,
            clock=runtime.clock,
            job_queue=runtime.job_queue,
            invoker=invoker,
            functions=frozenset(unqualified(a) for a in invoker.arns),
        )
        return redrive(ParkedKind.FAILED_EVENTS, deps)

    first = run()
    runtime.pump()  # the audit records travel through the audit queue
    made = datetime.fromisoformat(event["detail"]["eventTime"].replace("Z", "+00:00"))
    runtime.advance_to(made.timestamp() + 360)  # past the change's settling window

    outcomes = sorted((r.outcome, r.subject, r.detail) for r in first)
    assert outcomes == sorted(
        [
            (Outcome.REPLAYED, audit_arn, f"replayed event {event['id']}"),
            (Outcome.REFUSED, foreign, "not a function of this stack: not invoked"),
            (Outcome.REFUSED, audit_arn, "requestPayload is not an EventBridge event"),
        ]
    )
    assert invoker.calls == ["AuditFunction"]
    after_first = runtime.audit_records()
    changes = [r for r in after_first[records_before:] if r.get("action") != "MessageRedriven"]
    redriven = [r for r in after_first if r.get("action") == "MessageRedriven"]
    assert len(changes) == 1  # the quota-share change, recorded by the replay
    assert len(redriven) == 3
    left = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    assert len(left) == 2  # the two refused ones stay parked
    for m in left:
        sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
        )

    # The same failure parked again (a second OnFailure delivery): the audit dedups it.
    sqs.send_message(QueueUrl=url, MessageBody=_failure(audit_arn, event))
    second = run()
    runtime.pump()  # the audit records travel through the audit queue

    assert sorted(r.outcome for r in second) == [Outcome.REFUSED, Outcome.REFUSED, Outcome.REPLAYED]
    after_second = runtime.audit_records()
    assert [r for r in after_second if r.get("action") != "MessageRedriven"] == [
        r for r in after_first if r.get("action") != "MessageRedriven"
    ]
    assert len([r for r in after_second if r.get("action") == "MessageRedriven"]) == 4
    assert runtime.audit_verify()
