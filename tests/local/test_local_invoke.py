"""``quotagov invoke FUNCTION --event FILE`` runs every sample event of ``events/``.

Each file ``events/<handler module>[-<variant>].json`` is run through the function
whose template handler is ``quotagov.handlers.<handler module>.handler``, against the
embedded runtime; the handler must return (exit 0) and its result is printed as JSON.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from quotagov_tools.cli import main
from quotagov_tools.commands.invoke import SealError, seal_records
from quotagov_tools.deploy.template import load_template
from quotagov_tools.local.stack import Stack

#: What the expiry schedule answers when nothing is due (no request, no card update).
NOTHING_DUE = {"expired": [], "cardsUpdated": [], "cardsStillFailing": [], "cardsParked": []}

ROOT = Path(__file__).resolve().parents[2]
EVENTS = sorted((ROOT / "events").glob("*.json"))
FUNCTIONS = {
    spec.handler: logical_id
    for logical_id, spec in Stack(
        load_template(ROOT / "template.yaml"),
        {"JobQueueArn": "arn:aws:batch:eu-west-1:111122223333:job-queue/q"},
    )
    .functions()
    .items()
}


def function_for(event_file: Path) -> str:
    """The logical id whose handler module names the event file."""
    module = event_file.stem.split("-", 1)[0]
    return FUNCTIONS[f"quotagov.handlers.{module}.handler"]


def test_every_event_file_names_a_function_of_the_template() -> None:
    assert EVENTS, "events/ has sample events"
    for event_file in EVENTS:
        assert function_for(event_file) in FUNCTIONS.values()


#: What each sample event gives in a fresh runtime (no jobs, no escalations yet):
#: API answers by status code and a part of the body, other results by their fields.
API_ANSWERS = {
    "jobs_api-submit.json": (202, '"state":"QUEUED"'),
    "jobs_api-get.json": (404, "no submission 8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f"),
    "jobs_api-list.json": (200, '"jobs":[],"nextToken":null'),
    "jobs_api-disposition.json": (404, "no job '8d3f4c1e-0f3a-5b7e-9c2d-1a2b3c4d5e6f'"),
    "escalations_api-request.json": (422, "'sub-bg-2' is not a job submitted by quotagov"),
    # recorded long ago with another signing secret: stale, so refused
    "slack_interactions-approve.json": (401, "invalid Slack request signature"),
    "slack_interactions-http-api-v2.json": (401, "invalid Slack request signature"),
    "slack_interactions-function-url.json": (401, "invalid Slack request signature"),
}


#: The SQS samples (messages quotagov's functions hand each other, sealed by their
#: sender) and what each gives when ``--seal`` seals it as its producer would.
SEALED_SAMPLES: dict[str, dict[str, list[Any]]] = {
    # the decision is appended, nothing fails
    "audit_trail-decisions.json": {"batchItemFailures": []},
    # a notice about a submission that does not exist: nobody to tell, acknowledged
    "apply_decisions-owner-notice.json": {"batchItemFailures": []},
    # an escalation and a disposition that do not exist: nothing to act on, acknowledged
    "apply_decisions-handoffs.json": {"batchItemFailures": []},
    # a reference to an unknown submission and a whole submission are poison:
    # acknowledged, not retried
    "submit_worker-batch.json": {"batchItemFailures": []},
}

#: CloudTrail calls that are not Batch calls: answered at once, no settling window.
ANSWERED_AT_ONCE = {
    # a lambda:InvokeFunction on a quotagov function by someone else than its trigger
    "audit_trail-direct-invoke.json": {
        "chain": "ml-gov-queue",
        "findings": ["DIRECT_INVOCATION"],
        "kind": "CHANGE",
        "seq": 1,
        "status": "recorded",
    },
    # ssm:PutParameter on the policy parameter of a stack named quotagov; the local
    # stack's is /quotagov-local/policy, so the call is not about this stack's policy
    "audit_trail-put-policy-parameter.json": {
        "reason": "detail: parameter '/quotagov/policy' is not the policy parameter "
        "'/quotagov-local/policy'",
        "status": "rejected",
    },
}


def check_answer(event_file: Path, result: dict[str, Any]) -> None:
    """``result`` is what ``event_file`` must give in a fresh runtime."""
    name = event_file.name
    if name in API_ANSWERS:
        status, fragment = API_ANSWERS[name]
        assert (result["statusCode"], fragment in result["body"]) == (status, True), result
    elif name in SEALED_SAMPLES:
        # recorded, so without proof of sender: every message refused (SQS keeps it)
        records = json.loads(event_file.read_text())["Records"]
        assert result == {
            "batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in records]
        }
    elif name == "audit_digest-scheduled.json":
        # a fresh runtime has no chain yet, so nothing to digest
        assert result == {"digests": []}
    elif name in ANSWERED_AT_ONCE:
        assert result == ANSWERED_AT_ONCE[name]
    elif name.startswith("audit_trail-"):
        # held for the settling window (AUDIT_SETTLE_SECONDS, 300 s in the template)
        detail = json.loads(event_file.read_text())["detail"]
        made = datetime.fromisoformat(detail["eventTime"].replace("Z", "+00:00"))
        until = (made + timedelta(seconds=300)).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert result == {"status": "held", "eventId": detail["eventID"], "heldUntil": until}
    elif name.startswith("job_state-"):
        event = json.loads(event_file.read_text())
        assert result == {
            "batchJobId": event["detail"]["jobId"],
            "disposition": None,
            "outcome": "foreign",
            "submissionId": None,
        }
    elif name == "escalation_expiry-scheduled.json":
        assert result == NOTHING_DUE
    elif name == "apply_decisions-scheduled.json":
        assert result == {"retried": {}, "ownerNotices": {}}
    elif name == "reconciler-scheduled.json":
        # nothing is QUEUED in a fresh runtime
        empty: list[str] = []
        assert result == dict.fromkeys(
            ("requeued", "submitted", "failed", "deferred", "unchanged", "unnotified", "refused"),
            empty,
        )
    else:
        raise AssertionError(f"no expected answer for {name}: add one")


@pytest.mark.slow  # a whole local runtime (moto, fake Slack server) per sample event
# a handler that flushes no metric makes Powertools warn on stderr: an error here
@pytest.mark.filterwarnings("error:No application metrics to publish:UserWarning")
@pytest.mark.parametrize("event_file", EVENTS, ids=[e.name for e in EVENTS])
def test_invoke_runs_the_sample_event(
    event_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["invoke", function_for(event_file), "--event", str(event_file)])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    check_answer(event_file, json.loads(captured.out))


@pytest.mark.slow  # a whole local runtime (moto, fake Slack server) per sample event
@pytest.mark.parametrize("name", sorted(SEALED_SAMPLES))
def test_invoke_seal_gets_the_sample_accepted(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    event = ROOT / "events" / name
    assert main(["invoke", function_for(event), "--event", str(event), "--seal"]) == 0
    assert json.loads(capsys.readouterr().out) == SEALED_SAMPLES[name]


def test_seal_records_names_the_queue_purpose_and_the_producer() -> None:
    """Purpose from the queue the ARN names; sender from SenderId when it names a
    producer of that queue, else the first producer; non-SQS records untouched."""
    url = "https://sqs.eu-west-1.amazonaws.com/111122223333/quotagov-local-ApplyQueue"
    environments = {
        "ApplyDecisionsFunction": {"OWNER_NOTICE_QUEUE_URL": "x"},
        "EscalationsApiFunction": {"APPLY_QUEUE_URL": url},
        "SlackInteractionsFunction": {"APPLY_QUEUE_URL": url},
    }
    arn = "arn:aws:sqs:eu-west-1:111122223333:quotagov-local-ApplyQueue"

    def record(sender: str) -> dict[str, Any]:
        return {
            "eventSource": "aws:sqs",
            "eventSourceARN": arn,
            "body": "{}",
            "attributes": {"SenderId": f"AROAX:{sender}"},
        }

    event = {"Records": [record("SlackInteractionsFunction"), record("someone"), {"x": 1}]}
    sealed = seal_records(
        event,
        environments,
        "ApplyDecisionsFunction",
        lambda *parts: json.dumps(parts),
        12.5,
    )
    bodies = [json.loads(r["body"]) for r in sealed["Records"][:2]]
    assert bodies == [
        ["apply", "SlackInteractionsFunction", 12.5, "{}"],
        ["apply", "EscalationsApiFunction", 12.5, "{}"],
    ]
    assert sealed["Records"][2] == {"x": 1}
    assert event["Records"][0]["body"] == "{}"  # the input is left as it was
    other = {"Records": [{**record("x"), "eventSourceARN": arn.replace("Apply", "Other")}]}
    with pytest.raises(SealError, match=r"Records\[0\]\.eventSourceARN: .*names no sealed"):
        seal_records(other, environments, "ApplyDecisionsFunction", lambda *p: "", 0.0)
    with pytest.raises(SealError, match=r"Records\[0\]\.body: must be a string"):
        seal_records(
            {"Records": [{**record("x"), "body": 1}]}, environments, "A", lambda *p: "", 0.0
        )


@pytest.mark.slow  # a whole local runtime (moto, fake Slack server)
def test_invoke_resigns_a_recorded_slack_request(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    event = ROOT / "events" / "slack_interactions-approve.json"
    assert main(["invoke", function_for(event), "--event", str(event), "--resign-slack"]) == 0
    result = json.loads(capsys.readouterr().out)
    # signed anew: verified, then the unknown escalation is answered privately (200)
    assert result["statusCode"] == 200, result


@pytest.mark.slow  # two quotagov subprocesses
def test_invoke_cli_exit_codes(tmp_path: Path) -> None:
    """The real command line: unknown function and unreadable event are usage errors (2)."""
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    run = [sys.executable, "-m", "quotagov_tools.cli", "invoke"]
    unknown = subprocess.run(
        [*run, "NoSuchFunction", "--event", str(EVENTS[0])],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert unknown.returncode == 2
    assert "unknown function 'NoSuchFunction'" in unknown.stderr
    assert "JobsApiFunction" in unknown.stderr
    bad = subprocess.run(
        [*run, "JobsApiFunction", "--event", str(broken)], cwd=ROOT, capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert "broken.json" in bad.stderr


def test_function_specs_carry_the_template_memory_and_timeout() -> None:
    functions = Stack(
        load_template(ROOT / "template.yaml"),
        {"JobQueueArn": "arn:aws:batch:eu-west-1:111122223333:job-queue/q"},
    ).functions()
    template = load_template(ROOT / "template.yaml")
    default_memory = template["Globals"]["Function"]["MemorySize"]
    for logical_id, spec in functions.items():
        properties = template["Resources"][logical_id]["Properties"]
        assert spec.memory_mb == properties.get("MemorySize", default_memory), logical_id
    assert {spec.memory_mb for spec in functions.values()} == {512, 1024}


def test_the_docs_events_table_lists_every_prefix_with_its_function() -> None:
    # the table under "quotagov invoke" on the docs site's "Run it locally" page
    # (docs/local.md; it was the README's): one row per handler module of events/
    page = (ROOT / "docs" / "local.md").read_text()
    rows = re.findall(r"^\| `(\w+)-\*` \| `(\w+)` \|", page, flags=re.MULTILINE)
    prefixes = {e.stem.split("-", 1)[0] for e in EVENTS}
    assert sorted(p for p, _ in rows) == sorted(prefixes)
    for prefix, function in rows:
        assert FUNCTIONS[f"quotagov.handlers.{prefix}.handler"] == function
