"""Counts every HTTP answer the hub client gets, by status, per hub origin (poll telemetry).

huggingface_hub sends all its requests through one shared httpx client (`get_session()`); a
response hook on it counts each answer, redirects included, under the origin it came from, so a
poll cycle reads the difference of two snapshots for its own hub. `install()` is idempotent and
re-checks the current session (a new client factory makes a new session without the hook).
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpx2

__all__ = ["install", "origin_of", "snapshot"]

_lock = threading.Lock()
_counts: dict[str, Counter[int]] = {}


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def _count(response: httpx2.Response) -> None:
    origin = origin_of(str(response.request.url))
    with _lock:
        _counts.setdefault(origin, Counter())[response.status_code] += 1


def install() -> None:
    """Make sure huggingface_hub's current session counts its answers."""
    from huggingface_hub import get_session

    session = get_session()
    hooks = session.event_hooks
    if _count not in hooks.get("response", []):
        session.event_hooks = {**hooks, "response": [*hooks.get("response", []), _count]}


def snapshot(endpoint: str) -> Counter[int]:
    """Answers counted so far from `endpoint`'s origin, by status code (a copy)."""
    with _lock:
        return Counter(_counts.get(origin_of(endpoint), Counter()))
