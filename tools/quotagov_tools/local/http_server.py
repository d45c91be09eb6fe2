"""The local HTTP front door of :class:`~quotagov_tools.local.runtime.LocalRuntime`
(``quotagov serve``).

Routes of the template's ``Api`` events are passed to the runtime, which builds the
API Gateway REST proxy event exactly as API Gateway would. The SigV4 identity API
Gateway would put in ``requestContext.identity.userArn`` is taken, on this local
server only, from the header :data:`PRINCIPAL_HEADER` (the header itself is not
forwarded to the handler). Local control endpoints:

- ``GET /_local/slack/messages``: the fake Slack's channel messages (current state);
- ``GET /_local/slack/responses``: every post to a ``response_url`` (``url``, ``text``,
  ``responseType``: ``ephemeral``, the clicker's only, or ``in_channel``; ``ok``, ``at``);
- ``POST /_local/slack/response-url`` with ``{"channel", "ts"}``: a new ``response_url``
  for an interaction with that message, as Slack puts in a ``block_actions`` payload;
- ``GET /_local/clock``, ``POST /_local/clock`` with ``{"advance": seconds}`` or
  ``{"to": epoch seconds}``: read or advance the virtual clock (runs the simulated
  Batch forward and delivers its events, queued messages and schedules);
- ``POST /_local/batch/<Operation>``: call the simulated Batch as the principal of
  :data:`PRINCIPAL_HEADER` (e.g. ``UpdateQuotaShare``); mutating calls are recorded as
  CloudTrail events and reach the audit function like in AWS;
- ``GET /_local/invocations``: the handler invocations so far (function, trigger,
  virtual time, ok/error).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from quotagov.governance.ports import BatchError
from quotagov_tools.local.lambda_events import iso_time
from quotagov_tools.local.loopback import is_loopback
from quotagov_tools.local.runtime import LocalRuntime

#: The header carrying the caller's IAM principal ARN (local server only).
PRINCIPAL_HEADER = "X-Quotagov-Principal"
#: Largest request body (API Gateway's payload limit, 10 MB).
MAX_BODY_BYTES = 10 * 1024 * 1024
#: Listen backlog of the server socket (connections waiting to be accepted).
LISTEN_BACKLOG = 128


class BadRequestBodyError(Exception):
    """The request body cannot be read (bad length or chunk, too large).

    Attributes:
        status: 400 or 413.
        fault: what is wrong, for the ``(body)`` fault of the answer.
    """

    def __init__(self, status: int, fault: str) -> None:
        super().__init__(fault)
        self.status = status
        self.fault = fault


class _RuntimeRequestHandler(BaseHTTPRequestHandler):
    """Passes template routes to :attr:`runtime`; answers the ``/_local/`` endpoints.

    :func:`_make_handler` binds :attr:`runtime` in a subclass.
    """

    runtime: LocalRuntime
    server_version = "quotagov-local"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet access log (the handlers log for themselves)."""

    # -- plumbing ------------------------------------------------------------------

    def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        sent = {k.lower() for k in (headers or {})}
        for key, value in (headers or {}).items():
            if key.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(key, value)
        if "content-type" not in sent:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value, default=str))

    def _body(self) -> bytes:
        """The request body: ``Content-Length`` bytes, or the decoded chunks of a
        ``Transfer-Encoding: chunked`` body (curl ``-H 'Transfer-Encoding: chunked'``,
        most HTTP clients streaming a body).

        Raises:
            BadRequestBodyError: a malformed length or chunk, or a body over
                :data:`MAX_BODY_BYTES` (API Gateway's payload limit).
        """
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._chunked_body()
        raw = (self.headers.get("Content-Length") or "0").strip()
        if not raw.isdigit():
            raise BadRequestBodyError(400, f"Content-Length: {raw!r} is not a byte count")
        length = int(raw)
        if length > MAX_BODY_BYTES:
            raise BadRequestBodyError(413, f"the body is {length} bytes, at most {MAX_BODY_BYTES}")
        return self.rfile.read(length) if length else b""

    def _chunked_body(self) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1026).split(b";", 1)[0].strip()
            try:
                size = int(line, 16)
            except ValueError:
                raise BadRequestBodyError(400, f"chunk size {line[:20]!r} is not hex") from None
            if size == 0:
                while self.rfile.readline(1026).strip():  # trailer headers
                    pass
                return b"".join(chunks)
            total += size
            if size < 0 or total > MAX_BODY_BYTES:
                raise BadRequestBodyError(413, f"the body is over {MAX_BODY_BYTES} bytes")
            chunks.append(self.rfile.read(size))
            self.rfile.readline(3)  # the CRLF after the chunk

    def _dispatch(self, method: str) -> None:
        """A template route through the runtime's API Gateway, or a local endpoint."""
        split = urlsplit(self.path)
        path = split.path
        try:
            body = self._body() if method in ("POST", "PUT", "PATCH", "DELETE") else b""
        except BadRequestBodyError as exc:
            self.close_connection = True
            self._json(
                exc.status,
                {"message": "invalid request", "faults": [{"path": "(body)", "fault": exc.fault}]},
            )
            return
        if path.startswith("/_local/") or path == "/openapi.json":
            self._local(method, path, body)
            return
        headers = {
            key: value
            for key, value in self.headers.items()
            if key.lower() != PRINCIPAL_HEADER.lower()
        }
        query = parse_qs(split.query, keep_blank_values=True) if split.query else None
        response = self.runtime.api(
            method,
            path,
            principal=self.headers.get(PRINCIPAL_HEADER),
            body=body or None,
            headers=headers,
            query=query,
        )
        self._send(response.status, response.body, response.headers)

    def _local(self, method: str, path: str, body: bytes) -> None:
        """One of the local endpoints (the module doc lists them); 404 for any other."""
        try:
            payload = json.loads(body) if body else {}
        except (ValueError, RecursionError):
            self._fault(400, "(body)", "not valid JSON")
            return
        if not isinstance(payload, dict):
            self._fault(400, "(body)", "must be a JSON object")
            return
        if path.startswith("/_local/batch/") and method == "POST":
            self._batch(path.rsplit("/", 1)[-1], payload)
            return
        endpoint = _LOCAL_ENDPOINTS.get((method, path))
        if endpoint is None:
            self._json(404, {"message": f"no local endpoint {method} {path}"})
        else:
            endpoint(self, payload)

    def _fault(self, status: int, path: str, fault: str) -> None:
        """An answer in the API's error format (``{"message", "faults": [{path, fault}]}``)."""
        self._json(
            status, {"message": "invalid request", "faults": [{"path": path, "fault": fault}]}
        )

    # -- local endpoints -----------------------------------------------------------

    def _slack_responses(self, _payload: dict[str, Any]) -> None:
        responses = [
            {
                "url": c.url,
                "text": c.params.get("text"),
                # Slack's default: only the clicker sees it (response_type ephemeral)
                "responseType": c.params.get("response_type") or "ephemeral",
                "ok": c.ok,
                "at": c.at,
            }
            for c in self.runtime.slack.calls_to("response_url")
        ]
        self._json(200, {"responses": responses})

    def _openapi(self, _payload: dict[str, Any]) -> None:
        from quotagov.handlers.openapi import openapi_document

        self._json(200, openapi_document())

    def _slack_messages(self, _payload: dict[str, Any]) -> None:
        messages = [m.as_dict() for m in self.runtime.slack.messages]
        self._json(200, {"messages": messages})

    def _response_url(self, payload: dict[str, Any]) -> None:
        channel, ts = payload.get("channel"), payload.get("ts")
        if not isinstance(channel, str) or not isinstance(ts, str):
            self._json(400, {"message": 'give {"channel": "C...", "ts": "<message ts>"}'})
            return
        self._json(200, {"responseUrl": self.runtime.slack.response_url_for(channel, ts)})

    def _read_clock(self, _payload: dict[str, Any]) -> None:
        now = self.runtime.clock.now()
        self._json(200, {"now": now, "time": iso_time(now)})

    def _clock(self, payload: dict[str, Any]) -> None:
        key = "advance" if "advance" in payload else "to" if "to" in payload else None
        if key is None:
            self._fault(400, "(body)", 'give {"advance": seconds} or {"to": epoch seconds}')
            return
        value = payload[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self._fault(400, key, f"must be a number of seconds, not {json.dumps(value)[:40]}")
            return
        if not math.isfinite(value):
            self._fault(400, key, "must be a finite number")
            return
        try:
            now = (
                self.runtime.advance(value) if key == "advance" else self.runtime.advance_to(value)
            )
        except ValueError as exc:
            self._fault(400, key, str(exc))
            return
        self._json(200, {"now": now, "time": iso_time(now)})

    def _batch(self, operation: str, payload: dict[str, Any]) -> None:
        principal = self.headers.get(PRINCIPAL_HEADER)
        if not principal:
            self._json(403, {"message": f"{PRINCIPAL_HEADER} header is required"})
            return
        try:
            result = self.runtime.admin_batch(principal, operation, payload)
        except BatchError as exc:
            self._json(400, {"__type": exc.code, "message": exc.message})
            return
        except (TypeError, ValueError) as exc:
            self._json(400, {"message": f"{operation}: {exc}"})
            return
        self._json(200, result)

    def _invocations(self, _payload: dict[str, Any]) -> None:
        invocations = [
            {"function": i.function, "trigger": i.trigger, "at": i.at, "ok": i.ok, "error": i.error}
            for i in self.runtime.invocations
        ]
        self._json(200, {"invocations": invocations})

    # -- HTTP methods --------------------------------------------------------------

    def do_GET(self) -> None:
        """Handle GET."""
        self._dispatch("GET")

    def do_POST(self) -> None:
        """Handle POST."""
        self._dispatch("POST")

    def do_PUT(self) -> None:
        """Handle PUT."""
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        """Handle DELETE."""
        self._dispatch("DELETE")


#: A local endpoint: called with the request handler and the JSON body (``{}`` if none).
_Endpoint = Callable[[_RuntimeRequestHandler, dict[str, Any]], None]

#: (method, path) -> the local endpoint answering it (``/_local/batch/*`` aside).
_LOCAL_ENDPOINTS: dict[tuple[str, str], _Endpoint] = {
    ("GET", "/_local/slack/messages"): _RuntimeRequestHandler._slack_messages,
    ("GET", "/_local/slack/responses"): _RuntimeRequestHandler._slack_responses,
    ("GET", "/openapi.json"): _RuntimeRequestHandler._openapi,
    ("POST", "/_local/slack/response-url"): _RuntimeRequestHandler._response_url,
    ("GET", "/_local/clock"): _RuntimeRequestHandler._read_clock,
    ("POST", "/_local/clock"): _RuntimeRequestHandler._clock,
    ("GET", "/_local/invocations"): _RuntimeRequestHandler._invocations,
}


def _make_handler(runtime: LocalRuntime) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``runtime`` (one per :class:`LocalServer`)."""
    return type("Handler", (_RuntimeRequestHandler,), {"runtime": runtime})


class _Server(ThreadingHTTPServer):
    """One thread per connection, and a listen backlog for bursts of clients.

    ``socketserver``'s default backlog is 5: a burst of 20 to 50 clients connecting at
    once got connection resets. Handler invocations still run one at a time (the
    runtime's lock), so many clients wait their turn instead of being refused.
    """

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True


class LocalServer:
    """A threading HTTP server on ``host:port`` (loopback only) in front of ``runtime``.

    ``port`` 0 picks a free port (see :attr:`port`). :meth:`serve_forever` blocks;
    :meth:`start` serves in a daemon thread.

    Raises:
        ValueError: ``host`` is not a loopback address (local commands never listen on,
            or reach, anything else).
    """

    def __init__(self, runtime: LocalRuntime, host: str = "127.0.0.1", port: int = 3000) -> None:
        if not is_loopback(host):
            raise ValueError(f"serve: {host!r} is not a loopback address (127.0.0.0/8, ::1)")
        self.runtime = runtime
        self.httpd = _Server((host, port), _make_handler(runtime))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host = self.httpd.server_address[0]
        return f"http://{host if isinstance(host, str) else host.decode()}:{self.port}"

    def serve_forever(self) -> None:
        """Serve until :meth:`stop` (or KeyboardInterrupt)."""
        self.httpd.serve_forever()

    def start(self) -> LocalServer:
        """Serve in a daemon thread; returns ``self``."""
        self._thread = threading.Thread(
            target=self.serve_forever, name="quotagov-serve", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @staticmethod
    def status_of(code: int) -> str:
        """The reason phrase of an HTTP status code."""
        return HTTPStatus(code).phrase
