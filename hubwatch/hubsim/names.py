"""Renames, refs and raw files in the emulator: the 307 a renamed id answers, `/_sim/…/rename` and
`/_sim/…/refs`, the refs listing (branches, tags, pull requests) and `/raw/` answers for LFS files."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hubwatch.hubsim.repos import DATASETS_FOLDER, PARQUET_REF, Commit, RepoFile, lfs_pointer
from hubwatch.hubsim.responses import error_response, request_id
from hubwatch.hubsim.state import Moved, SimError, SimState

__all__ = ["lfs_pointer_response", "moved_response", "refs_document", "rename", "set_ref", "sim_key"]


def sim_key(request: Request) -> str:
    """The repo a `/_sim/{org}/{name}/…` (model) or `/_sim/datasets/{org}/{name}/…` route names."""
    repo = f"{request.path_params['org']}/{request.path_params['name']}"
    return f"{DATASETS_FOLDER}/{repo}" if request.url.path.startswith(f"/_sim/{DATASETS_FOLDER}/") else repo


def moved_response(request: Request, exc: Moved) -> Response:
    """307 to the same path (and query) under the new id, as the hub answers for a renamed repo."""
    raw = (request.scope.get("raw_path") or request.url.path.encode()).decode("latin-1").split("?", 1)[0]
    location = raw
    dataset = exc.old.startswith(f"{DATASETS_FOLDER}/")
    old, new = (exc.old, exc.new) if not dataset else (exc.old.split("/", 1)[1], exc.new.split("/", 1)[1])
    prefixes = ("/api/datasets/", f"/{DATASETS_FOLDER}/") if dataset else ("/api/models/", "/")
    for prefix in prefixes:
        start = prefix + old
        if raw.lower().startswith(start.lower()) and raw[len(start) : len(start) + 1] in ("", "/"):
            location = prefix + new + raw[len(start) :]
            break
    if request.url.query:
        location += "?" + request.url.query
    return error_response(307, None, exc.message, {"Location": location})


def refs_document(state: SimState, repo_id: str, head: Commit, include_prs: bool) -> dict[str, object]:
    """`GET /api/models/{id}/refs`: main and the named branches, tags, a dataset's parquet conversion
    (`converts`), and (asked for) pull requests."""
    def entry(name: str, ref: str, commit: Commit) -> dict[str, object]:
        return {"name": name, "ref": ref, "targetCommit": commit.sha}

    refs = sorted(state.refs(repo_id).items())
    branches = [entry("main", "refs/heads/main", head)] + [
        entry(r.removeprefix("refs/heads/"), r, c) for r, c in refs if r.startswith("refs/heads/")
    ]
    tags = [entry(r.removeprefix("refs/tags/"), r, c) for r, c in refs if r.startswith("refs/tags/")]
    converts = state.converts(repo_id)
    done = [entry(PARQUET_REF.rsplit("/", 1)[-1], PARQUET_REF, converts[-1])] if converts else []
    doc: dict[str, object] = {"branches": branches, "tags": tags, "converts": done}
    if include_prs:
        doc["pullRequests"] = [entry(r.removeprefix("refs/pr/"), r, c) for r, c in refs if r.startswith("refs/pr/")]
    return doc


def lfs_pointer_response(request: Request, commit: Commit, f: RepoFile) -> Response:
    """`/raw/` of an LFS file: the pointer git stores, never a redirect to the content."""
    assert f.lfs_sha256 is not None
    body = lfs_pointer(f.lfs_sha256, f.size)
    headers = {
        "X-Repo-Commit": commit.sha,
        "ETag": f'"{f.blob_id}"',
        "Content-Type": "text/plain; charset=utf-8",
        "Content-Length": str(len(body)),
        "X-Request-Id": request_id(),
    }
    return Response(b"" if request.method == "HEAD" else body, status_code=200, headers=headers)


async def _body(request: Request) -> dict[str, object]:
    import json

    try:
        data = json.loads(await request.body() or b"{}")
    except ValueError as exc:
        raise SimError(400, "BadRequest", f"body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SimError(400, "BadRequest", "body must be a JSON object")
    return data


def _state(request: Request) -> SimState:
    state: SimState = request.app.state.sim
    return state


async def rename(request: Request) -> Response:
    """`POST /_sim/{org}/{name}/rename {"to": "org2/name2"}`: the old id then answers 307 to the new."""
    to = (await _body(request)).get("to")
    if not isinstance(to, str):
        raise SimError(400, "BadRequest", 'body must be {"to": "org/name"}')
    old = sim_key(request)
    new = _state(request).rename(old, to)
    return JSONResponse({"renamed": old, "to": new})


async def set_ref(request: Request) -> Response:
    """`POST /_sim/{org}/{name}/refs {"branch"|"tag"|"pr": NAME, "at": "v2"}`: point a ref at a version."""
    data = await _body(request)
    kinds = [k for k in ("branch", "tag", "pr") if k in data]
    at = data.get("at")
    if len(kinds) != 1 or not isinstance(at, (str, int)):
        raise SimError(400, "BadRequest", 'body must be {"branch"|"tag"|"pr": name, "at": "vK"}')
    ref, commit = _state(request).set_ref(sim_key(request), kinds[0], str(data[kinds[0]]), at)
    return JSONResponse({"ref": ref, "sha": commit.sha, "version": commit.version})
