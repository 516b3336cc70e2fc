"""The one interface to the hub: huggingface_hub calls in, typed records out, our errors raised.

Every request hubwatch makes to the hub goes through `HubClient`; library errors are translated
into `hubwatch.tracker.errors` types here and nowhere else, each carrying the repo and revision.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
import contextvars
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar

from hubwatch.domain.records import FileRecord, InvalidRepoId, RepoId, RepoType, RevisionRecord
from hubwatch.tracker.errors import InvalidContent
from hubwatch.tracker.guard import HubGuard
from hubwatch.tracker.hub_errors import translate_errors
from hubwatch.tracker.transport import install as install_transport, origin_of
from hubwatch.domain.remote_data import MAX_DOWNLOAD_BYTES, load_remote_json
from hubwatch.domain.snapshot import UNREADABLE_HEADER, Snapshot, is_tracked

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from hubwatch.settings import Settings

__all__ = ["HfHubClient", "HubClient", "RecentModel"]

T = TypeVar("T")
_PARALLEL = 8  # concurrent file/header fetches within one snapshot
_SNAPSHOTS_AT_ONCE = 4  # a client's fetch threads: _PARALLEL for each of this many snapshots (HUBWATCH_POLL_CONCURRENCY)


@dataclass(frozen=True)
class RecentModel:
    """One entry of the hub's recently-modified listing of models or of datasets (`repo` says which)."""

    repo: RepoId
    sha: str | None
    last_modified: datetime | None


class HfHubClient:
    """Reads repos from the hub (or the emulator) with the official client: the real
    `tracker.hub_client.HubClient`."""

    def __init__(
        self,
        api: HfApi,
        *,
        timeout_s: float = 20.0,
        max_download_bytes: int = MAX_DOWNLOAD_BYTES,
        guard: HubGuard | None = None,
        snapshots_at_once: int = _SNAPSHOTS_AT_ONCE,
    ) -> None:
        install_transport()  # hubwatch's deadlines under the library, and none of its own retries
        self._api = api
        # The threads snapshots fetch their files on: started as fetches need them, kept for the next
        # snapshot (one pool per snapshot started and joined threads for every revision).
        self._fetch_threads = _PARALLEL * max(1, snapshots_at_once)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._timeout = timeout_s
        self._max_download = max_download_bytes
        self.guard = guard or HubGuard(origin_of(self.endpoint), timeout_s=timeout_s)
        self.guard.bind_token(lambda: self.token)

    @classmethod
    def from_settings(cls, settings: Settings) -> HfHubClient:
        from huggingface_hub import HfApi

        install_transport()  # before the client exists: no request of its own to another host
        endpoint = settings.hub_endpoint.rstrip("/")
        token = settings.hf_token or None  # an empty setting is no token (as an empty HF_TOKEN is)
        api = HfApi(endpoint=endpoint, token=token, library_name="hubwatch")
        guard = HubGuard(
            origin_of(endpoint),
            timeout_s=settings.hub_timeout_s,
            retries=settings.hub_retries,
            breaker_failures=settings.breaker_failures,
            breaker_cooldown_s=settings.breaker_cooldown_s,
        )
        return cls(api, timeout_s=settings.hub_timeout_s, guard=guard, snapshots_at_once=settings.poll_concurrency)

    def close(self) -> None:
        """Stop the fetch threads: idle ones exit now, one under way when its fetch ends (a later
        snapshot starts new ones)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _fetcher(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._fetch_threads, thread_name_prefix="hubwatch-fetch")
            return self._pool

    @property
    def token(self) -> str | None:
        """The token the next request sends: the one given (HUBWATCH_HF_TOKEN, HF_TOKEN), else what
        huggingface_hub reads at each request — its token file (`hf auth login`, HF_TOKEN_PATH) —
        so a token rotated in that file is used, and a rejection lifted, without a restart."""
        token = self._api.token
        if isinstance(token, str):
            return token
        if token is False:
            return None
        from huggingface_hub import constants, get_token

        return None if constants.HF_HUB_DISABLE_IMPLICIT_TOKEN else get_token()

    @property
    def endpoint(self) -> str:
        return str(self._api.endpoint).rstrip("/")

    # -- error translation: the only place library errors become ours ---------------------------

    def _call(self, fn: Callable[[], T], repo: str | None, revision: str | None = None, file: str | None = None) -> T:
        def translated() -> T:
            with translate_errors(self.endpoint, repo, revision, file):
                return fn()

        return self.guard.call(translated, repo, revision)

    # -- repo state ------------------------------------------------------------------------------

    def head(self, repo: RepoId, revision: str | None = None) -> str:
        """The commit sha the repo's main branch (or `revision`) points at: one request."""
        return self.head_and_id(repo, revision)[0]

    def head_and_id(self, repo: RepoId, revision: str | None = None) -> tuple[str, RepoId]:
        """The head's commit sha and the id the hub answered for `repo`: one request. The id is
        the hub's spelling, and after a rename upstream the new id (the hub answers the old one
        with a 307, which the client follows); `repo` itself when the answer names no valid id."""
        rid = str(repo)
        api = self._api

        def fetch() -> Any:
            if repo.is_dataset:
                return api.dataset_info(repo.hub_id, revision=revision, expand=["sha"], timeout=self._timeout)
            return api.model_info(repo.hub_id, revision=revision, expand=["sha"], timeout=self._timeout)

        info = self._call(fetch, rid, revision)
        if not info.sha:
            raise InvalidContent(f"{repo.hub_repo_type} info carries no commit sha", repo_id=rid, revision=revision)
        try:
            answered = RepoId.parse(str(info.id), repo.repo_type) if info.id else repo
        except InvalidRepoId:
            answered = repo
        return str(info.sha), answered

    def commits(
        self, repo: RepoId, *, limit: int | None = None, since: Container[str] = frozenset()
    ) -> list[RevisionRecord]:
        """The main branch's commits, oldest first; each one's parent is the commit before it.

        The hub lists them newest first, a page at a time, and only the pages needed are asked:
        `limit` keeps the newest `limit` commits (read with the one before them, so their parent
        links still point at the real predecessor, which is then not in the list); with `since`
        (shas already stored) the listing stops at the first of them, which is returned as the
        oldest commit, its parent unknown (None). A poll that finds one new commit on a repo of
        thousands then asks one page, not the whole history.
        """
        from huggingface_hub.utils import build_hf_headers, paginate  # type: ignore[attr-defined]  # lazy module

        rid = str(repo)

        def listed() -> list[Any]:
            url = f"{self.endpoint}/api/{repo.hub_repo_type}s/{repo.hub_id}/commits/main"
            headers = build_hf_headers(token=self._api.token, library_name="hubwatch")
            items: list[Any] = []
            for item in paginate(url, params={}, headers=headers, timeout=self._timeout):
                items.append(item)  # the next page is asked only when this one is used up
                if (isinstance(item, Mapping) and item.get("id") in since) or (limit is not None and len(items) > limit):
                    break
            return items

        items = list(reversed(self._call(listed, rid)))  # the hub lists newest first
        records: list[RevisionRecord] = []
        parent: str | None = None
        for item in items:
            sha, created = _commit_fields(item, rid)
            authors = item.get("authors")
            records.append(
                RevisionRecord(
                    sha=sha,
                    parent=parent,
                    date=created,
                    title=_text(item.get("title")),
                    message=_text(item.get("message")),
                    authors=tuple(str(a["user"]) for a in authors if isinstance(a, Mapping) and a.get("user"))
                    if isinstance(authors, list) else (),
                )
            )
            parent = sha
        return records[-limit:] if limit is not None and limit < len(records) else records

    def recently_modified(
        self, since: datetime, *, max_items: int = 10_000, repo_type: RepoType = RepoType.MODEL
    ) -> dict[RepoId, RecentModel] | None:
        """Repos of `repo_type` (models, or datasets: `list_datasets`) modified on the hub at or after
        `since` (one listing request per page).

        Pages are read newest first and stop at the first older entry; None when `max_items`
        entries did not reach back to `since` (the listing cannot vouch for the others then).
        """
        repo_type = RepoType.parse(repo_type)

        def listed() -> Iterable[Any]:
            if repo_type is RepoType.DATASET:
                return self._api.list_datasets(sort="last_modified", expand=["sha", "lastModified"])
            return self._api.list_models(sort="last_modified", expand=["sha", "lastModified"])

        def fetch() -> dict[RepoId, RecentModel] | None:
            out: dict[RepoId, RecentModel] = {}
            for count, info in enumerate(listed()):
                modified = info.last_modified
                if modified is not None and modified.tzinfo is None:
                    modified = modified.replace(tzinfo=timezone.utc)
                if modified is None:
                    return None  # a listing without dates cannot tell what is unchanged
                if modified < since:
                    return out
                if count >= max_items:
                    return None
                try:
                    rid = RepoId.parse(info.id, repo_type)
                except ValueError:
                    continue
                out.setdefault(rid, RecentModel(rid, info.sha, modified))
            return out

        return self._call(fetch, None)

    def derivatives(
        self, base: RepoId, relations: Sequence[str], *, limit: int | None = None
    ) -> list[tuple[RepoId, str]]:
        """The models whose card names `base` as `base_model`, with the relation the hub tags them
        with: the listing filtered on `base_model:<relation>:ORG/NAME`, one relation at a time,
        every page (Link `rel="next"`); at most `limit` in all, in the listing's order."""
        rid = str(base)

        def fetch() -> list[tuple[RepoId, str]]:
            found: dict[RepoId, str] = {}
            for relation in relations:
                for info in self._api.list_models(filter=f"base_model:{relation}:{base.hub_id}"):
                    if limit is not None and len(found) >= limit:
                        return list(found.items())
                    try:
                        repo = RepoId.parse(info.id)
                    except ValueError:
                        continue  # an id the hub should never list: not ours to follow
                    if repo != base:
                        found.setdefault(repo, relation)
            return list(found.items())

        return self._call(fetch, rid)

    # -- one revision ----------------------------------------------------------------------------

    def listing(self, repo: RepoId, sha: str) -> dict[str, FileRecord]:
        """Every file of the revision with its size, git blob id and LFS sha256."""
        from huggingface_hub.hf_api import RepoFile

        rid = str(repo)

        def fetch() -> dict[str, FileRecord]:
            files: dict[str, FileRecord] = {}
            tree = self._api.list_repo_tree(repo.hub_id, recursive=True, revision=sha, repo_type=repo.hub_repo_type)
            for entry in tree:
                if isinstance(entry, RepoFile):
                    lfs = entry.lfs.sha256 if entry.lfs is not None else None
                    files[entry.path] = FileRecord(entry.path, entry.size, entry.blob_id, lfs)
            return files

        return self._call(fetch, rid, sha)

    def download(
        self, repo: RepoId, sha: str, path: str, *, expected_size: int | None = None, check_json: bool = True
    ) -> bytes:
        """The raw bytes of one (small) file at a revision, checked against the listed size (and,
        with `check_json`, that a `*.json` file parses within `remote_data`'s limits).

        A file listed, or served, larger than `max_download_bytes` (default `MAX_DOWNLOAD_BYTES`)
        is refused (InvalidContent) without reading the rest of it.
        """
        rid = str(repo)
        limit = self._max_download
        too_large = f"{path}: larger than the {limit} bytes hubwatch downloads of a tracked file"
        if expected_size is not None and expected_size > limit:
            raise InvalidContent(f"{too_large} ({expected_size} bytes listed)", repo_id=rid, revision=sha)
        body = self.bounded_get(repo, sha, path, limit)
        if body is None:
            raise InvalidContent(too_large, repo_id=rid, revision=sha)
        if expected_size is not None and len(body) != expected_size:
            raise InvalidContent(
                f"{path}: truncated response ({len(body)} of {expected_size} bytes)", repo_id=rid, revision=sha
            )
        if check_json and path.endswith(".json"):
            try:
                load_remote_json(body)
            except ValueError as exc:  # not JSON, not UTF-8, too large or too deeply nested
                raise InvalidContent(f"{path}: not valid JSON ({exc})", repo_id=rid, revision=sha) from exc
        return body

    def bounded_get(self, repo: RepoId, sha: str, path: str, limit: int, byte_range: tuple[int, int] | None = None,
                    ) -> bytes | None:  # fmt: skip
        """One file of a revision (or bytes `byte_range` = (first, last) of it: one range request)
        through huggingface_hub's session, its body read as it streams and at most `limit` bytes of
        it: None past that, the rest never read. Hub errors are translated as any request's."""
        from huggingface_hub import get_session, hf_hub_url, hf_raise_for_status
        from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]  # lazy module

        def fetch() -> bytes | None:
            url = hf_hub_url(repo.hub_id, path, repo_type=repo.hub_repo_type, revision=sha, endpoint=self.endpoint)
            headers = build_hf_headers(token=self._api.token, library_name="hubwatch")
            if byte_range is not None:
                headers["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
            with get_session().stream("GET", url, headers=headers, follow_redirects=True,
                                      timeout=self._timeout) as response:  # fmt: skip
                hf_raise_for_status(response)
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > limit:
                        return None
                    chunks.append(chunk)
                return b"".join(chunks)

        return self._call(fetch, str(repo), sha, path)

    def safetensors_header(self, repo: RepoId, sha: str, path: str, *, lenient: bool = False) -> dict[str, Any]:
        """Tensor name → {"dtype", "shape"} of one safetensors file, read by range requests.

        A header that cannot be read (its length beyond the file or the limits, nested without end,
        not JSON) is InvalidContent; with `lenient` (a snapshot) it is what upstream committed, returned
        as `{UNREADABLE_HEADER: reason}` for the diff to record as a finding.
        """
        from huggingface_hub.errors import SafetensorsParsingError

        rid = str(repo)

        def fetch() -> dict[str, Any]:
            try:
                meta = self._api.parse_safetensors_file_metadata(
                    repo.hub_id, path, repo_type=repo.hub_repo_type, revision=sha, timeout=self._timeout
                )
                return {name: {"dtype": t.dtype, "shape": list(t.shape)} for name, t in sorted(meta.tensors.items())}
            except (SafetensorsParsingError, RecursionError, KeyError, TypeError, ValueError) as exc:
                if not lenient:
                    raise
                text = str(exc).strip().splitlines()
                kind = "nested too deeply" if isinstance(exc, RecursionError) else (text[0] if text else repr(exc))
                return {UNREADABLE_HEADER: kind[:300]}

        return self._call(fetch, rid, sha, path)

    def snapshot(self, repo: RepoId, sha: str, *, previous: Snapshot | None = None) -> Snapshot:
        """The revision's listing, tracked contents and safetensors headers.

        Files whose blob id (or LFS sha256) equals the one in `previous` are taken from it
        instead of being fetched again.
        """
        files = self.listing(repo, sha)
        contents: dict[str, bytes] = {}
        headers: dict[str, dict[str, Any]] = {}
        fetch: dict[str, Callable[[], object]] = {}
        for path, record in sorted(files.items()):
            old = previous.files.get(path) if previous is not None else None
            same = old is not None and old.blob_id == record.blob_id and old.lfs_sha256 == record.lfs_sha256
            if path.endswith(".safetensors"):
                if same and previous is not None and path in previous.safetensors:
                    headers[path] = dict(previous.safetensors[path])
                else:
                    fetch[path] = partial(self.safetensors_header, repo, sha, path, lenient=True)
            elif is_tracked(path):
                if same and previous is not None and path in previous.contents:
                    contents[path] = previous.contents[path]
                else:
                    # A body of the listed size is what upstream committed: if that is not valid
                    # JSON, the diff records it as a finding; it must not stall the repo forever.
                    fetch[path] = partial(self.download, repo, sha, path, expected_size=record.size, check_json=False)
        for path, value in self._fetch_all(fetch).items():
            if isinstance(value, bytes):
                contents[path] = value
            elif isinstance(value, dict):
                headers[path] = value
        return Snapshot(sha=sha, files=files, contents=dict(sorted(contents.items())), safetensors=dict(sorted(headers.items())))

    def _fetch_all(self, jobs: Mapping[str, Callable[[], object]]) -> dict[str, object]:
        """Run the fetches `_PARALLEL` at a time on the client's fetch threads; the first failure in
        path order is raised (and the fetches not yet started are dropped)."""
        if len(jobs) <= 1:
            return {path: job() for path, job in jobs.items()}
        pool = self._fetcher()
        futures: dict[str, Future[object]] = {}
        running: set[Future[object]] = set()
        try:
            for path, job in jobs.items():
                if len(running) >= _PARALLEL:
                    running = wait(running, return_when=FIRST_COMPLETED).not_done
                # Each job in a copy of this context: the poll's deadline holds in the fetch threads too.
                futures[path] = future = pool.submit(contextvars.copy_context().run, job)
                running.add(future)
            return {path: future.result() for path, future in futures.items()}
        except BaseException:
            for future in futures.values():
                future.cancel()
            raise

    def parquet_conversion(self, repo: RepoId, head: RevisionRecord, previous: bytes | None = None) -> bytes | None:
        """A dataset head's parquet conversion as `diff.dataset_parquet` keeps it, or None when the
        hub has none for that head (`tracker.hub_parquet`: which conversion belongs to which head);
        the footers `previous` (the parent's kept conversion) holds of the same shards are reused."""
        from hubwatch.tracker.hub_parquet import parquet_conversion

        return parquet_conversion(self, repo, head, previous) if repo.is_dataset else None

    def fetch_estimate_inputs(self, repo_id: RepoId | str, revision: str | None = None) -> Snapshot:
        """What the estimator reads of one revision (default: main), as a Snapshot for
        `tracker.estimate_inputs.estimator_inputs`: the listing, the config and tokenizer/generation
        configs and the root safetensors index (each checked), and every safetensors header."""
        from hubwatch.tracker.estimate_inputs import is_estimator_file

        repo = repo_id if isinstance(repo_id, RepoId) else RepoId.parse(repo_id)
        sha = self.head(repo, revision)
        files = self.listing(repo, sha)
        if "config.json" not in files:
            raise InvalidContent("config.json: the revision has no config.json", repo_id=str(repo), revision=sha)
        fetch: dict[str, Callable[[], object]] = {}
        for path, record in sorted(files.items()):
            if path.endswith(".safetensors"):
                fetch[path] = partial(self.safetensors_header, repo, sha, path)
            elif is_estimator_file(path):
                fetch[path] = partial(self.download, repo, sha, path, expected_size=record.size)
        contents: dict[str, bytes] = {}
        headers: dict[str, Mapping[str, Any]] = {}
        for path, value in self._fetch_all(fetch).items():
            if isinstance(value, bytes):
                if path in ("config.json", "tokenizer_config.json", "generation_config.json") and \
                        not isinstance(load_remote_json(value), dict):
                    raise InvalidContent(f"{path}: expected a JSON object", repo_id=str(repo), revision=sha)
                contents[path] = value
            elif isinstance(value, dict):
                headers[path] = value
        return Snapshot(sha=sha, files=files, contents=contents, safetensors=headers)


# The name its builders (wiring, CLI, tests, benchmarks) import; the tracker's modules are typed
# against the protocol `tracker.hub_client.HubClient` instead.
HubClient = HfHubClient

if TYPE_CHECKING:
    from hubwatch.tracker import hub_client

    def _conforms(client: HfHubClient) -> hub_client.HubClient:  # checked by mypy and pyright
        return client


def _commit_fields(item: object, repo: str) -> tuple[str, datetime]:
    """A listed commit's sha and date (ISO 8601, `Z` for UTC; UTC when naive); InvalidContent naming
    what is wrong when the hub's entry lacks them."""
    from huggingface_hub.utils import parse_datetime  # type: ignore[attr-defined]  # lazy module

    sha = item.get("id") if isinstance(item, Mapping) else None
    if not isinstance(sha, str) or not sha:
        raise InvalidContent(f"the hub's commit list holds an entry without a commit id: {item!r:.120}", repo_id=repo)
    date = item.get("date") if isinstance(item, Mapping) else None
    try:
        created = parse_datetime(date) if isinstance(date, str) else None
    except ValueError:
        created = None
    if created is None:
        raise InvalidContent(f"commit {sha[:12]} in the hub's commit list has no readable date ({date!r:.60})",
                             repo_id=repo, revision=sha)
    return sha, created if created.tzinfo else created.replace(tzinfo=timezone.utc)


def _text(value: object) -> str:
    """A listed commit's title or message as text ("" when absent)."""
    return value if isinstance(value, str) else ""
