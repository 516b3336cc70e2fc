"""Counts every request the hub client sends, by the status it got, per hub origin (poll telemetry).

huggingface_hub sends all its requests through one shared httpx client (`get_session()`), whose
transport hubwatch wraps (`tracker/transport.py`); that wrapper calls `record` once per request
sent: with the answer's status (each hop of a redirect is a request of its own, so a rename's 307
and the answer it leads to count once each), or with `NO_ANSWER` when the request got none
(connection refused or reset, DNS, connect or read timeout). Counting below the library's event
hooks, an answer hubwatch turns into an exception (a 429 that defers the repo, a 5xx, inside the
library's own paged listings too) is counted like any other. A poll cycle reads the difference of
two snapshots for its own hub.
"""

from __future__ import annotations

import threading
from collections import Counter
from urllib.parse import urlsplit

__all__ = ["NO_ANSWER", "origin_of", "record", "snapshot"]

NO_ANSWER = 0  # the status counted for a request that got no answer at all

_lock = threading.Lock()
_counts: dict[str, Counter[int]] = {}


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def record(url: str, status: int) -> None:
    """Count one request sent to `url`'s origin: its answer's status, or NO_ANSWER."""
    origin = origin_of(url)
    with _lock:
        _counts.setdefault(origin, Counter())[status] += 1


def snapshot(endpoint: str) -> Counter[int]:
    """Requests counted so far to `endpoint`'s origin, by status (NO_ANSWER: none came; a copy)."""
    with _lock:
        return Counter(_counts.get(origin_of(endpoint), Counter()))
