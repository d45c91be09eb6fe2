"""Every handler takes every event shape its trigger can send, and local
commands never leave loopback.

One local runtime (the real template) for the module; each handler gets the shapes
its trigger, ``sam local generate-event`` or an operator's test event can produce.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from quotagov_tools.local.fake_slack import sign_event
from quotagov_tools.local.loopback import LoopbackGuard, NonLoopbackError, is_loopback
from quotagov_tools.local.runtime import LocalRuntime, RuntimeOptions

#: What the expiry schedule answers when nothing is due (no request, no card update).
NOTHING_DUE = {"expired": [], "cardsUpdated": [], "cardsStillFailing": [], "cardsParked": []}

ROOT = Path(__file__).resolve().parents[2]

#: What ``sam local generate-event cloudwatch scheduled-event`` writes: no ``version``.
SAM_SCHEDULED_EVENT = {
    "id": "cdc73f9d-aea9-11e3-9d5a-835b769c0d9c",
    "detail-type": "Scheduled Event",
    "source": "aws.events",
    "account": "123456789012",
    "time": "1970-01-01T00:00:00Z",
    "region": "us-east-1",
    "resources": ["arn:aws:events:us-east-1:123456789012:rule/ExampleRule"],
    "detail": {},
}


@pytest.fixture(scope="module")
def runtime() -> Iterator[LocalRuntime]:
    with LocalRuntime(RuntimeOptions()) as rt:
        yield rt


def _invoke(runtime: LocalRuntime, function: str, event: Any) -> Any:
    record = runtime.invoke(function, event)
    assert record.ok, record.error
    return record.result


@pytest.mark.parametrize("function", ["SubmitWorkerFunction", "JobStateFunction"])
def test_an_empty_sqs_batch_has_no_failures(runtime: LocalRuntime, function: str) -> None:
    assert _invoke(runtime, function, {"Records": []}) == {"batchItemFailures": []}


def test_the_submit_worker_leaves_out_records_it_cannot_report(runtime: LocalRuntime) -> None:
    event = {"Records": [{"body": "{}"}, "not a record", {"messageId": 7}]}
    assert _invoke(runtime, "SubmitWorkerFunction", event) == {"batchItemFailures": []}


@pytest.mark.parametrize(
    "event",
    [SAM_SCHEDULED_EVENT, {}, {"time": 5, "resources": "x"}],
    ids=["sam-generate-event-without-version", "empty", "unreadable-fields"],
)
def test_the_expiry_schedule_runs_on_every_event_shape(
    runtime: LocalRuntime, event: dict[str, Any]
) -> None:
    assert _invoke(runtime, "EscalationExpiryFunction", event) == NOTHING_DUE


def test_the_shipped_scheduled_event_still_runs(runtime: LocalRuntime) -> None:
    event = json.loads((ROOT / "events/escalation_expiry-scheduled.json").read_text())
    assert _invoke(runtime, "EscalationExpiryFunction", event) == NOTHING_DUE


# -- loopback only ------------------------------------------------------------------------


def test_the_running_runtime_refuses_non_loopback_names_and_addresses(
    runtime: LocalRuntime,
) -> None:
    assert LoopbackGuard.installed()
    with pytest.raises(NonLoopbackError, match=r"'hooks\.slack\.com' is not loopback"):
        socket.getaddrinfo("hooks.slack.com", 443)
    with socket.socket() as sock, pytest.raises(NonLoopbackError, match=r"192\.0\.2\.1"):
        sock.connect(("192.0.2.1", 443))
    # loopback still works: the fake Slack answers
    assert runtime.slack is not None and runtime.slack.base_url.startswith("http://127.0.0.1")
    socket.getaddrinfo("127.0.0.1", 80)


def test_resigned_sample_approval_never_reaches_the_real_slack_webhook(
    runtime: LocalRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    """The sample click's response_url is https://hooks.slack.com/...: answering the
    clicker there fails on the guard (logged), and the click is answered normally."""
    sample = json.loads((ROOT / "events/slack_interactions-approve.json").read_text())
    event = sign_event(sample, runtime.signing_secret, runtime.clock.now())
    caplog.clear()
    result = _invoke(runtime, "SlackInteractionsFunction", event)
    assert result["statusCode"] == 200
    refused = [r.getMessage() for r in caplog.records if r.name == "slack_sdk.webhook.client"]
    assert refused and all("'hooks.slack.com' is not loopback" in m for m in refused)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("hooks.slack.com", False),
        ("localhost.evil.example", False),
        ("", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_serve_refuses_a_non_loopback_host() -> None:
    from quotagov_tools.local.http_server import LocalServer

    with pytest.raises(ValueError, match=r"'0\.0\.0\.0' is not a loopback address"):
        LocalServer(None, host="0.0.0.0", port=0)  # type: ignore[arg-type]


# -- numbers DynamoDB cannot store, in a CloudTrail event (found by the property test) --


@pytest.mark.parametrize(
    ("value", "stored"),
    [(10**40, "1" + "0" * 40), (1e300, "1E+300"), (10**200, "1" + "0" * 200)],
    ids=["41-digit-int", "1e300", "201-digit-int"],
)
def test_a_cloudtrail_call_with_an_unstorable_number_is_still_audited(
    runtime: LocalRuntime, value: Any, stored: str
) -> None:
    """An admin's (refused) UpdateQuotaShare with ``maxCapacity`` beyond DynamoDB's
    numbers once failed the audit function on every retry, so the call never reached
    the hash chain. Now it is recorded, the number kept as its text, the chain intact."""
    import boto3

    from quotagov.adapters.dynamodb_audit import DynamoDBChainStore
    from quotagov.governance.audit.chain import verify_chain

    event = json.loads((ROOT / "events/audit_trail-update-quota-share.json").read_text())
    event["id"] = event["detail"]["eventID"] = f"unstorable-{stored[:8]}-{len(stored)}"
    limits = [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": value}]
    event["detail"]["requestParameters"]["capacityLimits"] = limits
    result = _invoke(runtime, "AuditFunction", event)
    # held for its settling window (then written by the release schedule), or recorded
    # at once as late when this runtime's clock is already past that window
    assert result["status"] in {"held", "recorded"}, result
    made = datetime.fromisoformat(event["detail"]["eventTime"].replace("Z", "+00:00"))
    runtime.advance_to(max(runtime.clock.now(), made.timestamp() + 360))
    table = runtime.environments["AuditFunction"]["AUDIT_TABLE"]
    store = DynamoDBChainStore(table, boto3.client("dynamodb"))
    records = list(store.records("ml-gov-queue"))
    [record] = [r for r in records if r.get("eventId") == event["id"]]
    assert f'"maxCapacity": "{stored}"' in json.dumps(record, default=str)
    count, broken = verify_chain("ml-gov-queue", records, store.markers("ml-gov-queue"))
    assert (count, broken) == (len(records), None)
