"""Which addresses only this machine reaches: ``serve`` warns about the
others, and its server on a loopback address answers only requests that name
one."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """``localhost``, 127.0.0.0/8 or ``::1`` (bracketed or not). A DNS name
    is not, whatever it resolves to now: it may be rebound to 127.0.0.1."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:
        return False
