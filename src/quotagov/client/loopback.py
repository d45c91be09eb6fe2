"""Which hosts are this machine's loopback: the one rule the client's local transport
and the tools' loopback guard (:mod:`quotagov_tools.local.loopback`) share.
"""

from __future__ import annotations

import ipaddress

#: Host names that always mean this machine.
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str | bytes | None) -> bool:
    """Whether ``host`` (a name or address literal) is this machine's loopback.

    ``localhost`` and addresses in 127.0.0.0/8 or ``::1`` are; everything else, including
    ``0.0.0.0`` (every interface) and names that might resolve elsewhere, is not.
    """
    if host is None:
        return False
    text = host.decode() if isinstance(host, bytes) else str(host)
    text = text.strip("[]").lower()
    if text in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(text.split("%", 1)[0]).is_loopback
    except ValueError:
        return False
