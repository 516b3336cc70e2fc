"""A dataset head's parquet conversion (`refs/convert/parquet`) read by the poll and kept in its snapshot
(tracker/hub_parquet.py, diff/dataset_parquet.py): through the official huggingface_hub client and the
emulator's conversion branch, on SQLite and PostgreSQL. Which requests it costs is seen from what the
client really sent (huggingface_hub's `set_client_factory`), not from hubwatch's own counting."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import HfApi

from hubwatch.diff.dataset_parquet import CONVERSION_PATH, read_conversion
from hubwatch.domain.records import RepoId
from hubwatch.domain.snapshot import Snapshot
from hubwatch.settings import Settings
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import NewRevisions, poll_repos

REVIEWS = RepoId.parse("datasets/hubwatch-test/reviews")
IMDB = RepoId.parse("datasets/stanfordnlp/imdb")
PARQUET = Path(__file__).parents[1] / "data" / "datasets" / "hubwatch-test__reviews" / "PARQUET"


@pytest.fixture
def sent() -> Iterator[list[str]]:
    """`METHOD /path?query` of every request huggingface_hub sends."""
    import httpx2
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

    seen: list[str] = []

    class Noting(httpx2.BaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.HTTPTransport()

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            seen.append(f"{request.method} {request.url.raw_path.decode()}")
            return self.inner.handle_request(request)

        def close(self) -> None:
            self.inner.close()

    set_client_factory(lambda: httpx2.Client(event_hooks={"request": [hf_request_event_hook]}, transport=Noting(),
                                             follow_redirects=True, timeout=None))  # fmt: skip
    try:
        yield seen
    finally:
        set_client_factory(default_client_factory)


def _poll(sim: Any, store: Any, repo: RepoId) -> Any:
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, hf_token="")
    store.watch(repo)
    (outcome,) = poll_repos([repo], hub=HubClient.from_settings(settings), store=store, settings=settings)
    return outcome


def _stored(store: Any, repo: RepoId, sha: str) -> Snapshot:
    files, contents = store.revisions.snapshot_files(repo, sha)
    return Snapshot(sha, {f.path: f for f in files}, contents)


def test_the_head_keeps_its_conversion_and_older_revisions_none(
    hubsim_factory: Callable[..., Any], datasets_root: Path, store: Any, sent: list[str]
) -> None:
    sim = hubsim_factory(root=datasets_root, at="v3")
    api = HfApi(endpoint=sim.url, token=False)
    target = api.list_repo_refs(REVIEWS.hub_id, repo_type="dataset").converts[0].target_commit
    sent.clear()
    outcome = _poll(sim, store, REVIEWS)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 3
    base = f"GET /api/datasets/{REVIEWS.hub_id}"
    asked = [s for s in sent if s.startswith((f"{base}/refs", f"{base}/commits/{target}", f"{base}/tree/{target}"))]
    assert [a.split("?")[0] for a in asked] == [f"{base}/refs", f"{base}/commits/{target}",
                                                f"{base}/tree/{target}"]  # once each, for the head alone
    head = _stored(store, REVIEWS, outcome.shas[-1])
    conversion = read_conversion(head)
    assert conversion is not None and conversion.commit == target and conversion.label == f"refs/convert/parquet@{target[:12]}"
    assert set(conversion.configs) == {"default"} and set(conversion.configs["default"]) == {"train", "test"}
    train = conversion.configs["default"]["train"]
    raw = (PARQUET / "v3" / "default" / "train" / "0000.parquet").read_bytes()
    assert [(s.path, s.size, s.oid) for s in train.shards] == [
        ("default/train/0000.parquet", len(raw), hashlib.sha256(raw).hexdigest())]
    assert train.bytes == len(raw) and not train.partial
    assert head.files[CONVERSION_PATH].size == len(head.contents[CONVERSION_PATH])
    for older in outcome.shas[:-1]:  # v1 had a conversion once, but the branch now holds v3's only
        assert CONVERSION_PATH not in _stored(store, REVIEWS, older).files

    # v4: the branch still holds v3's conversion, dated before v4's commit: v4 gets none.
    sim.advance(str(REVIEWS))
    sent.clear()
    outcome = _poll(sim, store, REVIEWS)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 1
    asked = [s.split("?")[0] for s in sent if s.startswith((f"{base}/refs", f"{base}/commits/{target}", f"{base}/tree/{target}"))]
    assert asked == [f"{base}/refs", f"{base}/commits/{target}"]  # no tree read of a conversion that is not v4's
    assert CONVERSION_PATH not in _stored(store, REVIEWS, outcome.shas[0]).files


def test_a_dataset_without_conversion_asks_its_refs_only(
    hubsim_factory: Callable[..., Any], datasets_root: Path, store: Any, sent: list[str]
) -> None:
    sim = hubsim_factory(root=datasets_root, at=None)
    outcome = _poll(sim, store, IMDB)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 2
    base = f"GET /api/datasets/{IMDB.hub_id}"
    listed = {s.split("?")[0] for s in sent if s.startswith(f"{base}/tree/")}
    assert len(listed) == 2  # main's two revisions, nothing else
    assert [s.split("?")[0] for s in sent if s.startswith(f"{base}/refs")] == [f"{base}/refs"]
    assert not [s for s in sent if "convert" in s]
    assert CONVERSION_PATH not in _stored(store, IMDB, outcome.shas[-1]).files
