"""Conditional responses: ETag and Last-Modified, answered with 304 when the client is current."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from fastapi import Request, Response

from hubwatch.feeds.text import as_utc

__all__ = ["cached_response", "etag_of"]


def etag_of(body: bytes) -> str:
    """A strong ETag derived from the body alone (same bytes, same tag, on any worker)."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _matches(header: str, etag: str) -> bool:
    if header.strip() == "*":
        return True
    candidates = (part.strip() for part in header.split(","))
    return any(c.removeprefix("W/") == etag for c in candidates)


def _not_modified_since(header: str, last_modified: datetime) -> bool:
    try:
        since = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return False
    if since is None:
        return False
    if since.tzinfo is None:
        since = since.replace(tzinfo=UTC)  # RFC 5322's "-0000": a UTC time with no zone named
    return as_utc(last_modified).replace(microsecond=0) <= as_utc(since)


def cached_response(
    request: Request, body: bytes, media_type: str, last_modified: datetime | None, max_age: int = 60
) -> Response:
    """`body` with ETag/Last-Modified headers, or an empty 304 when If-None-Match (or, without it,
    If-Modified-Since) shows the client already has it."""
    etag = etag_of(body)
    headers = {"ETag": etag, "Cache-Control": f"public, max-age={max_age}"}
    if last_modified is not None:
        headers["Last-Modified"] = format_datetime(as_utc(last_modified), usegmt=True)
    inm = request.headers.get("if-none-match")
    ims = request.headers.get("if-modified-since")
    if inm is not None:
        fresh = _matches(inm, etag)
    else:
        fresh = ims is not None and last_modified is not None and _not_modified_since(ims, last_modified)
    if fresh:
        return Response(status_code=304, headers=headers)
    return Response(content=body, media_type=media_type, headers=headers)
