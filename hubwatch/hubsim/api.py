"""The emulator's `/api/models…` and `/api/datasets…` routes: listing, repo info, commits, refs, tree,
paths-info, safetensors (models)."""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from datetime import datetime
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hubwatch.hubsim.documents import (
    commit_item,
    dataset_document,
    file_item,
    folder_item,
    folders_of,
    model_document,
)
from hubwatch.hubsim.busy import busy_datasets, busy_models
from hubwatch.hubsim.modes import deleted
from hubwatch.hubsim.names import refs_document
from hubwatch.hubsim.repos import DATASETS_FOLDER, Commit, RepoFile, RepoHistory
from hubwatch.hubsim.responses import check_gate, page, raw_segments
from hubwatch.hubsim.state import SimError, SimState

__all__ = ["list_datasets", "list_models", "repo_api"]

_LISTING_KEYS = ("_id", "id", "modelId", "private", "gated", "tags", "downloads", "likes", "createdAt", "lastModified")
_FULL_KEYS = ("author", "sha", "disabled", "siblings", "library_name", "pipeline_tag")
_DATASET_LISTING_KEYS = ("_id", "id", "author", "sha", "lastModified", "private", "gated", "disabled", "tags",
                         "downloads", "likes", "createdAt")  # fmt: skip
_DATASET_FULL_KEYS = ("siblings", "cardData")


def _flag(value: str | None) -> bool:
    return value is not None and value.strip().lower() in {"1", "true", "yes"}


def _expand(request: Request) -> list[str]:
    return request.query_params.getlist("expand") + request.query_params.getlist("expand[]")


def _state(request: Request) -> SimState:
    state: SimState = request.app.state.sim
    return state


def _document(repo: RepoHistory, commit: Commit, modified: datetime, *, blobs: bool, security: bool) -> dict[str, object]:
    if repo.repo_type == "dataset":
        return dataset_document(repo, commit, modified, blobs=blobs)
    return model_document(repo, commit, modified, blobs=blobs, security=security)


async def list_models(request: Request) -> Response:
    """`GET /api/models`: newest first by lastModified (or createdAt / id), Link-paged."""
    return _listing(request, "model")


async def list_datasets(request: Request) -> Response:
    """`GET /api/datasets`: the datasets, as `/api/models` lists the models."""
    return _listing(request, "dataset")


def _listing(request: Request, repo_type: str) -> Response:
    state = _state(request)
    q = request.query_params
    search, author = (q.get("search") or "").lower(), q.get("author")
    wanted_tags = q.getlist("filter")
    docs: list[dict[str, object]] = []
    faults = state.faults.config
    for key, repo in state.repos.items():
        if repo.repo_type != repo_type:
            continue
        if state.visible_count(key) == 0 or deleted(faults, key):  # not (yet, or any more) on the hub
            continue
        repo_id = repo.repo_id
        if author and repo_id.split("/")[0] != author:
            continue
        if search and search not in repo_id.lower():
            continue
        head = state.head(key)
        doc = _document(repo, head, state.last_modified(key), blobs=False, security=False)
        tags = doc.get("tags")
        if wanted_tags and not (isinstance(tags, list) and all(t in tags for t in wanted_tags)):
            continue
        if "gated" in q and _flag(q.get("gated")) != (repo.gated_token is not None):
            continue
        docs.append(doc)
    if not (search or author or wanted_tags):
        if state.busy_listing is not None and repo_type == "model":
            docs.extend(busy_models(*state.busy_listing))
        elif state.busy_datasets_listing is not None and repo_type == "dataset":
            docs.extend(busy_datasets(*state.busy_datasets_listing))
    sort = q.get("sort") or "lastModified"
    key = sort if sort in {"lastModified", "createdAt", "id"} else "lastModified"
    docs.sort(key=lambda d: (str(d[key]), str(d["id"])), reverse=key != "id")
    expand = _expand(request)
    if expand:
        keys: Sequence[str] = ("_id", "id", *expand)
    elif repo_type == "dataset":
        keys = _DATASET_LISTING_KEYS + (_DATASET_FULL_KEYS if _flag(q.get("full")) else ())
    else:
        keys = _LISTING_KEYS + (_FULL_KEYS if _flag(q.get("full")) else ())
    items = [{k: d[k] for k in keys if k in d} for d in docs]
    chunk, headers = page(request, items, 1000, state, max_size=1000)  # the hub pages a listing by 1,000 at most
    return JSONResponse(chunk, headers=headers)


def _repo_info(request: Request, state: SimState, repo_id: str, revision: str | None) -> Response:
    repo = state.history(repo_id)
    commit = state.resolve(repo_id, revision or "main")
    head = state.head(repo_id)
    modified = state.last_modified(repo_id) if commit.sha == head.sha else commit.date
    q = request.query_params
    doc = _document(repo, commit, modified, blobs=_flag(q.get("blobs")), security=_flag(q.get("securityStatus")))
    expand = _expand(request)
    if expand:
        doc = {k: v for k, v in doc.items() if k in {"_id", "id", *expand}}
    return JSONResponse(doc)


def _history_to(state: SimState, repo_id: str, commit: Commit) -> tuple[Commit, ...]:
    return state.lineage(repo_id, commit)


def _commits(request: Request, state: SimState, repo_id: str, revision: str) -> Response:
    repo = state.history(repo_id)
    commit = state.resolve(repo_id, revision)
    formatted = "formatted" in _expand(request)
    items = [commit_item(repo, c, formatted) for c in reversed(_history_to(state, repo_id, commit))]
    chunk, headers = page(request, items, 50, state)
    headers["X-Total-Count"] = str(len(items))  # the hub's commit listing says how many there are
    return JSONResponse(chunk, headers=headers)


def _tree(request: Request, state: SimState, repo_id: str, revision: str, path: str) -> Response:
    state.history(repo_id)
    commit = state.resolve(repo_id, revision)
    expand = _flag(request.query_params.get("expand"))
    recursive = _flag(request.query_params.get("recursive"))
    history = _history_to(state, repo_id, commit) if expand else None
    folders = folders_of(commit)
    if path and path not in folders:
        raise SimError(404, "EntryNotFound", f"Entry not found: {path} is not a folder of {repo_id}@{commit.sha}")
    prefix = f"{path}/" if path else ""

    def wanted(p: str) -> bool:
        return p.startswith(prefix) and (recursive or "/" not in p[len(prefix) :])

    entries = [(p, folder_item(commit, p, history)) for p in folders if wanted(p)] + [
        (p, file_item(f, history)) for p, f in commit.files.items() if wanted(p)
    ]
    items = [item for _, item in sorted(entries, key=lambda e: e[0])]
    chunk, headers = page(request, items, 50 if expand else 1000, state)
    return JSONResponse(chunk, headers=headers)


async def _paths_info(request: Request, state: SimState, repo_id: str, revision: str) -> Response:
    state.history(repo_id)
    commit = state.resolve(repo_id, revision)
    body = await request.body()
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise SimError(400, "BadRequest", f"paths-info body is not JSON: {exc}") from exc
        paths = data.get("paths", []) if isinstance(data, dict) else []
        expand = bool(data.get("expand")) if isinstance(data, dict) else False
    else:
        form = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
        paths, expand = form.get("paths", []), _flag((form.get("expand") or ["false"])[0])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise SimError(400, "BadRequest", "paths must be a list of strings")
    history = _history_to(state, repo_id, commit) if expand else None
    folders = set(folders_of(commit))
    items: list[dict[str, object]] = []
    for p in dict.fromkeys(x.strip("/") for x in paths):
        if p in commit.files:
            items.append(file_item(commit.files[p], history))
        elif p in folders:
            items.append(folder_item(commit, p, history))
    return JSONResponse(items)


def read_header(f: RepoFile) -> dict[str, object]:
    """The parsed JSON header of a safetensors file (synthesised or real)."""
    prefix = b"".join(f.iter_bytes(0, 7))
    if len(prefix) < 8:
        raise SimError(422, "InvalidSafetensors", f"{f.path} is too short to be safetensors")
    (n,) = struct.unpack("<Q", prefix)
    if n > 25_000_000 or n + 8 > f.size:
        raise SimError(422, "InvalidSafetensors", f"{f.path}: header length {n} is out of range")
    try:
        header = json.loads(b"".join(f.iter_bytes(8, 8 + n - 1)))
    except ValueError as exc:
        raise SimError(422, "InvalidSafetensors", f"{f.path}: header is not JSON") from exc
    if not isinstance(header, dict):
        raise SimError(422, "InvalidSafetensors", f"{f.path}: header is not an object")
    return header


def _safetensors_metadata(request: Request, state: SimState, repo_id: str, filename: str) -> Response:
    repo = state.history(repo_id)
    check_gate(request, repo)
    commit = state.head(repo_id)
    index_file = commit.files.get(filename)
    if index_file is None:
        raise SimError(404, "EntryNotFound", f"Entry not found: {filename}")
    try:
        index = json.loads(index_file.read())
        shards = sorted(set(index["weight_map"].values()))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SimError(422, "InvalidSafetensors", f"{filename} is not a safetensors index") from exc
    folder = filename.rsplit("/", 1)[0] + "/" if "/" in filename else ""
    headers: dict[str, object] = {}
    for shard in shards:
        f = commit.files.get(folder + str(shard))
        if f is None:
            raise SimError(404, "EntryNotFound", f"Entry not found: shard {folder}{shard} of {filename}")
        headers[str(shard)] = read_header(f)
    return JSONResponse({"index": index, "headers": headers})


async def repo_api(request: Request) -> Response:
    """Dispatch `/api/models/{org}/{name}/…` and `/api/datasets/{org}/{name}/…` on the undecoded
    path (revisions may hold `%2F`); a dataset is the state's `datasets/{org}/{name}`."""
    state = _state(request)
    dataset = raw_segments(request, 1)[:1] == [DATASETS_FOLDER]
    segs = raw_segments(request, 2)
    if len(segs) < 2 or not segs[0] or not segs[1]:
        raise SimError(404, "RepoNotFound", f"Repository not found: a {'dataset' if dataset else 'model'} id is org/name")
    prefix = f"{DATASETS_FOLDER}/" if dataset else ""
    repo_id, rest, method = state.canonical(f"{prefix}{segs[0]}/{segs[1]}"), segs[2:], request.method
    if method in {"GET", "HEAD"}:
        if not rest:
            return _repo_info(request, state, repo_id, None)
        if rest[0] == "revision" and len(rest) >= 2:
            return _repo_info(request, state, repo_id, "/".join(rest[1:]))
        if rest[0] == "commits":
            return _commits(request, state, repo_id, "/".join(rest[1:]) or "main")
        if rest == ["refs"]:
            head = state.head(repo_id)
            return JSONResponse(refs_document(state, repo_id, head, _flag(request.query_params.get("include_prs"))))
        if rest[0] == "tree" and len(rest) >= 2:
            return _tree(request, state, repo_id, rest[1], "/".join(rest[2:]).strip("/"))
        if rest[0] == "safetensors-metadata" and len(rest) >= 2 and not dataset:
            return _safetensors_metadata(request, state, repo_id, "/".join(rest[1:]))
    if method == "POST" and rest and rest[0] == "paths-info" and len(rest) >= 2:
        return await _paths_info(request, state, repo_id, "/".join(rest[1:]))
    raise SimError(404, "NotFound", f"hubsim does not serve {method} {request.url.path}")
