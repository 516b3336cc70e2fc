"""A dataset head's parquet conversion from the hub: the branch `refs/convert/parquet` that the hub's
converter writes, read for the head a poll stores, as the document `diff.dataset_parquet` keeps.

Part of the hub adapter beside `tracker/hub.py` (whose request guard and error translation it uses).
Which revision a conversion belongs to: the hub converts main's current head only, some minutes
after it moves, and the branch keeps only its newest conversion. So the conversion is taken for
the head a poll stores, and only when the converter's commit is dated at or after that head's
commit (an older one converted an earlier revision: the head gets none rather than a wrong one).
Revisions below the head (a backfill, several commits in one poll) get none: what the branch said
of them is gone.

Each split's rows and columns come from its shards' parquet footers, read by range requests (the
last 64 KiB of a shard, and the footer itself when it is longer; at most 1 MiB) and parsed by
`diff.parquet_footer`; never a row. A footer that cannot be read (not parquet, a length past the
bounds, truncated, garbage) is noted on its split, whose rows are then unknown; the rest is kept.

Requests, per poll that stores new revisions of a dataset (an idle cycle asks none): the refs (1),
and where they name a conversion other than the one the parent kept the converter commit's date
(1), and where that is at or after the head's, the branch's tree (1) and one or
two per shard whose footer is read (`dataset_parquet.footers_to_read`: at most 32 a split, 256 in all;
a shard whose LFS oid the parent's kept conversion read already is not read again).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from hubwatch.diff.dataset_parquet import (CONVERSION_PATH, PARQUET_REF, conversion_document, footers_known,
                                           footers_to_read, read_conversion)
from hubwatch.diff.parquet_footer import Footer, ParquetFooterError, footer_length, read_footer
from hubwatch.domain.records import RepoId, RevisionRecord
from hubwatch.domain.snapshot import Snapshot
from hubwatch.domain.times import rfc3339
from hubwatch.tracker.errors import InvalidContent

if TYPE_CHECKING:
    from hubwatch.tracker.hub import HfHubClient

__all__ = ["MAX_TREE_ENTRIES", "parquet_conversion"]

MAX_TREE_ENTRIES = 50_000  # entries of the branch's tree read at most (the converter writes one per shard)
FOOTER_TAIL = 64 * 1024  # the last bytes of a shard asked first: its footer, most often, in one request


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


def parquet_conversion(client: HfHubClient, repo: RepoId, head: RevisionRecord | str,
                       previous: bytes | None = None) -> bytes | None:  # fmt: skip
    """The conversion of `head` as the stored document, or None when the dataset has no conversion
    branch or its newest conversion is of an earlier revision. `head`: the main branch's head a
    poll stores (its commit and date), or a commit sha (`dataset_summary`): None unless it is
    main's head now, whose date is then asked (one request more). `previous`: an earlier kept
    document (of an earlier revision: the parent's), whose footers of shards with the same LFS oid
    are taken instead of read again; the branch still at its converter commit holds no conversion
    of `head` (None, and that commit's date is not asked).
    Raises the adapter's HubError types (InvalidContent for a tree past the bounds)."""
    from huggingface_hub.hf_api import RepoFile

    rid = str(repo)
    api = client._api
    sha = head if isinstance(head, str) else head.sha
    refs = client._call(lambda: api.list_repo_refs(repo.hub_id, repo_type="dataset"), rid, sha)
    target = next((r.target_commit for r in refs.converts or () if r.ref == PARQUET_REF), None)
    if not target:
        return None
    if previous is not None and _converted_commit(previous) == target:
        return None  # the conversion an earlier revision kept: this head's is not out yet (no date asked)
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
    wanted = footers_to_read(entries)
    known = footers_known(previous, entries) if previous is not None else {}
    jobs = {path: partial(_footer, client, repo, target, path, size) for path, size in wanted.items() if path not in known}
    footers: dict[str, Footer | str] = {path: known[path] for path in wanted if path in known}
    footers |= {path: found for path, found in client._fetch_all(jobs).items() if isinstance(found, (Footer, str))}
    return conversion_document(target, rfc3339(converted), entries, footers)


def _converted_commit(document: bytes) -> str | None:
    """The converter commit a kept conversion document names (None when it cannot be read)."""
    kept = read_conversion(Snapshot("", {}, {CONVERSION_PATH: document}))
    return kept.commit if kept is not None else None


def _tail(client: HfHubClient, repo: RepoId, sha: str, path: str, start: int, end: int) -> bytes:
    """Bytes `start`..`end` (inclusive) of one file of the branch: one range request, never more read."""
    wanted = end - start + 1
    body = client.bounded_get(repo, sha, path, wanted, (start, end))  # None: the range was not honoured
    if body is None or len(body) != wanted:
        raise InvalidContent(f"{path}: asked for {wanted:,} bytes of its end, answered "
                             f"{'more' if body is None else f'{len(body):,}'}", repo_id=str(repo), revision=sha)  # fmt: skip
    return body


def _footer(client: HfHubClient, repo: RepoId, sha: str, path: str, size: int) -> Footer | str:
    """One shard's footer (at most two range requests: its last `FOOTER_TAIL` bytes, and the footer
    itself when it is longer), or why it cannot be read, in one line."""
    try:
        tail = _tail(client, repo, sha, path, max(0, size - FOOTER_TAIL), size - 1)
        length = footer_length(tail, size)
        if length + 8 <= len(tail):
            raw = tail[len(tail) - 8 - length:-8]
        else:
            raw = _tail(client, repo, sha, path, size - 8 - length, size - 9)
        return read_footer(raw)
    except (ParquetFooterError, InvalidContent) as exc:
        return f"{path}: {str(exc).removeprefix(f'{repo}@{sha[:12]}: ')}"[:300]
