"""A dataset head's parquet conversion from the hub: the branch `refs/convert/parquet` that the hub's
converter writes, read for the head a poll stores, as the document `diff.dataset_parquet` keeps.

Part of the hub adapter beside `tracker/hub.py` (whose request guard and error translation it uses).
Which revision a conversion belongs to: the hub converts main's current head only, some minutes
after it moves, and the branch keeps only its newest conversion. So the conversion is taken for
the head a poll stores, and only when the converter's commit is dated at or after that head's
commit (an older one converted an earlier revision: the head gets none rather than a wrong one).
Revisions below the head (a backfill, several commits in one poll) get none: what the branch said
of them is gone.

Requests, per poll that stores new revisions of a dataset (an idle cycle asks none): the refs (1),
and where they name a conversion the converter commit's date (1) and the branch's tree (1).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from hubwatch.diff.dataset_parquet import PARQUET_REF, conversion_document
from hubwatch.domain.records import RepoId, RevisionRecord
from hubwatch.domain.times import rfc3339
from hubwatch.tracker.errors import InvalidContent

if TYPE_CHECKING:
    from hubwatch.tracker.hub import HfHubClient

__all__ = ["MAX_TREE_ENTRIES", "parquet_conversion"]

MAX_TREE_ENTRIES = 50_000  # entries of the branch's tree read at most (the converter writes one per shard)


def _commit_date(client: HfHubClient, repo: RepoId, sha: str) -> datetime:
    """The date of commit `sha`: the first entry of its commit listing (one page)."""
    from huggingface_hub.utils import build_hf_headers, paginate, parse_datetime  # type: ignore[attr-defined]

    def fetch() -> Any:
        url = f"{client.endpoint}/api/datasets/{repo.hub_id}/commits/{quote(sha, safe='')}"
        headers = build_hf_headers(token=client._api.token, library_name="hubwatch")
        for item in paginate(url, params={}, headers=headers, timeout=client._timeout):
            return item  # the commit itself: no further page is asked
        return None

    item = client._call(fetch, str(repo), sha)
    date = item.get("date") if isinstance(item, Mapping) and item.get("id") == sha else None
    try:
        when = parse_datetime(date) if isinstance(date, str) else None
    except ValueError:
        when = None
    if when is None:
        raise InvalidContent(f"{PARQUET_REF}: commit {sha[:12]} has no readable date in the hub's commit list",
                             repo_id=str(repo), revision=sha)  # fmt: skip
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def parquet_conversion(client: HfHubClient, repo: RepoId, head: RevisionRecord | str) -> bytes | None:
    """The conversion of `head` as the stored document, or None when the dataset has no conversion
    branch or its newest conversion is of an earlier revision. `head`: the main branch's head a
    poll stores (its commit and date), or a commit sha (`dataset_summary`): None unless it is
    main's head now, whose date is then asked (one request more). Raises the adapter's HubError
    types (InvalidContent for a tree past the bounds)."""
    from huggingface_hub.hf_api import RepoFile

    rid = str(repo)
    api = client._api
    sha = head if isinstance(head, str) else head.sha
    refs = client._call(lambda: api.list_repo_refs(repo.hub_id, repo_type="dataset"), rid, sha)
    target = next((r.target_commit for r in refs.converts or () if r.ref == PARQUET_REF), None)
    if not target:
        return None
    if isinstance(head, str):
        if next((b.target_commit for b in refs.branches or () if b.name == "main"), None) != head:
            return None  # not main's head: the branch holds no conversion of it
        head_date = _commit_date(client, repo, head)
    else:
        head_date = head.date
    converted = _commit_date(client, repo, target)
    if converted < head_date:
        return None  # converts an earlier revision; this head's conversion is not out yet

    def tree() -> list[tuple[str, int | None, str | None]] | None:
        out: list[tuple[str, int | None, str | None]] = []
        for entry in api.list_repo_tree(repo.hub_id, recursive=True, revision=target, repo_type="dataset"):
            if len(out) >= MAX_TREE_ENTRIES:
                return None
            if isinstance(entry, RepoFile):
                out.append((entry.path, entry.size, entry.lfs.sha256 if entry.lfs is not None else None))
        return out

    entries = client._call(tree, rid, target)
    if entries is None:
        raise InvalidContent(f"{PARQUET_REF}: more than {MAX_TREE_ENTRIES:,} files in the conversion's tree",
                             repo_id=rid, revision=target)  # fmt: skip
    return conversion_document(target, rfc3339(converted), entries)
