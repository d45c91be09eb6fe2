"""A moto server on loopback for tests whose clients race each other over HTTP."""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server


class SerialMotoServer(ThreadedMotoServer):  # type: ignore[misc]
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


def start_moto_server() -> tuple[SerialMotoServer, str]:
    """Start a :class:`SerialMotoServer` on 127.0.0.1 and a free port; returns it and its URL."""
    server = SerialMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


@contextmanager
def moto_server() -> Iterator[str]:
    """A :class:`SerialMotoServer` for the ``with`` block; yields its URL."""
    server, url = start_moto_server()
    try:
        yield url
    finally:
        server.stop()


def reset_moto(url: str) -> None:
    """Drop every moto backend's state (a server keeps it per process, shared with
    ``mock_aws``)."""
    request = urllib.request.Request(f"{url}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200
