"""The client's transports: SigV4 for a deployed API, the principal header for serve.

A loopback HTTP server records what arrives: a SigV4 request carries a signature for
``execute-api`` in the URL's Region made with the credential chain's keys (and never
the local principal header); the header transport refuses any host that is not
loopback before a byte is sent; the command finds the URL in its documented order.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from quotagov.client import ApiError, Client, TransportError
from quotagov.client.transport import (
    PRINCIPAL_HEADER,
    SigV4Transport,
    TokenTransport,
    region_of,
)
from quotagov_tools.commands import jobs as jobs_command
from quotagov_tools.commands.jobs import UsageError, client_for, load_config


class Recorder(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []  # noqa: RUF012 - shared by the handler instances

    def do_GET(self) -> None:
        self.seen.append({"path": self.path, "headers": dict(self.headers.items())})
        body = json.dumps({"message": "no submission x"}).encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    Recorder.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def test_a_sigv4_request_is_signed_for_execute_api_with_the_chains_keys(
    server: str, credentials: None
) -> None:
    client = Client.deployed(server, region="eu-west-1")
    with pytest.raises(ApiError) as raised:
        client.get_job("x")
    assert (raised.value.status, raised.value.message) == (404, "no submission x")
    (request,) = Recorder.seen
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert request["path"] == "/v1/jobs/x"
    assert PRINCIPAL_HEADER.lower() not in headers
    assert headers["x-amz-security-token"] == "session-token"
    authorization = headers["authorization"]
    date = headers["x-amz-date"][:8]
    assert authorization.startswith(
        f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{date}/eu-west-1/execute-api/aws4_request, "
    )
    # the signature is the one botocore computes for that request at that time
    again = AWSRequest(
        method="GET",
        url=server + "jobs/x",
        headers={"Accept": "application/json", "X-Amz-Date": headers["x-amz-date"]},
    )
    signer = SigV4Auth(
        Credentials(
            "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token"
        ).get_frozen_credentials(),
        "execute-api",
        "eu-west-1",
    )
    signer._timestamp = lambda: headers["x-amz-date"]  # type: ignore[method-assign]
    signer.add_auth(again)
    assert (
        authorization.rsplit("Signature=", 1)[1]
        == again.headers["Authorization"].rsplit("Signature=", 1)[1]
    )


def test_the_region_comes_from_the_api_host() -> None:
    assert region_of("https://a1b2c3.execute-api.ap-south-1.amazonaws.com/v1/") == "ap-south-1"
    assert region_of("http://127.0.0.1:3000") is None


def test_without_credentials_nothing_is_sent(
    server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    transport = SigV4Transport(server, region="eu-west-1")
    with pytest.raises(TransportError, match="no AWS credentials"):
        transport.send("GET", "/jobs/x")
    assert Recorder.seen == []


@pytest.mark.parametrize(
    "url", ["https://a1b2c3.execute-api.eu-west-1.amazonaws.com/v1/", "http://0.0.0.0:3000"]
)
def test_the_principal_header_goes_to_loopback_only(url: str) -> None:
    with pytest.raises(TransportError, match="only sent to quotagov serve on loopback"):
        Client.local(url, "arn:aws:sts::111122223333:assumed-role/researcher/alice")


def test_the_command_finds_the_url_in_its_documented_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, credentials: None
) -> None:
    import argparse

    config = tmp_path / "client.toml"
    config.write_text('api_url = "https://cfg.execute-api.eu-west-1.amazonaws.com/v1/"\n')
    args = argparse.Namespace(
        api_url=None,
        stack=None,
        profile=None,
        region=None,
        principal=None,
        config=config,
        token=None,
        token_file=None,
    )
    monkeypatch.delenv("QUOTAGOV_API_URL", raising=False)
    assert client_for(args, load_config(config)).transport.base_url.startswith("https://cfg.")
    monkeypatch.setenv("QUOTAGOV_API_URL", "https://env.execute-api.eu-west-1.amazonaws.com/v1/")
    assert client_for(args, load_config(config)).transport.base_url.startswith("https://env.")
    args.api_url = "http://127.0.0.1:3000"
    args.principal = "arn:aws:sts::111122223333:assumed-role/researcher/alice"
    assert client_for(args, load_config(config)).transport.base_url == "http://127.0.0.1:3000"
    config.write_text('api_url = "x"\nregoin = "eu-west-1"\n')
    with pytest.raises(UsageError, match="unknown keys regoin"):
        load_config(config)


#: A user pool ID token's shape (header.payload.signature); API Gateway checks it, not us.
ID_TOKEN = "eyJraWQiOiJrMSIsImFsZyI6IlJTMjU2In0.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"


def test_a_token_request_carries_the_id_token_and_no_signature_or_principal(
    server: str,
) -> None:
    client = Client.with_token(server, f"Bearer {ID_TOKEN}\n")
    with pytest.raises(ApiError) as raised:
        client.get_job("x")
    assert raised.value.status == 404
    (request,) = Recorder.seen
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert request["path"] == "/v1/jobs/x"
    assert headers["authorization"] == ID_TOKEN
    assert PRINCIPAL_HEADER.lower() not in headers and "x-amz-date" not in headers


@pytest.mark.parametrize(
    ("url", "token", "fault"),
    [
        ("http://a1b2c3.execute-api.eu-west-1.amazonaws.com/v1/", ID_TOKEN, "plain http"),
        ("https://a1b2c3.execute-api.eu-west-1.amazonaws.com/v1/", "not-a-jwt", "not a JWT"),
        ("https://a1b2c3.execute-api.eu-west-1.amazonaws.com/v1/", "a..c", "not a JWT"),
    ],
)
def test_a_token_is_never_sent_in_clear_text_nor_malformed(
    url: str, token: str, fault: str
) -> None:
    with pytest.raises(TransportError, match=fault):
        TokenTransport(url, token)


def test_the_command_takes_the_token_from_option_file_or_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    asked: list[str] = []

    def outputs(stack: str, *, profile: str | None, region: str | None, output: str) -> str:
        asked.append(output)
        return f"https://{output.lower()}.execute-api.eu-west-1.amazonaws.com/v1/"

    monkeypatch.setattr(jobs_command, "stack_api_url", outputs)
    monkeypatch.delenv("QUOTAGOV_API_URL", raising=False)
    monkeypatch.setenv("QUOTAGOV_TOKEN", ID_TOKEN)
    args = argparse.Namespace(
        api_url=None,
        stack="quotagov",
        profile=None,
        region=None,
        principal=None,
        config=None,
        token=None,
        token_file=None,
    )
    client = client_for(args, {})
    assert isinstance(client.transport, TokenTransport)
    assert client.transport.base_url.startswith("https://jwtapiurl.")
    assert asked == ["JwtApiUrl"]
    monkeypatch.delenv("QUOTAGOV_TOKEN")
    token_file = tmp_path / "token"
    token_file.write_text("")
    args.token_file = token_file
    with pytest.raises(UsageError, match="empty"):
        client_for(args, {})
    token_file.write_text(ID_TOKEN + "\n")
    assert isinstance(client_for(args, {}).transport, TokenTransport)
    args.principal = "arn:aws:sts::111122223333:assumed-role/researcher/alice"
    with pytest.raises(UsageError, match="choose one"):
        client_for(args, {})
