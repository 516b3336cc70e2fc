"""The one URL-safety rule: only absolute http(s) URLs with a host are linked or published."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["is_safe_url"]


def is_safe_url(url: object) -> bool:
    """True for an absolute http(s) URL with a host; anything else (javascript:, data:, relative,
    not a string, or malformed such as `http://[::1`) is unsafe, never an exception."""
    if not isinstance(url, str):
        return False
    try:
        parts = urlsplit(url)
        host, _port = parts.hostname, parts.port  # an unbalanced '[' or an out-of-range port raises
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc) and bool(host)
