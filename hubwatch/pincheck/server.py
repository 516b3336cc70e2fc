"""`hubwatch check --server URL`: the pins' standings from a hubwatch web app, over its JSON API, once
the server has shown it is one (`/api/v1/identity`, and `X-Hubwatch-API` on every answer)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence
from urllib.parse import quote

import httpx

from hubwatch.advisories.standing import TemplateDiff
from hubwatch.domain.records import RepoId
from hubwatch import __version__
from hubwatch.pincheck.errors import IncompatibleServer, NotAHubwatchServer, ServerError, ServerUnreachable
from hubwatch.pincheck.report import (
    OFF_THE_MAIN_LINE, AdvisoryHit, Change, Lookup, RepoFacts, Suggestion, hit_from_osv, parse_severity,
    unknown_commit_note,
)

__all__ = ["API_HEADER", "API_VERSIONS", "IDENTITY_PATH", "ServerSource", "answered"]

# What this client reads: the JSON API versions it speaks, where a server says which it is, and the
# header every answer of a hubwatch web app carries (hubwatch.feeds.routes.ops, the server's side).
API_VERSIONS = frozenset({1})
IDENTITY_PATH = "/api/v1/identity"
API_HEADER = "X-Hubwatch-API"


def answered(response: httpx.Response) -> str:
    """One line saying what answered: the request, its status, and the server, content type, redirect
    target and first bytes (upstream text, shown as a Python literal so it stays on one line)."""
    parts = [f"{name}: {value}" for name in ("server", "content-type", "location")
             if (value := response.headers.get(name))]
    head = response.content[:60]
    if head:
        parts.append(f"body {head.decode('utf-8', 'replace')!r}" + ("…" if len(response.content) > 60 else ""))
    else:
        parts.append("empty body")
    return f"{response.request.method} {response.request.url} answered HTTP {response.status_code} ({'; '.join(parts)})"


def _strs(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _error_message(response: httpx.Response) -> str:
    """The message of the web app's one error shape (`{"error": {"message"}}`), else the first bytes."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return str(message) if message else response.text[:200]


def _template(entry: Mapping[str, Any]) -> TemplateDiff:
    return TemplateDiff(*(str(entry.get(k, "")) for k in ("path", "template", "conversation", "old", "new", "diff")))


class ServerSource:
    """Answers from a hubwatch web app: its revision API (known or not), the revision's standing
    (`…/revisions/{sha}/standing?ignore=ID`), and `GET /v1/vulns/{id}` for each record's OSV fields."""

    def __init__(self, client: httpx.Client, hub_url: str = "https://huggingface.co") -> None:
        self._client = client
        self._hub = hub_url.rstrip("/")
        self._vulns: dict[str, AdvisoryHit] = {}
        self._facts: dict[RepoId, RepoFacts | None] = {}
        self._verified = False

    @property
    def _where(self) -> str:
        return str(self._client.base_url).rstrip("/")

    def verify(self) -> str:
        """Check that a hubwatch web app of an API version this client speaks answers at the base URL
        (its `/api/v1/identity`); its package version. Raises NotAHubwatchServer or IncompatibleServer."""
        response = self._get(IDENTITY_PATH, checked=False)
        body: object = None
        if response.status_code == 200 and API_HEADER.lower() in response.headers:
            try:
                body = response.json()
            except ValueError:
                body = None
        if not isinstance(body, dict) or body.get("service") != "hubwatch" or not isinstance(body.get("api"), int):
            if response.status_code == 404 and API_HEADER.lower() in response.headers:
                # hubwatch's own 404: the URL has a path past the app's base (or lacks a proxy's prefix)
                raise NotAHubwatchServer(f"a hubwatch web app answers at {self._where}, but it is not its base URL: "
                                         f"{answered(response)}")
            raise NotAHubwatchServer(f"{self._where} is not a hubwatch server: {answered(response)}")
        version, api = str(body.get("version", "?")), int(body["api"])
        if api not in API_VERSIONS:
            speaks = ", ".join(str(v) for v in sorted(API_VERSIONS))
            raise IncompatibleServer(f"the hubwatch server at {self._where} (hubwatch {version}) speaks API {api}; "
                                     f"this hubwatch ({__version__}) speaks API {speaks}", version)
        self._verified = True
        return version

    def _unreachable(self, exc: httpx.HTTPError) -> ServerUnreachable:
        return ServerUnreachable(f"cannot reach the hubwatch server at {self._where} ({exc.__class__.__name__}: {exc})")

    def _get(self, path: str, params: Sequence[tuple[str, str]] = (), checked: bool = True) -> httpx.Response:
        """GET `path`; with `checked`, an answer without `X-Hubwatch-API` (a proxy's 404, another
        server behind the same host) is not trusted: its 404 would otherwise read as "unknown"."""
        try:
            response = self._client.get(path, params=list(params))
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc
        if checked and API_HEADER.lower() not in response.headers:
            raise NotAHubwatchServer(f"an answer from {self._where} did not come from a hubwatch server "
                                     f"(no {API_HEADER} header): {answered(response)}")
        return response

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

    @staticmethod
    def _repo_path(repo: RepoId) -> str:
        """The server's JSON API path of `repo`: `/api/v1/models/ORG/NAME` or `/api/v1/datasets/ORG/NAME`."""
        return f"/api/v1/{'datasets' if repo.is_dataset else 'models'}/{quote(repo.org)}/{quote(repo.name)}"

    def _base(self, repo: RepoId, revision: str) -> str:
        return f"{self._repo_path(repo)}/revisions/{quote(revision)}"

    def _repo_facts(self, repo: RepoId) -> RepoFacts | None:
        """What the server holds of `repo` (`GET /api/v1/models/{org}/{name}`, or `/datasets/…` for a
        dataset); None: not watched there."""
        if repo not in self._facts:
            response = self._get(self._repo_path(repo))
            if response.status_code == 404:
                self._facts[repo] = None
            else:
                body = self._json(response, f"{repo.repo_type.value} {repo}")
                count = body.get("revision_count")
                polled = body.get("last_polled_at")
                self._facts[repo] = RepoFacts(True, count if isinstance(count, int) else 0,
                                              str(polled) if polled else None)
        return self._facts[repo]

    def _resolve(self, repo: RepoId, revision: str) -> tuple[str | None, str]:
        response = self._get(self._base(repo, revision))
        if response.status_code == 404:
            return None, unknown_commit_note(repo, self._repo_facts(repo))
        if 400 <= response.status_code < 500:  # e.g. an ambiguous prefix: unknown, with the reason
            return None, f"the server says: {_error_message(response)}"
        sha = self._json(response, f"revision {repo}@{revision}").get("sha")
        return (str(sha), "") if sha else (None, unknown_commit_note(repo, self._repo_facts(repo)))

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
        if not self._verified:
            self.verify()
        out = []
        for repo, revision in queries:
            sha, why = self._resolve(repo, revision)
            out.append(self._standing(repo, sha, ignored) if sha else Lookup(None, note=why))
        return out
