"""`hubwatch check --server URL`: the pins' standings from a hubwatch web app, over its JSON API."""

from __future__ import annotations

from typing import Any, Mapping, Sequence
from urllib.parse import quote

import httpx

from hubwatch.advisories.standing import TemplateDiff
from hubwatch.domain.records import RepoId
from hubwatch.pincheck.errors import ServerError, ServerUnreachable
from hubwatch.pincheck.report import (
    OFF_THE_MAIN_LINE, AdvisoryHit, Change, Lookup, Suggestion, hit_from_osv, parse_severity,
)

__all__ = ["ServerSource"]


def _strs(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _template(entry: Mapping[str, Any]) -> TemplateDiff:
    return TemplateDiff(*(str(entry.get(k, "")) for k in ("path", "template", "conversation", "old", "new", "diff")))


class ServerSource:
    """Answers from a hubwatch web app: its revision API (known or not), the revision's standing
    (`…/revisions/{sha}/standing?ignore=ID`), and `GET /v1/vulns/{id}` for each record's OSV fields."""

    def __init__(self, client: httpx.Client, hub_url: str = "https://huggingface.co") -> None:
        self._client = client
        self._hub = hub_url.rstrip("/")
        self._vulns: dict[str, AdvisoryHit] = {}

    def _unreachable(self, exc: httpx.HTTPError) -> ServerUnreachable:
        where = str(self._client.base_url).rstrip("/")
        return ServerUnreachable(f"cannot reach the hubwatch server at {where} ({exc.__class__.__name__}: {exc})")

    def _get(self, path: str, params: Sequence[tuple[str, str]] = ()) -> httpx.Response:
        try:
            return self._client.get(path, params=list(params))
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc

    def _json(self, response: httpx.Response, what: str) -> Any:
        if response.status_code != 200:
            raise ServerError(f"{what}: the server answered HTTP {response.status_code}: {response.text[:200]}")
        try:
            body = response.json()
        except ValueError as exc:
            raise ServerError(f"{what}: the server's answer is not JSON") from exc
        if not isinstance(body, dict):
            raise ServerError(f"{what}: the server's answer is not a JSON object")
        return body

    def _base(self, repo: RepoId, revision: str) -> str:
        return f"/api/v1/models/{quote(repo.org)}/{quote(repo.name)}/revisions/{quote(revision)}"

    def _resolve(self, repo: RepoId, revision: str) -> tuple[str | None, str]:
        response = self._get(self._base(repo, revision))
        if response.status_code == 404:
            return None, ""
        if 400 <= response.status_code < 500:  # e.g. an ambiguous prefix: unknown, with the reason
            return None, f"the server says: {response.text[:200]}"
        sha = self._json(response, f"revision {repo}@{revision}").get("sha")
        return (str(sha), "") if sha else (None, "")

    def _vuln(self, ident: str, direction: str, ignored: bool) -> AdvisoryHit:
        if ident not in self._vulns:
            self._vulns[ident] = hit_from_osv(self._json(self._get(f"/v1/vulns/{quote(ident)}"), f"advisory {ident}"))
        hit = self._vulns[ident]
        return AdvisoryHit(hit.id, hit.severity, hit.summary, hit.modified, hit.kinds, direction, ignored,
                           hit.upstream_fix)

    def _standing(self, repo: RepoId, sha: str, ignored: frozenset[str]) -> Lookup:
        what = f"standing of {repo}@{sha[:12]}"
        body = self._json(self._get(self._base(repo, sha) + "/standing", [("ignore", i) for i in sorted(ignored)]),
                          what)
        if not body.get("known", False):
            return Lookup(sha, note="not on the repo's main line on the server (history rewritten)")
        entries = [e for key in ("lacks", "carries") for e in body.get(key) or [] if isinstance(e, Mapping)]
        hits = tuple(sorted((self._vuln(str(e.get("id")), str(e.get("direction", "")), bool(e.get("ignored")))
                             for e in entries), key=lambda h: h.id))
        on_main_line = body.get("on_main_line") is not False
        note = "" if on_main_line else OFF_THE_MAIN_LINE
        suggested = body.get("suggested")
        if not isinstance(suggested, str) or not suggested:
            return Lookup(sha, hits, note=note, on_main_line=on_main_line)
        changes = tuple(
            Change(str(e.get("id")), parse_severity(e.get("severity")), _strs(e.get("kinds")),
                   str(e.get("summary", "")), str(e.get("revision", "")),
                   tuple(_template(d) for d in e.get("chat_template") or [] if isinstance(d, Mapping)))
            for e in body.get("on_the_way") or [] if isinstance(e, Mapping)
        )
        return Lookup(sha, hits, suggestion=Suggestion(suggested, _strs(body.get("resolves")), changes), note=note,
                      on_main_line=on_main_line)

    def lookup(self, queries: Sequence[tuple[RepoId, str]], ignored: frozenset[str] = frozenset()) -> list[Lookup]:
        out = []
        for repo, revision in queries:
            sha, why = self._resolve(repo, revision)
            out.append(self._standing(repo, sha, ignored) if sha else Lookup(None, note=why))
        return out
