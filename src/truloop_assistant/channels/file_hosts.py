"""Whether a file's URL is on the hosts files are fetched from (``TRULOOP_SENDBIRD_FILE_HOSTS``).

Checked before any connection is made, and again for every redirect. A pattern ``*.x.y`` matches
``a.x.y`` and ``a.b.x.y``, never ``x.y`` itself nor ``x.y.evil.com``; a plain pattern matches only
its own host. A pattern without a port matches the scheme's default port only. HTTPS only: plain
HTTP is allowed to a loopback address alone, and only when a pattern names it with its port (a
local test server), so no listed name can be fetched in clear text.
"""

from __future__ import annotations

import ipaddress

import httpx

_DEFAULT_PORTS = {"https": 443, "http": 80}


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _matches(pattern: str, host: str, port: int, default_port: int) -> bool:
    name, _, wanted = pattern.partition(":")
    if (int(wanted) if wanted else default_port) != port:
        return False
    if name.startswith("*."):
        return host.endswith(name[1:]) and len(host) > len(name) - 1
    return host == name


def allowed(url: httpx.URL, patterns: list[str]) -> bool:
    """Whether ``url`` may be fetched: on a listed host, over HTTPS (or HTTP to a named loopback port)."""
    scheme = url.scheme
    if url.userinfo or not url.raw_host or scheme not in _DEFAULT_PORTS:
        return False
    # The ASCII (IDNA) form: patterns are ASCII, and a look-alike Unicode name never equals one.
    host = url.raw_host.decode("ascii", "replace").lower().rstrip(".")
    default_port = _DEFAULT_PORTS[scheme]
    port = url.port or default_port
    if scheme == "http":
        return _is_loopback(host) and f"{host}:{port}" in patterns
    return any(_matches(pattern, host, port, default_port) for pattern in patterns)
