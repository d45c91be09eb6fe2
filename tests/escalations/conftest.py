"""Shared helpers of the escalation tests: Slack request signing and DynamoDB tables."""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

from quotagov.adapters.dynamodb_escalations import EscalationsTable, create_escalations_table

REGION = "eu-west-1"


def slack_signature(secret: str, timestamp: int | str, body: bytes) -> str:
    """``X-Slack-Signature`` exactly as Slack computes it (reference §7.1)."""
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and region, so nothing can reach a real account."""
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "quotagov-tests")


@pytest.fixture
def escalations_table(aws_env: None) -> Iterator[EscalationsTable]:
    """A moto-backed ``EscalationsTable``."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        create_escalations_table(client, "escalations")
        yield EscalationsTable(client, "escalations")


class AtomicMotoServer(ThreadedMotoServer):  # type: ignore[misc]
    """moto's threaded server on loopback, answering one request at a time.

    DynamoDB applies each conditional write atomically. moto's in-memory backend checks
    the condition and writes in separate Python steps, so two server threads can both
    pass the same condition. Serialising the requests gives the tests DynamoDB's
    guarantee; the callers (handler threads) still race each other as concurrent
    Lambda invocations would.
    """

    def _server_entry(self) -> None:
        inner = DomainDispatcherApplication(create_backend_app)
        lock = threading.Lock()

        def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
            with lock:
                return list(inner(environ, start_response))

        self._server = make_server(
            self._ip_address, self._port, app, True, request_handler=MotoRequestHandler
        )
        self._server_ready_event.set()
        self._server.serve_forever()


def start_moto_server() -> tuple[AtomicMotoServer, str]:
    """Start an :class:`AtomicMotoServer` on 127.0.0.1 and a free port; returns it and its URL."""
    server = AtomicMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


@pytest.fixture(scope="module")
def dynamodb_endpoint() -> Iterator[str]:
    """One loopback moto server per test module; every test makes its own tables."""
    with pytest.MonkeyPatch.context() as env:
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            env.setenv(name, "testing")
        env.setenv("AWS_DEFAULT_REGION", REGION)
        server, url = start_moto_server()
        try:
            yield url
        finally:
            server.stop()


@pytest.fixture
def world(dynamodb_endpoint: str, aws_env: None) -> Iterator[Any]:
    """The walkthrough at t=900 (see ``world.py``), wired into ``quotagov.wiring``."""
    from quotagov import wiring

    from .world import build_world, walkthrough_policy

    built = build_world(walkthrough_policy(), dynamodb_endpoint)
    try:
        yield built
    finally:
        built.slack.stop()
        wiring.reset()
