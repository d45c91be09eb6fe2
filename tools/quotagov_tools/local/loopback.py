"""Local commands never leave loopback: the address check and a process-wide guard.

The local runtime (``quotagov demo``, ``serve``, ``invoke``) talks to moto in-process and
to the fake Slack on 127.0.0.1. A recorded event can still name a real host, e.g. the
sample Slack click's ``response_url`` (``https://hooks.slack.com/...``), which the
handler answers through. :class:`LoopbackGuard` makes such a connection fail instead
of reaching the Internet: while installed, ``socket.getaddrinfo`` refuses every name
that is not ``localhost`` or a loopback address literal, and ``socket.connect`` every
address outside 127.0.0.0/8 and ::1, with :class:`NonLoopbackError` (an ``OSError``, so
HTTP clients report it as a transport error; the Slack adapter turns it into a
``ChatError``, which the handlers log).
"""

from __future__ import annotations

import socket
import threading
from typing import Any, ClassVar

from quotagov.client.loopback import LOOPBACK_NAMES, is_loopback

__all__ = ["LOOPBACK_NAMES", "LoopbackGuard", "NonLoopbackError", "is_loopback"]


class NonLoopbackError(OSError):
    """A local command tried to reach a host that is not loopback."""


class LoopbackGuard:
    """Refuse non-loopback connections in this process while installed (re-entrant).

    ``install()`` and ``uninstall()`` are counted, so nested local runtimes share one
    guard; the originals are put back when the last one uninstalls. Unix sockets and
    socket pairs are not affected.
    """

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _depth: ClassVar[int] = 0
    _originals: ClassVar[dict[str, Any]] = {}

    @classmethod
    def install(cls) -> None:
        """Start refusing non-loopback names and addresses."""
        with cls._lock:
            cls._depth += 1
            if cls._depth > 1:
                return
            cls._originals = {
                "getaddrinfo": socket.getaddrinfo,
                "connect": socket.socket.connect,
                "connect_ex": socket.socket.connect_ex,
            }
            original_getaddrinfo = cls._originals["getaddrinfo"]
            original_connect = cls._originals["connect"]
            original_connect_ex = cls._originals["connect_ex"]

            def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
                if host is not None and not is_loopback(host):
                    raise NonLoopbackError(
                        f"quotagov local runtime: {host!r} is not loopback; local commands "
                        "never leave 127.0.0.1"
                    )
                return original_getaddrinfo(host, *args, **kwargs)

            def check(sock: socket.socket, address: Any) -> None:
                if sock.family in (socket.AF_INET, socket.AF_INET6):
                    host = address[0] if isinstance(address, tuple) else address
                    if not is_loopback(host):
                        raise NonLoopbackError(
                            f"quotagov local runtime: {host!r} is not loopback; local "
                            "commands never leave 127.0.0.1"
                        )

            def connect(sock: socket.socket, address: Any) -> None:
                check(sock, address)
                original_connect(sock, address)

            def connect_ex(sock: socket.socket, address: Any) -> int:
                check(sock, address)
                return int(original_connect_ex(sock, address))

            socket.getaddrinfo = getaddrinfo
            socket.socket.connect = connect  # type: ignore[method-assign,assignment]
            socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]

    @classmethod
    def uninstall(cls) -> None:
        """Undo one :meth:`install`; the last one restores the socket functions."""
        with cls._lock:
            if cls._depth == 0:
                return
            cls._depth -= 1
            if cls._depth:
                return
            socket.getaddrinfo = cls._originals["getaddrinfo"]
            socket.socket.connect = cls._originals["connect"]  # type: ignore[method-assign]
            socket.socket.connect_ex = cls._originals["connect_ex"]  # type: ignore[method-assign]

    @classmethod
    def installed(cls) -> bool:
        """Whether the guard is on."""
        return cls._depth > 0
