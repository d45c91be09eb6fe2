"""The local HTTP front door of :class:`~quotagov.local.runtime.LocalRuntime` (``quotagov serve``).

Routes of the template's ``Api`` events are passed to the runtime, which builds the
API Gateway REST proxy event exactly as API Gateway would. The SigV4 identity API
Gateway would put in ``requestContext.identity.userArn`` is taken, on this local
server only, from the header :data:`PRINCIPAL_HEADER` (the header itself is not
forwarded to the handler). Local control endpoints:

- ``GET /_local/slack/messages``: the fake Slack's messages (current state);
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
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from quotagov.governance.ports import BatchError
from quotagov.local.lambda_events import iso_time
from quotagov.local.runtime import LocalRuntime

#: The header carrying the caller's IAM principal ARN (local server only).
PRINCIPAL_HEADER = "X-Quotagov-Principal"


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
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _dispatch(self, method: str) -> None:
        """A template route through the runtime's API Gateway, or a local endpoint."""
        split = urlsplit(self.path)
        path = split.path
        body = self._body() if method in ("POST", "PUT", "PATCH", "DELETE") else b""
        if path.startswith("/_local/"):
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
        except ValueError:
            self._json(400, {"message": "body: not JSON"})
            return
        if path.startswith("/_local/batch/") and method == "POST":
            self._batch(path.rsplit("/", 1)[-1], payload)
            return
        endpoint = _LOCAL_ENDPOINTS.get((method, path))
        if endpoint is None:
            self._json(404, {"message": f"no local endpoint {method} {path}"})
        else:
            endpoint(self, payload)

    # -- local endpoints -----------------------------------------------------------

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
        try:
            if "advance" in payload:
                now = self.runtime.advance(float(payload["advance"]))
            elif "to" in payload:
                now = self.runtime.advance_to(float(payload["to"]))
            else:
                raise ValueError('give {"advance": seconds} or {"to": epoch seconds}')
        except (TypeError, ValueError) as exc:
            self._json(400, {"message": f"clock: {exc}"})
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
    ("POST", "/_local/slack/response-url"): _RuntimeRequestHandler._response_url,
    ("GET", "/_local/clock"): _RuntimeRequestHandler._read_clock,
    ("POST", "/_local/clock"): _RuntimeRequestHandler._clock,
    ("GET", "/_local/invocations"): _RuntimeRequestHandler._invocations,
}


def _make_handler(runtime: LocalRuntime) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``runtime`` (one per :class:`LocalServer`)."""
    return type("Handler", (_RuntimeRequestHandler,), {"runtime": runtime})


class LocalServer:
    """A :class:`ThreadingHTTPServer` on ``host:port`` in front of ``runtime``.

    ``port`` 0 picks a free port (see :attr:`port`). :meth:`serve_forever` blocks;
    :meth:`start` serves in a daemon thread.
    """

    def __init__(self, runtime: LocalRuntime, host: str = "127.0.0.1", port: int = 3000) -> None:
        self.runtime = runtime
        self.httpd = ThreadingHTTPServer((host, port), _make_handler(runtime))
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
