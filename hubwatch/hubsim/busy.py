"""A busy hub: synthetic recently-modified repos, in the `/api/models` or `/api/datasets` listing only.

`SimState.busy_listing = (count, when)` adds `count` models `busy-hub/model-N`, and
`SimState.busy_datasets_listing = (count, when)` `count` datasets `busy-hub/data-N`, all modified at
`when`, to their listing (no repo behind them): a listing with more than 10,000 entries in a window,
as the real hub shows when thousands of repos change an hour. Each listing is busy on its own.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from hubwatch.hubsim.responses import iso

__all__ = ["busy_datasets", "busy_models"]


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


def busy_datasets(count: int, when: datetime) -> list[dict[str, object]]:
    """The datasets listing's entries of a busy hub, shaped as `/api/datasets` lists a dataset."""
    stamp = iso(when)
    out: list[dict[str, object]] = []
    for n in range(count):
        rid = f"busy-hub/data-{n}"
        digest = hashlib.sha1(f"datasets/{rid}".encode()).hexdigest()
        out.append({
            "_id": digest[:24], "id": rid, "author": "busy-hub", "sha": digest, "lastModified": stamp,
            "createdAt": stamp, "private": False, "gated": False, "disabled": False, "tags": [],
            "downloads": 0, "likes": 0,
        })
    return out
