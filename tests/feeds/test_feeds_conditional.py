"""Conditional responses: If-Modified-Since dates, including RFC 5322's zone-less "-0000" form."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.requests import Request

from hubwatch.feeds.conditional import cached_response

STAMP = datetime(2024, 7, 23, 15, 44, 1, tzinfo=UTC)


def _request(since: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/", "headers": [(b"if-modified-since", since.encode())]})


def test_if_modified_since_in_gmt_or_minus_zero_is_utc() -> None:
    for header in ("Tue, 23 Jul 2024 15:44:01 GMT", "Tue, 23 Jul 2024 15:44:01 -0000"):
        assert cached_response(_request(header), b"x", "text/plain", STAMP).status_code == 304, header
    older = "Tue, 23 Jul 2024 15:44:00 -0000"
    assert cached_response(_request(older), b"x", "text/plain", STAMP).status_code == 200
    assert cached_response(_request("not a date"), b"x", "text/plain", STAMP).status_code == 200
