"""The osv.dev-shaped API's pure parts: parse queries, page results, shape responses.

A query is one of: `{commit}` (a full 40-hex sha, any repo holding it), `{package, version}`
(package `{ecosystem: "GIT", name: "https://huggingface.co/org/name"}`; the version is a commit
sha or a unique prefix of one) or `{package}` alone (every advisory of that repo). Page tokens
are opaque to clients; here they encode an offset into the id-sorted result list.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from hubwatch.advisories.osv_export import published_osv
from hubwatch.domain.records import AdvisoryRecord, InvalidRepoId, RepoId
from hubwatch.domain.times import rfc3339
from hubwatch.domain.urls import is_safe_url

__all__ = [
    "OsvQuery",
    "QueryError",
    "batch_entry",
    "decode_page_token",
    "page",
    "page_ids",
    "parse_batch",
    "parse_query",
    "query_response",
]

_HEX = re.compile(r"[0-9a-f]+")
_QUERY_KEYS = {"commit", "version", "package", "page_token"}
MAX_BATCH = 1000


class QueryError(ValueError):
    """A query that is not valid; the message names what is wrong."""


@dataclass(frozen=True)
class OsvQuery:
    commit: str | None
    repo: RepoId | None
    version: str | None
    page_token: str | None


def _repo_from_package(package: Any, where: str) -> RepoId:
    if not isinstance(package, dict):
        raise QueryError(f"{where}package must be an object with 'name' and 'ecosystem'")
    if "purl" in package:
        raise QueryError(f"{where}package.purl is not supported: give ecosystem 'GIT' and the repo URL as name")
    ecosystem, name = package.get("ecosystem"), package.get("name")
    if ecosystem != "GIT":
        raise QueryError(f"{where}package.ecosystem must be 'GIT' (got {ecosystem!r})")
    if not isinstance(name, str) or not name:
        raise QueryError(f"{where}package.name must be the repo URL, e.g. 'https://huggingface.co/org/name'")
    if not is_safe_url(name):
        raise QueryError(f"{where}package.name {name!r} is not a repo URL like 'https://huggingface.co/org/name'")
    path = urlsplit(name).path.strip("/").removesuffix(".git")
    try:
        return RepoId.parse(path)
    except InvalidRepoId as exc:
        raise QueryError(f"{where}package.name {name!r}: {exc}") from exc


def parse_query(raw: Any, where: str = "") -> OsvQuery:
    """Validate one query object (`where` prefixes messages, e.g. 'queries[2].')."""
    if not isinstance(raw, dict):
        raise QueryError(f"{where or 'query'} must be a JSON object")
    unknown = sorted(set(raw) - _QUERY_KEYS)
    if unknown:
        raise QueryError(f"{where}{unknown[0]} is not a query field (use commit, version, package, page_token)")
    commit, version, token = raw.get("commit"), raw.get("version"), raw.get("page_token")
    for key, value in (("commit", commit), ("version", version), ("page_token", token)):
        if value is not None and not isinstance(value, str):
            raise QueryError(f"{where}{key} must be a string")
    if commit is not None and version is not None:
        raise QueryError(f"{where}commit and version are mutually exclusive")
    repo = _repo_from_package(raw["package"], where) if raw.get("package") is not None else None
    if commit is not None:
        commit = commit.lower()
        if not _HEX.fullmatch(commit) or not (7 <= len(commit) <= 40):
            raise QueryError(f"{where}commit {commit!r} is not a commit sha (40 hex digits)")
        if repo is None and len(commit) != 40:
            raise QueryError(f"{where}commit must be a full 40-hex sha when no package is given")
    elif repo is None:
        raise QueryError(f"{where or 'query '}needs a commit, or a package (with an optional version)")
    if version is not None and not version.strip():
        raise QueryError(f"{where}version must not be empty")
    if token is not None:
        decode_page_token(token, where)
    return OsvQuery(commit=commit, repo=repo, version=version, page_token=token)


def parse_batch(raw: Any) -> list[OsvQuery]:
    if not isinstance(raw, dict) or not isinstance(raw.get("queries"), list):
        raise QueryError("body must be an object with a 'queries' list")
    queries = raw["queries"]
    if len(queries) > MAX_BATCH:
        raise QueryError(f"queries holds {len(queries)} queries; at most {MAX_BATCH} per batch")
    return [parse_query(q, f"queries[{i}].") for i, q in enumerate(queries)]


def _encode_page_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def decode_page_token(token: str, where: str = "") -> int:
    """The offset a page token stands for; a QueryError for a token this server did not issue."""
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        prefix, _, number = text.partition(":")
        offset = int(number)
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise QueryError(f"{where}page_token {token!r} is not a token this server issued") from exc
    if prefix != "o" or offset < 0:
        raise QueryError(f"{where}page_token {token!r} is not a token this server issued")
    return offset


def page(
    advisories: Sequence[AdvisoryRecord], token: str | None, size: int
) -> tuple[list[AdvisoryRecord], str | None]:
    """One page of `advisories` (sorted by id, duplicates removed) and the next page's token."""
    unique = sorted({a.id: a for a in advisories}.values(), key=lambda a: a.id)
    start = decode_page_token(token) if token else 0
    chunk = unique[start : start + size]
    more = start + size < len(unique)
    return chunk, (_encode_page_token(start + size) if more else None)


def page_ids(ids: Sequence[str], token: str | None, size: int) -> tuple[list[str], str | None]:
    """`page` over advisory ids: the same slice and token, so only the page's records need decoding."""
    unique = sorted(set(ids))
    start = decode_page_token(token) if token else 0
    more = start + size < len(unique)
    return unique[start : start + size], (_encode_page_token(start + size) if more else None)


def query_response(chunk: Sequence[AdvisoryRecord], next_token: str | None) -> dict[str, Any]:
    """`{"vulns": [...], "next_page_token"?}`; `{}` when nothing matches (as osv.dev answers)."""
    body: dict[str, Any] = {"vulns": [published_osv(a) for a in chunk]} if chunk else {}
    if next_token:
        body["next_page_token"] = next_token
    return body


def batch_entry(chunk: Sequence[AdvisoryRecord], next_token: str | None) -> dict[str, Any]:
    """One result of a batch: `{"vulns": [{id, modified}], ...}`; `{}` when nothing matches (as osv.dev)."""
    body: dict[str, Any] = {"vulns": [{"id": a.id, "modified": rfc3339(a.modified)} for a in chunk]} if chunk else {}
    if next_token:
        body["next_page_token"] = next_token
    return body
