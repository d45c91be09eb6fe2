"""A loopback fake of the Slack Web API, for the tests and the local runtime.

It serves, on ``127.0.0.1`` and a free port, the two Web API methods quotagov calls
(``chat.postMessage`` and ``chat.update``) plus ``response_url`` endpoints, and
answers the way Slack does (Slack, "Handling user interaction in your Slack apps",
https://docs.slack.dev/interactivity/handling-user-interaction, and "chat.postMessage",
https://api.slack.com/methods/chat.postMessage):

- every answer is HTTP 200 with ``{"ok": true, ...}`` or ``{"ok": false, "error": code}``;
- a missing bearer token is ``not_authed``, a wrong one ``invalid_auth``;
- an unknown channel is ``channel_not_found`` (when a channel list is given),
  an unknown ``ts`` in ``chat.update`` is ``message_not_found``, a call with neither
  ``text`` nor ``blocks`` is ``no_text``;
- ``chat.postMessage`` returns ``{ok, channel, ts, message}``, ``chat.update``
  returns ``{ok, channel, ts, text, message}``;
- a ``response_url`` accepts 5 posts (then ``used_url``), answers ``ok`` as plain
  text; with ``replace_original`` it overwrites the message it belongs to, with
  ``delete_original`` deletes it, else it posts a new message: with ``response_type:
  in_channel`` a channel message (listed in :attr:`FakeSlack.messages`), by default
  (``ephemeral``) one only the clicker sees, kept only as the call
  (:meth:`FakeSlack.calls_to` ``("response_url")``, the runtime's
  ``/_local/slack/responses``), never among the channel's messages.

Point ``slack_sdk.WebClient(base_url=fake.base_url)`` at it (the URL ends with ``/``
as slack_sdk requires). ``GET /_local/slack/messages`` returns the current state of
every message as JSON, which the local runtime serves to its users.

Example::

    with FakeSlack(token="xoxb-test") as slack:
        client = WebClient(token="xoxb-test", base_url=slack.base_url)
        client.chat_postMessage(channel="C0GOVERN", text="hello")
        assert slack.messages[0].text == "hello"
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import itertools
import json
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from quotagov_tools.local.faults import FaultKind, FaultPlan, slack_fault

#: How many times Slack lets one ``response_url`` be used (within 30 minutes).
RESPONSE_URL_MAX_USES = 5


@dataclass(frozen=True)
class FakeSlackMessage:
    """The current state of one message in the fake workspace.

    Attributes:
        channel: channel id, e.g. ``"C0GOVERN"``.
        ts: Slack message timestamp, e.g. ``"1764547200.000001"``; unique per channel.
        text: fallback text.
        blocks: Block Kit blocks (list of dicts; empty when none were given).
        edits: how many times the message was changed (``chat.update`` or a
            ``response_url`` with ``replace_original``).
    """

    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    edits: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The message as a JSON-ready dict."""
        return {
            "channel": self.channel,
            "ts": self.ts,
            "text": self.text,
            "blocks": self.blocks,
            "edits": self.edits,
        }


@dataclass(frozen=True)
class FakeSlackCall:
    """One recorded call: ``method`` (``"chat.postMessage"``, ``"chat.update"`` or
    ``"response_url"``), the ``params`` as received, and the ``response`` sent back."""

    method: str
    params: dict[str, Any]
    response: dict[str, Any]
    token: str | None = None
    at: float = field(default_factory=time.time)
    #: for ``response_url`` posts: the URL's path (``/actions/<key>``)
    url: str = ""

    @property
    def ok(self) -> bool:
        """Whether Slack would have answered ``ok: true``."""
        return bool(self.response.get("ok"))


class FakeSlack:
    """A fake Slack Web API on loopback; thread-safe; start with :meth:`start` or ``with``.

    Args:
        token: the bot token clients must send as ``Authorization: Bearer <token>``.
        channels: channel ids that exist; ``None`` accepts any channel id.
        host: interface to bind (loopback by default); the port is chosen free.

    Raises:
        RuntimeError: from :attr:`base_url` and :meth:`response_url_for` before
            :meth:`start`.
    """

    def __init__(
        self,
        token: str = "xoxb-fake-token",
        *,
        channels: Iterable[str] | None = None,
        host: str = "127.0.0.1",
        faults: FaultPlan | None = None,
    ) -> None:
        self.token = token
        #: The plan whose Slack faults (429, no answer, ``ratelimited``,
        #: ``msg_too_long``) the Web API methods meet; None: none.
        self.faults = faults
        #: Calls answered with an injected fault, in order.
        self.injected: list[FakeSlackCall] = []
        self._channels = None if channels is None else set(channels)
        self._host = host
        self._lock = threading.Lock()
        self._messages: dict[tuple[str, str], FakeSlackMessage] = {}
        self._calls: list[FakeSlackCall] = []
        self._response_urls: dict[str, tuple[str, str]] = {}
        self._response_url_uses: dict[str, int] = {}
        self._failures: dict[str, list[str]] = {}
        self._rate_limits: dict[str, list[int]] = {}
        self._seq = itertools.count(1)
        self._base_ts = int(time.time())
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------

    def start(self) -> FakeSlack:
        """Bind a free loopback port and serve in a daemon thread; returns ``self``."""
        if self._server is not None:
            return self
        server = ThreadingHTTPServer((self._host, 0), _make_handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="fake-slack", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` of the running server."""
        if self._server is None:
            raise RuntimeError("FakeSlack is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The Web API base URL for ``slack_sdk.WebClient(base_url=...)``; ends with ``/``."""
        return f"{self.url}/api/"

    # -- views ----------------------------------------------------------------

    @property
    def messages(self) -> list[FakeSlackMessage]:
        """Every message in its current state, in posting order."""
        with self._lock:
            return list(self._messages.values())

    def message(self, channel: str, ts: str) -> FakeSlackMessage:
        """The current state of the message ``ts`` in ``channel``.

        Raises:
            KeyError: when no such message was posted.
        """
        with self._lock:
            return self._messages[(channel, ts)]

    @property
    def calls(self) -> list[FakeSlackCall]:
        """Every call received, in arrival order (failed ones included)."""
        with self._lock:
            return list(self._calls)

    def calls_to(self, method: str) -> list[FakeSlackCall]:
        """The recorded calls of one ``method``, e.g. ``"chat.update"``."""
        return [call for call in self.calls if call.method == method]

    # -- test controls --------------------------------------------------------

    def response_url_for(self, channel: str, ts: str) -> str:
        """A new ``response_url`` bound to message ``ts`` of ``channel`` (as Slack
        puts in an interaction payload)."""
        key = f"R{next(self._seq):08d}"
        with self._lock:
            self._response_urls[key] = (channel, ts)
            self._response_url_uses[key] = 0
        return f"{self.url}/actions/{key}"

    def record_fault(self, method: str, params: dict[str, Any], fault: str) -> None:
        """Record a call answered with an injected fault (server side), in
        :attr:`injected`, apart from :attr:`calls` (which Slack carried out)."""
        with self._lock:
            self.injected.append(FakeSlackCall(method, params, {"ok": False, "injected": fault}))

    def fail_next(self, method: str, error: str) -> None:
        """Make the next call of ``method`` answer ``{"ok": false, "error": error}``."""
        with self._lock:
            self._failures.setdefault(method, []).append(error)

    def rate_limit_next(self, method: str, times: int = 1, retry_after: int = 1) -> None:
        """Make the next ``times`` calls of ``method`` answer HTTP 429 with
        ``Retry-After: retry_after`` (seconds) and ``{"ok": false, "error": "ratelimited"}``,
        as Slack does when a method's rate limit is exceeded (Slack, "Rate limits",
        https://docs.slack.dev/apis/web-api/rate-limits)."""
        with self._lock:
            self._rate_limits.setdefault(method, []).extend([retry_after] * times)

    def take_rate_limit(self, method: str, params: dict[str, Any]) -> int | None:
        """Server side: the ``Retry-After`` seconds of an injected 429 for this call
        (recorded as a failed call), or None."""
        with self._lock:
            queued = self._rate_limits.get(method)
            if not queued:
                return None
            retry_after = queued.pop(0)
            self._calls.append(
                FakeSlackCall(method, params, {"ok": False, "error": "ratelimited"}, None)
            )
            return retry_after

    # -- request processing (called from the server threads) -------------------

    def _next_ts(self) -> str:
        return f"{self._base_ts}.{next(self._seq):06d}"

    def handle_api(self, method: str, params: dict[str, Any], token: str | None) -> dict[str, Any]:
        """Answer one Web API call and record it (server side; public for the handler)."""
        with self._lock:
            response = self._answer(method, params, token)
            self._calls.append(FakeSlackCall(method, params, response, token))
            return response

    def _answer(self, method: str, params: dict[str, Any], token: str | None) -> dict[str, Any]:
        if token is None:
            return {"ok": False, "error": "not_authed"}
        if token != self.token:
            return {"ok": False, "error": "invalid_auth"}
        injected = self._failures.get(method)
        if injected:
            return {"ok": False, "error": injected.pop(0)}
        if method == "chat.postMessage":
            return self._post_message(params)
        if method == "chat.update":
            return self._update(params)
        return {"ok": False, "error": "unknown_method"}

    def _check_content(self, params: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]]] | str:
        channel = params.get("channel")
        if not channel:
            return "channel_not_found"
        if self._channels is not None and channel not in self._channels:
            return "channel_not_found"
        text = params.get("text") or ""
        if len(str(text)) > MAX_TEXT:
            return "msg_too_long"
        blocks = _blocks(params.get("blocks"))
        if blocks is None or _over_limit(blocks):
            return "invalid_blocks"
        if not text and not blocks:
            return "no_text"
        return str(text), blocks

    def _post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        checked = self._check_content(params)
        if isinstance(checked, str):
            return {"ok": False, "error": checked}
        text, blocks = checked
        channel = str(params["channel"])
        ts = self._next_ts()
        message = FakeSlackMessage(channel=channel, ts=ts, text=text, blocks=blocks)
        self._messages[(channel, ts)] = message
        return {"ok": True, "channel": channel, "ts": ts, "message": _wire(message)}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        checked = self._check_content(params)
        if isinstance(checked, str):
            return {"ok": False, "error": checked}
        text, blocks = checked
        channel, ts = str(params["channel"]), str(params.get("ts") or "")
        old = self._messages.get((channel, ts))
        if old is None:
            return {"ok": False, "error": "message_not_found"}
        new = FakeSlackMessage(channel, ts, text, blocks, old.edits + 1)
        self._messages[(channel, ts)] = new
        return {"ok": True, "channel": channel, "ts": ts, "text": text, "message": _wire(new)}

    def handle_response_url(self, key: str, body: dict[str, Any]) -> tuple[int, str]:
        """Answer one ``response_url`` post; returns (HTTP status, plain-text body)."""
        with self._lock:
            status, answer = self._respond(key, body)
            self._calls.append(
                FakeSlackCall(
                    "response_url",
                    body,
                    {"ok": status == 200, "body": answer},
                    url=f"/actions/{key}",
                )
            )
            return status, answer

    def _respond(self, key: str, body: dict[str, Any]) -> tuple[int, str]:
        target = self._response_urls.get(key)
        if target is None:
            return 404, "invalid_url"
        if self._response_url_uses[key] >= RESPONSE_URL_MAX_USES:
            return 404, "used_url"
        self._response_url_uses[key] += 1
        text = str(body.get("text") or "")
        blocks = _blocks(body.get("blocks"))
        if blocks is None:
            return 400, "invalid_blocks"
        if not text and not blocks:
            return 400, "no_text"
        channel, ts = target
        if body.get("delete_original"):
            self._messages.pop((channel, ts), None)
        elif body.get("replace_original"):
            old = self._messages.get((channel, ts))
            if old is None:
                return 404, "message_not_found"
            self._messages[(channel, ts)] = FakeSlackMessage(
                channel, ts, text, blocks, old.edits + 1
            )
        elif body.get("response_type") == "in_channel":
            new_ts = self._next_ts()
            self._messages[(channel, new_ts)] = FakeSlackMessage(channel, new_ts, text, blocks)
        # else ephemeral (Slack's default): shown to the clicker only, so no channel message
        return 200, "ok"


#: Slack's limits the fake enforces, as Slack would refuse the message (characters):
#: the fallback ``text`` (``msg_too_long``), a section's text and each of its fields,
#: a header's text (``invalid_blocks``). Block Kit reference:
#: https://docs.slack.dev/reference/block-kit/blocks/section-block and
#: https://docs.slack.dev/reference/block-kit/blocks/header-block.
MAX_TEXT = 40000
_BLOCK_TEXT_LIMITS = {"section": 3000, "header": 150}
_FIELD_LIMIT = 2000


def _over_limit(blocks: list[dict[str, Any]]) -> bool:
    """True when a block's text (or a section field) is longer than Slack allows."""
    for block in blocks:
        limit = _BLOCK_TEXT_LIMITS.get(str(block.get("type")))
        text = block.get("text")
        if limit and isinstance(text, dict) and len(str(text.get("text", ""))) > limit:
            return True
        for item in block.get("fields") or []:
            if isinstance(item, dict) and len(str(item.get("text", ""))) > _FIELD_LIMIT:
                return True
    return False


def _blocks(raw: Any) -> list[dict[str, Any]] | None:
    """Blocks as sent (a list, or a JSON string in form posts); None when malformed."""
    if raw is None or raw == "":
        return []
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    if not isinstance(raw, list) or not all(isinstance(b, dict) for b in raw):
        return None
    return raw


def _wire(message: FakeSlackMessage) -> dict[str, Any]:
    return {
        "type": "message",
        "text": message.text,
        "blocks": message.blocks,
        "ts": message.ts,
        "bot_id": "B0FAKE",
    }


def _make_handler(fake: FakeSlack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet (tests read :attr:`FakeSlack.calls` instead)."""

        def _reply(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, payload: Any, status: int = HTTPStatus.OK) -> None:
            self._reply(status, json.dumps(payload).encode(), "application/json; charset=utf-8")

        def _injected(self, method: str, params: dict[str, Any]) -> bool:
            """Answer the plan's fault for this call instead of the method, if one fires."""
            assert fake.faults is not None
            kind = slack_fault(fake.faults, method)
            if kind is None:
                return False
            fake.record_fault(method, params, kind.value)
            if kind is FaultKind.SLACK_NO_ANSWER:
                self.close_connection = True  # no status line: the client sees no answer
            elif kind is FaultKind.SLACK_429:
                body = json.dumps({"ok": False, "error": "ratelimited"}).encode()
                self.send_response(HTTPStatus.TOO_MANY_REQUESTS)
                self.send_header("Retry-After", "1")
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                error = "ratelimited" if kind is FaultKind.SLACK_RATELIMITED else "msg_too_long"
                self._json({"ok": False, "error": error})
            return True

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/_local/slack/messages":
                self._json({"messages": [m.as_dict() for m in fake.messages]})
            else:
                self._json({"ok": False, "error": "unknown_method"}, HTTPStatus.NOT_FOUND)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            params = _parse_body(raw, self.headers.get("Content-Type") or "")
            if self.path.startswith("/api/"):
                method = self.path[len("/api/") :].split("?", 1)[0]
                token = _bearer(self.headers.get("Authorization"))
                if token is None and isinstance(params.get("token"), str):
                    token = params.pop("token")
                retry_after = fake.take_rate_limit(method, params)
                if retry_after is not None:
                    body = json.dumps({"ok": False, "error": "ratelimited"}).encode()
                    self.send_response(HTTPStatus.TOO_MANY_REQUESTS)
                    self.send_header("Retry-After", str(retry_after))
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if fake.faults is not None and self._injected(method, params):
                    return
                self._json(fake.handle_api(method, params, token))
            elif self.path.startswith("/actions/"):
                status, answer = fake.handle_response_url(self.path[len("/actions/") :], params)
                self._reply(status, answer.encode(), "text/plain; charset=utf-8")
            else:
                self._json({"ok": False, "error": "unknown_method"}, HTTPStatus.NOT_FOUND)

    return Handler


def _parse_body(raw: bytes, content_type: str) -> dict[str, Any]:
    text = raw.decode("utf-8", errors="replace")
    if "json" in content_type:
        try:
            parsed = json.loads(text or "{}")
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return dict(parse_qsl(text, keep_blank_values=True))


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def slack_signature(signing_secret: str, timestamp: int | str, body: bytes) -> str:
    """``X-Slack-Signature`` as Slack computes it: ``v0=`` + HMAC-SHA256 hex of
    ``v0:<timestamp>:<raw body>`` keyed with the signing secret (Slack, "Verifying requests
    from Slack")."""
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()


def sign_event(event: dict[str, Any], signing_secret: str, timestamp: float) -> dict[str, Any]:
    """A copy of an API Gateway REST event with fresh Slack signature headers.

    For replaying ``events/slack_interactions-*.json`` against a runtime with another
    signing secret or clock (``quotagov invoke``, the local runtime). The body is
    signed as it travels (base64-decoded first when ``isBase64Encoded``); the
    signature headers replace any of theirs, in ``headers`` and ``multiValueHeaders``.
    """
    signed = copy.deepcopy(event)
    body = str(signed.get("body") or "")
    raw = base64.b64decode(body) if signed.get("isBase64Encoded") else body.encode()
    ts = str(int(timestamp))
    fresh = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": slack_signature(signing_secret, ts, raw),
    }
    drop = {name.lower() for name in fresh}
    headers = {k: v for k, v in (signed.get("headers") or {}).items() if k.lower() not in drop}
    signed["headers"] = {**headers, **fresh}
    multi = {
        k: v for k, v in (signed.get("multiValueHeaders") or {}).items() if k.lower() not in drop
    }
    signed["multiValueHeaders"] = {**multi, **{k: [v] for k, v in fresh.items()}}
    return signed
