"""``quotagov serve``: the whole flow over HTTP only, as a user with curl would drive it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.payloads import training_job_request
from support.principals import ALICE
from support.slack import slack_signature

ROOT = Path(__file__).resolve().parents[2]
SECRET = "serve-test-signing-secret"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "SLACK_SIGNING_SECRET": SECRET}
    process = subprocess.Popen(
        [sys.executable, "-m", "quotagov_tools.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "listening on" in line:
                break
        else:
            raise AssertionError("quotagov serve exited before listening")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def call(
    base_url: str,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    data = None
    all_headers = dict(headers or {})
    if isinstance(body, (dict, list)):
        data = json.dumps(body).encode()
        all_headers.setdefault("Content-Type", "application/json")
    elif isinstance(body, str):
        data = body.encode()
    request = urllib.request.Request(base_url + path, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            status = response.status
    except urllib.error.HTTPError as error:
        text = error.read().decode()
        status = error.code
    try:
        return status, json.loads(text) if text else None
    except ValueError:
        return status, text


def as_alice() -> dict[str, str]:
    return {"X-Quotagov-Principal": ALICE}


def submit(base_url: str, name: str) -> str:
    payload = training_job_request(
        name,
        role_arn="arn:aws:iam::111122223333:role/sm-exec-research",
        image="img:1",
        output_path="s3://bucket/out/",
        volume_gb=None,
        max_runtime_seconds=None,
        checkpoint_uri=f"s3://bucket/ckpt/{name}/",
        tags={"quotagov:simRunSeconds": "3600"},
    )
    status, answer = call(
        base_url,
        "POST",
        "/jobs",
        {
            "team": "research",
            "workloadClass": "exploratory",
            "priorityLevel": "standard",
            "jobName": name,
            "quotaShareName": "background",
            "checkpointIntervalSeconds": 600,
            "serviceRequestPayload": payload,
        },
        as_alice(),
    )
    assert status == 202, answer
    return str(answer["submissionId"])


def signed_click(base_url: str, message: dict[str, Any], user: str, secret: str) -> int:
    approve = next(
        (block["block_id"], element)
        for block in message["blocks"]
        for element in block.get("elements") or []
        if element.get("action_id") == "escalation_approve"
    )
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": "erin", "name": "erin", "team_id": "T0DEMO"},
        "team": {"id": "T0DEMO", "domain": "demo"},
        "api_app_id": "A0APP",
        "container": {
            "type": "message",
            "message_ts": message["ts"],
            "channel_id": message["channel"],
            "is_ephemeral": False,
        },
        "channel": {"id": message["channel"], "name": "ml-governance"},
        "message": {"type": "message", "ts": message["ts"], "text": message["text"]},
        "actions": [
            {
                "type": "button",
                "action_id": "escalation_approve",
                "block_id": approve[0],
                "value": approve[1].get("value"),
                "action_ts": "1.0",
            }
        ],
    }
    body = "payload=" + urllib.parse.quote(json.dumps(payload), safe="")
    _, clock = call(base_url, "GET", "/_local/clock")
    timestamp = str(int(clock["now"]))
    status, _ = call(
        base_url,
        "POST",
        "/slack/interactions",
        body,
        {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": slack_signature(secret, timestamp, body.encode()),
        },
    )
    return status


def test_submit_escalate_approve_in_slack_over_http(base_url: str) -> None:
    # no identity header: API Gateway's IAM authorizer would refuse the request
    status, _ = call(base_url, "POST", "/jobs", {"team": "research"})
    assert status == 403

    first, second = submit(base_url, "serve-bg-1"), submit(base_url, "serve-bg-2")
    status, _ = call(base_url, "POST", "/_local/clock", {"advance": 60})
    assert status == 200
    status, view = call(base_url, "GET", f"/jobs/{second}", headers=as_alice())
    assert status == 200 and view["state"] == "SUBMITTED"
    assert view["batch"]["schedulingPriority"] == 10
    status, view_first = call(base_url, "GET", f"/jobs/{first}", headers=as_alice())
    assert view_first["batch"]["status"] == "RUNNING"

    # a third job waits in the background share; escalate it over the running ones
    third = submit(base_url, "serve-bg-3")
    call(base_url, "POST", "/_local/clock", {"advance": 60})
    status, escalation = call(
        base_url,
        "POST",
        f"/jobs/{third}/escalations",
        {"level": "high", "reason": "conference deadline"},
        as_alice(),
    )
    assert status == 201, escalation
    assert escalation["status"] == "PENDING"

    status, slack = call(base_url, "GET", "/_local/slack/messages")
    assert status == 200
    message = next(
        m
        for m in slack["messages"]
        if m["channel"] == escalation["message"]["channel"]
        and m["ts"] == escalation["message"]["ts"]
    )
    assert "serve-bg-3" in message["text"]

    assert signed_click(base_url, message, "U0ERIN", "forged-secret") == 401
    assert signed_click(base_url, message, "U0ERIN", SECRET) == 200

    _, slack = call(base_url, "GET", "/_local/slack/messages")
    updated = next(m for m in slack["messages"] if m["ts"] == message["ts"])
    assert updated["edits"] >= 1
    assert "APPLIED" in updated["text"] and "U0ERIN" in updated["text"]
    status, view = call(base_url, "GET", f"/jobs/{third}", headers=as_alice())
    assert view["batch"]["schedulingPriority"] == 50
    assert (view["priorityLevel"], view["schedulingPriority"]) == ("high", 50)


def test_slack_click_command_denies_over_http(
    base_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from quotagov_tools.cli import main

    # the README's example submission, as shipped
    example = json.loads((ROOT / "src/quotagov/examples/job.json").read_text())
    status, answer = call(base_url, "POST", "/jobs", example, as_alice())
    assert status == 202, answer
    job = answer["submissionId"]
    call(base_url, "POST", "/_local/clock", {"advance": 30})
    status, escalation = call(
        base_url,
        "POST",
        f"/jobs/{job}/escalations",
        {"level": "high", "reason": "rerun for the camera-ready"},
        as_alice(),
    )
    assert status == 201, escalation
    click = ["slack-click", escalation["escalationId"], "--url", base_url, "--secret"]
    # alice may not decide her own request (four-eyes): Slack gets 200 and a private
    # notice; the command says so and exits 1
    capsys.readouterr()
    assert main([*click, SECRET, "--user", "U0ALICE", "--action", "deny"]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        "refused: You cannot deny this request: four-eyes: you cannot decide your own request.\n"
    )
    _, slack = call(base_url, "GET", "/_local/slack/messages")
    message = next(m for m in slack["messages"] if m["ts"] == escalation["message"]["ts"])
    assert message["edits"] == 0 and "DENIED" not in message["text"]
    # the refusal is ephemeral: for the clicker only, never a message in the channel
    refusal = "You cannot deny this request: four-eyes: you cannot decide your own request."
    assert not any("four-eyes" in m["text"] for m in slack["messages"])
    _, answers = call(base_url, "GET", "/_local/slack/responses")
    assert answers["responses"][-1]["text"] == refusal
    assert answers["responses"][-1]["responseType"] == "ephemeral"
    assert main([*click, "forged", "--user", "U0CAROL", "--action", "deny"]) == 1
    assert "refused: HTTP 401" in capsys.readouterr().err
    assert main([*click, SECRET, "--user", "U0CAROL", "--action", "deny"]) == 0
    assert capsys.readouterr().out.startswith("clicked; the message now reads: ")
    _, slack = call(base_url, "GET", "/_local/slack/messages")
    message = next(m for m in slack["messages"] if m["ts"] == escalation["message"]["ts"])
    assert "DENIED by <@U0CAROL>" in message["text"]
    status, view = call(base_url, "GET", f"/jobs/{job}", headers=as_alice())
    assert (view["priorityLevel"], view["batch"]["schedulingPriority"]) == ("standard", 10)
    # the decided message has no buttons left
    assert main([*click, SECRET, "--user", "U0CAROL", "--action", "approve"]) == 2


def test_local_endpoints_refuse_bad_input(base_url: str) -> None:
    status, answer = call(base_url, "POST", "/_local/clock", {"advance": -5})
    assert (status, answer["faults"]) == (
        400,
        [{"path": "advance", "fault": "must be >= 0 seconds, got -5"}],
    )
    # a new user's finding: the path was repeated inside the fault
    status, answer = call(base_url, "POST", "/_local/clock", {"advance": 691200})
    assert (status, answer["faults"]) == (
        400,
        [{"path": "advance", "fault": "at most 604800 s (7 days) ahead per call, got 691200 s"}],
    )
    _, clock = call(base_url, "GET", "/_local/clock")
    status, answer = call(base_url, "POST", "/_local/clock", {"to": clock["now"] - 1})
    assert (status, answer["faults"][0]["path"]) == (400, "to")
    assert answer["faults"][0]["fault"].startswith("cannot go back from ")
    status, _ = call(base_url, "POST", "/_local/batch/UpdateQuotaShare", {})
    assert status == 403
    status, _ = call(base_url, "GET", "/nowhere")
    assert status == 404


# -- serve robustness ------------------------------------------------------------------


def _raw(base_url: str, request: bytes) -> tuple[int, Any]:
    """Send ``request`` bytes as they are on one connection; (status, JSON body)."""
    import http.client

    host, port = urllib.parse.urlsplit(base_url).netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock)
        response.begin()
        body = response.read()
    return response.status, json.loads(body) if body else None


def _example_body() -> bytes:
    example = json.loads((ROOT / "src/quotagov/examples/job.json").read_text())
    example["clientRequestId"] = "chunked-1"
    return json.dumps(example).encode()


def test_a_chunked_body_is_read(base_url: str) -> None:
    body = _example_body()
    chunks = b"".join(
        f"{len(body[i : i + 100]):x}\r\n".encode() + body[i : i + 100] + b"\r\n"
        for i in range(0, len(body), 100)
    )
    request = (
        b"POST /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"X-Quotagov-Principal: {ALICE}\r\n".encode()
        + b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + chunks
        + b"0\r\n\r\n"
    )
    status, answer = _raw(base_url, request)
    assert status == 202, answer
    assert answer["state"] == "QUEUED"


def test_a_body_that_is_not_utf8_is_answered_not_dropped(base_url: str) -> None:
    body = b'{"team": "research\xff\xfe"}'
    request = (
        b"POST /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"X-Quotagov-Principal: {ALICE}\r\nContent-Length: {len(body)}\r\n".encode()
        + b"Connection: close\r\n\r\n"
        + body
    )
    status, answer = _raw(base_url, request)
    assert status == 400
    assert {"path": "workloadClass", "fault": "Field required"} in answer["faults"]
    assert {"path": "team", "fault": "String should match pattern '^[A-Za-z0-9_-]{1,128}$'"} in (
        answer["faults"]
    )


def test_a_malformed_chunk_is_400(base_url: str) -> None:
    request = (
        b"POST /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
    )
    assert _raw(base_url, request) == (
        400,
        {
            "message": "invalid request",
            "faults": [{"path": "(body)", "fault": "chunk size b'zz' is not hex"}],
        },
    )


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_clock_values_are_refused_and_the_server_keeps_answering(
    base_url: str, value: str
) -> None:
    _, before = call(base_url, "GET", "/_local/clock")
    for key in ("advance", "to"):
        status, answer = call(
            base_url,
            "POST",
            "/_local/clock",
            f'{{"{key}": {value}}}',
            {"Content-Type": "application/json"},
        )
        assert (status, answer) == (
            400,
            {
                "message": "invalid request",
                "faults": [{"path": key, "fault": "must be a finite number"}],
            },
        )
    status, answer = call(base_url, "POST", "/_local/clock", {"advance": "nan"})
    assert (status, answer["faults"]) == (
        400,
        [{"path": "advance", "fault": 'must be a number of seconds, not "nan"'}],
    )
    assert call(base_url, "GET", "/_local/clock") == (200, before)


def test_fifty_concurrent_clients_are_all_answered(base_url: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> int:
        path = "/_local/clock" if i % 2 else "/jobs/no-such-job"
        return call(base_url, "GET", path, headers=as_alice())[0]

    with ThreadPoolExecutor(max_workers=50) as pool:
        statuses = list(pool.map(one, range(50)))
    assert sorted(statuses) == [200] * 25 + [404] * 25


def test_the_openapi_document_is_served(base_url: str) -> None:
    status, document = call(base_url, "GET", "/openapi.json")
    assert status == 200
    assert document == json.loads((ROOT / "docs/openapi.json").read_text())
