"""A busy hub: synthetic recently-modified models, in the `/api/models` listing only.

`SimState.busy_listing = (count, when)` adds `count` models `busy-hub/model-N`, all modified at
`when`, to the listing (no repo behind them): a listing with more than 10,000 entries in a window,
as the real hub shows when thousands of models change an hour.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from hubwatch.hubsim.responses import iso

__all__ = ["busy_models"]


def busy_models(count: int, when: datetime) -> list[dict[str, object]]:
    stamp = iso(when)
    out: list[dict[str, object]] = []
    for n in range(count):
        rid = f"busy-hub/model-{n}"
        digest = hashlib.sha1(rid.encode()).hexdigest()
        out.append({
            "_id": digest[:24], "id": rid, "modelId": rid, "author": "busy-hub", "sha": digest,
            "lastModified": stamp, "createdAt": stamp, "private": False, "gated": False, "tags": [],
            "downloads": 0, "likes": 0,
        })
    return out
