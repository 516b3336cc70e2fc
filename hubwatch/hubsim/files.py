"""The emulator's file route: `GET|HEAD /{org}/{name}/resolve/{rev}/{path}` (a dataset's under
`/datasets/…`) with the hub's headers and ranges."""

from __future__ import annotations

import mimetypes
import re
import struct
from collections.abc import Iterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from hubwatch.hubsim.names import lfs_pointer_response
from hubwatch.hubsim.repos import DATASETS_FOLDER, RepoFile, git_blob_sha1
from hubwatch.hubsim.responses import (
    check_gate,
    error_response,
    raw_segments,
    request_id,
)
from hubwatch.hubsim.state import SimError, SimState

__all__ = ["BROKEN_JSON", "broken_header", "parse_range", "resolve_file"]

# What a file hit by the `invalid_json` fault is served as.
BROKEN_JSON = b'{"hubsim_fault": "invalid json", "truncated": [1, 2,'
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """One `bytes=a-b` / `a-` / `-n` range → inclusive (start, end); None = serve it all.

    Raises SimError 416 when the range lies outside the file.
    """
    match = _RANGE.match(header.strip().replace(" ", ""))
    if match is None:
        return None  # several ranges or an unknown unit: a 200 with the whole body is allowed
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:
        start, end = max(0, size - int(last)), size - 1
    else:
        start = int(first)
        end = min(int(last), size - 1) if last else size - 1
    if start >= size or start > end:
        raise SimError(416, "RangeNotSatisfiable", f"Range {header} is outside a file of {size} bytes")
    return start, end


def broken_header(kind: str) -> bytes:
    """A small safetensors file whose header is broken as `kind` says (FaultConfig.broken_header_kind)."""
    if kind == "nested":
        payload = b"[" * 100_000  # parsers that recurse give up long before the end
    elif kind == "beyond_limit":
        return struct.pack("<Q", 30_000_000) + b"{}" + b" " * 6  # past the client's 25 MB header limit
    elif kind == "beyond_file":
        return struct.pack("<Q", 1_000_000) + b'{"a":{"dtype":"F16",'  # the length runs past the file's end
    else:
        payload = b"this header is not JSON"
    payload += b" " * (-len(payload) % 8)
    return struct.pack("<Q", len(payload)) + payload


def _content_type(path: str) -> str:
    if path.endswith((".json", ".jinja", ".md", ".txt", ".py", ".tsv", ".yaml", ".yml")):
        return "application/json" if path.endswith(".json") else "text/plain; charset=utf-8"
    return mimetypes.guess_type(path)[0] or "application/octet-stream"


def _chunks(data: bytes) -> Iterator[bytes]:
    yield data


async def resolve_file(request: Request) -> Response:
    state: SimState = request.app.state.sim
    segs = raw_segments(request, 0)
    prefix = ""
    if segs[:1] == [DATASETS_FOLDER] and len(segs) > 3 and segs[3] in ("resolve", "raw"):
        prefix, segs = f"{DATASETS_FOLDER}/", segs[1:]
    if len(segs) < 5 or segs[2] not in ("resolve", "raw"):
        raise SimError(404, "EntryNotFound", "Entry not found: expected /{org}/{name}/resolve/{revision}/{path}")
    repo_id, revision, path = state.canonical(f"{prefix}{segs[0]}/{segs[1]}"), segs[3], "/".join(segs[4:])
    repo = state.history(repo_id)
    check_gate(request, repo)
    commit = state.resolve(repo_id, revision)
    f: RepoFile | None = commit.files.get(path)
    if f is None:
        raise SimError(404, "EntryNotFound", f"Entry not found: {path} in {repo_id}@{commit.sha}")
    if segs[2] == "raw" and f.lfs_sha256 is not None:
        return lfs_pointer_response(request, commit, f)  # /raw/ serves what git stores: the pointer

    headers = {
        "X-Repo-Commit": commit.sha,
        "Accept-Ranges": "bytes",
        "Content-Type": _content_type(path),
        "X-Request-Id": request_id(),
    }
    kind = state.faults.broken_header(repo_id, path) if path.endswith(".safetensors") else None
    bad: bytes | None = broken_header(kind) if kind else (BROKEN_JSON if state.faults.breaks_json(repo_id, path) else None)
    broken = bad is not None
    size = len(bad) if bad is not None else f.size
    if bad is not None:
        headers["ETag"] = f'"{git_blob_sha1(bad)}"'
    else:
        headers["ETag"] = f'"{f.etag}"'
        if f.lfs_sha256 is not None:
            headers["X-Linked-Etag"] = f'"{f.lfs_sha256}"'
            headers["X-Linked-Size"] = str(f.size)

    if request.method == "HEAD":
        return Response(b"", status_code=200, headers={**headers, "Content-Length": str(size)})

    try:
        wanted = parse_range(request.headers["range"], size) if "range" in request.headers else None
    except SimError as exc:
        return error_response(exc.status, exc.code, exc.message, {"Content-Range": f"bytes */{size}"})
    if wanted is None:
        start, end, status = 0, size - 1, 200
        fraction = state.faults.truncation(repo_id, path)
        if fraction is not None:
            end = int(size * fraction) - 1
    else:
        (start, end), status = wanted, 206
        headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    headers["Content-Length"] = str(max(0, end - start + 1))
    if bad is not None:
        body: Iterator[bytes] = _chunks(bad[start : end + 1])
    elif end < start:
        body = _chunks(b"")
    else:
        body = f.iter_bytes(start, end)
    return StreamingResponse(body, status_code=status, headers=headers)
