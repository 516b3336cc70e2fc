"""Shared HTTP helpers of the emulator: the hub's error shape, dates, Link paging, raw path segments."""

from __future__ import annotations

import fnmatch
import itertools
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TypeVar
from urllib.parse import quote, unquote

from starlette.requests import Request
from starlette.responses import JSONResponse

from hubwatch.hubsim.repos import RepoHistory
from hubwatch.hubsim.state import SimError, SimState

__all__ = [
    "bearer",
    "check_gate",
    "error_response",
    "iso",
    "page",
    "raw_segments",
    "request_id",
    "sim_error_response",
]

T = TypeVar("T")
_ids = itertools.count(1)


def request_id() -> str:
    return f"hubsim-{next(_ids):08d}"


def error_response(status: int, code: str | None, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The hub's error answer: X-Error-Code, X-Error-Message and `{"error": message}`."""
    safe = message.encode("ascii", "replace").decode("ascii").replace("\n", " ")
    all_headers = {"X-Error-Message": safe, "X-Request-Id": request_id()}
    if code:
        all_headers["X-Error-Code"] = code
    all_headers.update(headers or {})
    return JSONResponse({"error": message}, status_code=status, headers=all_headers)


def sim_error_response(exc: SimError) -> JSONResponse:
    return error_response(exc.status, exc.code, exc.message)


def iso(when: datetime) -> str:
    """The hub's date format: `2023-07-18T00:00:00.000Z`."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def raw_segments(request: Request, skip: int) -> list[str]:
    """Path segments from the undecoded path, each unquoted alone (so `%2F` stays inside one)."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    parts = raw.decode("latin-1").split("?", 1)[0].strip("/").split("/")
    return [unquote(p) for p in parts[skip:]]


def _int_param(request: Request, name: str, default: int) -> int:
    value = request.query_params.get(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError as exc:
        raise SimError(400, "BadRequest", f"query parameter {name} must be an integer, got {value!r}") from exc
    if number < 0 or (name == "limit" and number == 0):
        raise SimError(400, "BadRequest", f"query parameter {name} is out of range: {number}")
    return number


def page(
    request: Request, items: Sequence[T], default_size: int, state: SimState, max_size: int | None = None
) -> tuple[list[T], dict[str, str]]:
    """One page of `items` (query `p` = page index, `limit` = size, at most `max_size`, as the hub
    caps a listing's page) and its `Link: rel="next"` header."""
    size = _int_param(request, "limit", state.page_size or default_size)
    size = min(size, max_size) if max_size is not None else size
    index = _int_param(request, "p", 0)
    chunk = list(items[index * size : (index + 1) * size])
    headers: dict[str, str] = {}
    if (index + 1) * size < len(items):
        params = [(k, v) for k, v in request.query_params.multi_items() if k != "p"] + [("p", str(index + 1))]
        query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in params)
        headers["Link"] = f'<{request.url.replace(query=query)}>; rel="next"'
    return chunk, headers


def bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def check_gate(request: Request, repo: RepoHistory) -> None:
    """Gated repo: no token → 401 GatedRepo; a token other than the GATED file's → 403 GatedRepo."""
    gate = repo.gated_token
    faults = request.app.state.sim.faults.config
    if gate is None and faults.gated and fnmatch.fnmatchcase(repo.key, faults.gated):
        gate = faults.gated_token  # a gated copy (FaultConfig.gated): the real hub gates these
    if gate is None:
        return
    token = bearer(request)
    if token is None:
        raise SimError(
            401,
            "GatedRepo",
            f"Access to {repo.repo_type} {repo.repo_id} is restricted. You must have access to it and be authenticated"
            " to access it. Please log in.",
        )
    if gate and token != gate:
        raise SimError(
            403,
            "GatedRepo",
            f"Access to {repo.repo_type} {repo.repo_id} is restricted and you are not in the authorized list."
            f" Visit the {repo.repo_type} page to ask for access.",
        )
