"""Golden files: the exact Atom, RSS and JSON Feed bytes for fixed items (deterministic: no clock).

Regenerate after an intended change with HUBWATCH_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hubwatch.feeds.builders.feeds import FeedMeta, atom_bytes, feed_entries, json_feed, rss_bytes
from hubwatch.domain.records import ChangeRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.storage.core.values import FeedItem

GOLDEN = Path(__file__).parent / "golden"
REPO = RepoId("meta-llama", "Llama-2-7b-hf")


def _items() -> list[FeedItem]:
    first = RevisionRecord("637a748546bb9abca62b0684183cc362bc1ece6d", None,
                           datetime(2023, 7, 18, 0, 0, tzinfo=UTC), "Squashing commit", authors=("osanseviero",))
    second = RevisionRecord("87a34353be0b8f180a400e5d7ddace5373c1a136", first.sha,
                            datetime(2023, 8, 1, 17, 30, tzinfo=UTC), "Update config.json")
    return [
        FeedItem(REPO, first, [ChangeRecord(Kind.CONTEXT, Severity.LOW, "config.json:max_position_embeddings",
                                            "max_position_embeddings=2048 <initial>")], []),
        FeedItem(REPO, second, [
            ChangeRecord(Kind.SPECIAL_TOKENS, Severity.HIGH, "config.json:pad_token_id", "pad_token_id removed (was 0)"),
            ChangeRecord(Kind.METADATA, Severity.INFO, "config.json:transformers_version", "4.31.0 → 4.32.0.dev0"),
        ], ["x_HUBWATCH-2023-f4c7258b21c7"]),
    ]


@pytest.mark.parametrize("fmt", ["atom", "rss", "json"])
def test_feed_bytes_match_the_golden_file(fmt: str) -> None:
    meta = FeedMeta(f"tag:hubwatch,2025:feeds/models/{REPO}", f"hubwatch: {REPO}",
                    f"Upstream changes to models/{REPO} seen by hubwatch",
                    f"https://hubwatch.example/models/{REPO}/feed.{fmt}", f"https://hubwatch.example/models/{REPO}")
    entries = feed_entries(_items(), "https://hubwatch.example")
    if fmt == "atom":
        body = atom_bytes(meta, entries)
    elif fmt == "rss":
        body = rss_bytes(meta, entries)
    else:
        body = (json.dumps(json_feed(meta, entries), ensure_ascii=False, indent=2) + "\n").encode()
    path = GOLDEN / f"model.{fmt}"
    if os.environ.get("HUBWATCH_UPDATE_GOLDEN") == "1":
        path.write_bytes(body)
    assert body == path.read_bytes(), f"{path.name} changed; rerun with HUBWATCH_UPDATE_GOLDEN=1 if intended"
