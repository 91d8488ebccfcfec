"""Embedding provider endpoint URLs: the roots a provider may be given, and which of them
stay on this machine (the egress rules' loopback test)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from ragit.contract.errors import InputInvalid

LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback_url(url: str | None) -> bool:
    """True only for a URL whose host is ``localhost`` or a loopback IP literal.

    The host is parsed, never substring-matched: ``127.0.0.1.evil.com`` and
    ``localhost.example`` are remote; ``127.0.0.2`` and ``[::1]`` are loopback;
    anything unparseable is remote.
    """
    if not url:
        return False
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host in LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def normalize_base_url(raw: str, source: str | None = None) -> str:
    """A provider root as docs/config.md allows it: absolute http(s), no credentials, no query.

    Scheme and host are lower-cased and trailing slashes trimmed. The raw value is
    never echoed in the error (it may hold a password); ``source`` names the
    environment variable it came from, if any.

    Raises:
        InputInvalid: the URL breaks one of the rules.
    """

    def invalid(reason: str) -> InputInvalid:
        where = f" ({source})" if source else ""
        return InputInvalid("embedding.base_url", f"{reason}{where}")

    value = raw.strip()
    if not value or any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in value):
        raise invalid("must be an absolute http(s) URL without spaces")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise invalid("is not a valid URL (bad host or port)") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise invalid("must use http or https")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise invalid("must not contain a username or password")
    if parts.query or value.endswith("?"):
        raise invalid("must not contain a query string")
    if parts.fragment or "#" in value:
        raise invalid("must not contain a fragment")
    host = parts.hostname
    if not host:
        raise invalid("must name a host")
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc = f"{netloc}:{port}"
    path = parts.path.rstrip("/")
    return f"{scheme}://{netloc}{path}"
