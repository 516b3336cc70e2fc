"""`hubwatch check`: which advisories affect each pin, from the local store or a hubwatch server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol, Sequence
from urllib.parse import quote

import httpx

from hubwatch.domain.records import AdvisoryRecord, RepoId, Severity
from hubwatch.pincheck.errors import ServerError, ServerUnreachable
from hubwatch.pincheck.pins import Pin

if TYPE_CHECKING:
    from hubwatch.storage import Store

__all__ = [
    "AdvisoryHit",
    "AdvisorySource",
    "Lookup",
    "PinReport",
    "ServerError",
    "ServerSource",
    "ServerUnreachable",
    "StoreSource",
    "check_pins",
    "fails",
    "hit_from_osv",
]

BATCH = 500


@dataclass(frozen=True)
class AdvisoryHit:
    """One advisory affecting a pin, as the check reports it."""

    id: str
    severity: Severity | None  # None: the record carries no severity we understand (counts as failing)
    summary: str
    modified: str
    kinds: tuple[str, ...] = ()

    def at_least(self, threshold: Severity) -> bool:
        return self.severity is None or self.severity.rank >= threshold.rank


@dataclass(frozen=True)
class Lookup:
    """What a source knows of one (repo, revision): the full commit, or None when unknown."""

    commit: str | None
    hits: tuple[AdvisoryHit, ...] = ()
    note: str = ""  # why the commit is unknown, when it is


@dataclass(frozen=True)
class PinReport:
    pin: Pin
    status: str  # affected | clean | unknown | unpinned
    commit: str | None
    hits: tuple[AdvisoryHit, ...]
    note: str = ""


class AdvisorySource(Protocol):
    def lookup(self, queries: Sequence[tuple[RepoId, str]]) -> list[Lookup]:
        """For each (repo, commit or prefix ≥7 hex), what is known, in input order."""
        ...


def hit_from_osv(osv: Mapping[str, Any]) -> AdvisoryHit:
    raw = osv.get("database_specific")
    ds: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    try:
        severity: Severity | None = Severity(str(ds.get("max_severity")))
    except ValueError:
        severity = None
    kinds = tuple(str(k) for k in ds.get("kinds", []) if isinstance(k, str))
    return AdvisoryHit(str(osv.get("id")), severity, str(osv.get("summary", "")), str(osv.get("modified", "")), kinds)


def _hit(record: AdvisoryRecord) -> AdvisoryHit:
    return hit_from_osv({**record.osv, "id": record.id})


class StoreSource:
    """Answers from the local store (`Store.revision` + `Store.advisories_affecting`)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def lookup(self, queries: Sequence[tuple[RepoId, str]]) -> list[Lookup]:
        from hubwatch.storage.errors import AmbiguousRevision

        out = []
        for repo, revision in queries:
            try:
                entry = self._store.revision(repo, revision)
            except AmbiguousRevision as exc:
                out.append(Lookup(None, note=f"{exc}; give more hex digits"))
                continue
            if entry is None:
                out.append(Lookup(None))
                continue
            sha = entry.revision.sha
            hits = tuple(_hit(r) for r in self._store.advisories_affecting(repo, sha) if r.withdrawn is None)
            out.append(Lookup(sha, hits))
        return out


class ServerSource:
    """Answers from a hubwatch web app: its revision API, `POST /v1/querybatch`, `GET /v1/vulns/{id}`."""

    def __init__(self, client: httpx.Client, hub_url: str = "https://huggingface.co") -> None:
        self._client = client
        self._hub = hub_url.rstrip("/")

    def _unreachable(self, exc: httpx.HTTPError) -> ServerUnreachable:
        where = str(self._client.base_url).rstrip("/")
        return ServerUnreachable(f"cannot reach the hubwatch server at {where} ({exc.__class__.__name__}: {exc})")

    def _get(self, path: str) -> httpx.Response:
        try:
            return self._client.get(path)
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc

    def _json(self, response: httpx.Response, what: str) -> Any:
        if response.status_code != 200:
            raise ServerError(f"{what}: the server answered HTTP {response.status_code}: {response.text[:200]}")
        try:
            return response.json()
        except ValueError as exc:
            raise ServerError(f"{what}: the server's answer is not JSON") from exc

    def _resolve(self, repo: RepoId, revision: str) -> tuple[str | None, str]:
        path = f"/api/v1/models/{quote(repo.org)}/{quote(repo.name)}/revisions/{quote(revision)}"
        response = self._get(path)
        if response.status_code == 404:
            return None, ""
        if 400 <= response.status_code < 500:  # e.g. an ambiguous prefix: unknown, with the reason
            return None, f"the server says: {response.text[:200]}"
        sha = self._json(response, f"revision {repo}@{revision}").get("sha")
        return (str(sha), "") if sha else (None, "")

    def _batch(self, queries: list[dict[str, Any]]) -> list[list[str]]:
        ids: list[list[str]] = [[] for _ in queries]
        pending = list(range(len(queries)))
        while pending:
            body = {"queries": [queries[i] for i in pending]}
            try:
                response = self._client.post("/v1/querybatch", json=body)
            except httpx.HTTPError as exc:
                raise self._unreachable(exc) from exc
            results = self._json(response, "querybatch").get("results")
            if not isinstance(results, list) or len(results) != len(pending):
                raise ServerError("querybatch: the server returned a different number of results than queries")
            again = []
            for index, result in zip(pending, results):
                ids[index] += [str(v["id"]) for v in result.get("vulns", []) if isinstance(v, Mapping)]
                if result.get("next_page_token"):
                    queries[index] = {**queries[index], "page_token": result["next_page_token"]}
                    again.append(index)
            pending = again
        return ids

    def lookup(self, queries: Sequence[tuple[RepoId, str]]) -> list[Lookup]:
        resolved = [self._resolve(repo, revision) for repo, revision in queries]
        commits = [sha for sha, _ in resolved]
        known = [i for i, sha in enumerate(commits) if sha is not None]
        found: dict[int, list[str]] = {}
        for start in range(0, len(known), BATCH):
            chunk = known[start : start + BATCH]
            body = [
                {"commit": commits[i], "package": {"ecosystem": "GIT", "name": queries[i][0].url(self._hub)}}
                for i in chunk
            ]
            for i, ids in zip(chunk, self._batch(body)):
                found[i] = ids
        records: dict[str, AdvisoryHit] = {}
        for ident in sorted({x for ids in found.values() for x in ids}):
            osv = self._json(self._get(f"/v1/vulns/{quote(ident)}"), f"advisory {ident}")
            records[ident] = hit_from_osv(osv)
        return [
            Lookup(sha, tuple(records[x] for x in sorted(set(found.get(i, []))))) if sha else Lookup(None, note=why)
            for i, (sha, why) in enumerate(resolved)
        ]


def check_pins(pins: Iterable[Pin], source: AdvisorySource) -> list[PinReport]:
    """A report per pin; only commit pins are looked up (one batch), the rest are warnings."""
    pins = list(pins)
    wanted = sorted({(p.repo, p.revision.lower()) for p in pins if p.kind == "commit" and p.revision})
    answers = dict(zip(wanted, source.lookup(wanted))) if wanted else {}
    reports = []
    for pin in pins:
        if pin.kind == "commit" and pin.revision:
            answer = answers[(pin.repo, pin.revision.lower())]
            if answer.commit is None:
                why = answer.note or "unknown to the store (watch the repo, then poll)"
                reports.append(PinReport(pin, "unknown", None, (), why))
            else:
                status = "affected" if answer.hits else "clean"
                reports.append(PinReport(pin, status, answer.commit, answer.hits))
        elif pin.kind == "dynamic":
            reports.append(PinReport(pin, "unknown", None, (), "revision is computed at run time"))
        elif pin.kind == "ref":
            reports.append(PinReport(pin, "unpinned", None, (), f"{pin.revision!r} is a branch or tag: it moves"))
        else:
            reports.append(PinReport(pin, "unpinned", None, (), "no revision: whatever main is at run time"))
    return reports


def fails(reports: Iterable[PinReport], threshold: Severity) -> bool:
    """True when any advisory on any pin is at or above `threshold`."""
    return any(hit.at_least(threshold) for report in reports for hit in report.hits)
