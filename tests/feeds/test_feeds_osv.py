"""The osv.dev-shaped API over the real store: vulns by id, query by commit / package+version,
paging with page_token, querybatch order, and the one error shape."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

from fastapi.testclient import TestClient
from feeds_seed import LLAMA2, LLAMA3, Seeded, client, feeds_store, seeded  # noqa: F401

from hubwatch.advisories.osv_export import export_files
from hubwatch.feeds.builders.osv import query_response
from hubwatch.storage import Store

PKG = {"ecosystem": "GIT", "name": f"https://huggingface.co/{LLAMA2}"}


def _ids(body: dict[str, Any]) -> list[str]:
    return [v["id"] for v in body.get("vulns", [])]


def _adv(seeded: Seeded, repo: Any, index: int, fix: bool = False) -> str:
    commit = seeded.shas[repo][index]
    return next(a.id for a in seeded.advisories.values()
                if a.revision_sha == commit and a.id.endswith("-fix") == fix)


def test_get_vuln_returns_the_full_record(client: TestClient, seeded: Seeded) -> None:
    adv_id = _adv(seeded, LLAMA2, 2)
    body = client.get(f"/v1/vulns/{adv_id}").json()
    assert body["id"] == adv_id and body["modified"] == "2023-07-20T12:00:00Z"
    assert body["affected"][0]["ranges"][0]["events"] == [{"introduced": seeded.shas[LLAMA2][2]}]


def test_unknown_vuln_is_404_in_the_error_shape(client: TestClient) -> None:
    response = client.get("/v1/vulns/x_HUBWATCH-2023-nope")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "no advisory with id 'x_HUBWATCH-2023-nope'"}}


def test_query_by_commit_alone(client: TestClient, seeded: Seeded) -> None:
    shas = seeded.shas[LLAMA2]
    assert _ids(client.post("/v1/query", json={"commit": shas[0]}).json()) == [_adv(seeded, LLAMA2, 1, fix=True)]
    assert _ids(client.post("/v1/query", json={"commit": shas[1]}).json()) == []
    both = sorted([_adv(seeded, LLAMA2, 2), _adv(seeded, LLAMA2, 3)])
    assert _ids(client.post("/v1/query", json={"commit": shas[3]}).json()) == both
    assert _ids(client.post("/v1/query", json={"commit": "0" * 40}).json()) == []


def test_query_by_package_and_version_accepts_a_prefix(client: TestClient, seeded: Seeded) -> None:
    shas = seeded.shas[LLAMA2]
    full = client.post("/v1/query", json={"package": PKG, "version": shas[2]}).json()
    assert _ids(full) == [_adv(seeded, LLAMA2, 2)]
    prefix = client.post("/v1/query", json={"package": PKG, "version": shas[2][:10]}).json()
    assert prefix == full
    with_commit = client.post("/v1/query", json={"package": PKG, "commit": shas[2]}).json()
    assert with_commit == full
    other = {"ecosystem": "GIT", "name": f"https://huggingface.co/{LLAMA3}"}
    assert _ids(client.post("/v1/query", json={"package": other, "version": shas[2]}).json()) == []


def test_package_query_pages_with_page_token(client: TestClient, seeded: Seeded) -> None:
    # page size is 2 in the test settings; LLAMA2 has 3 advisories
    first = client.post("/v1/query", json={"package": PKG}).json()
    assert len(first["vulns"]) == 2 and "next_page_token" in first
    second = client.post("/v1/query", json={"package": PKG, "page_token": first["next_page_token"]}).json()
    assert "next_page_token" not in second
    expected = sorted(a.id for a in seeded.advisories.values() if a.repo == LLAMA2)
    assert _ids(first) + _ids(second) == expected


def test_querybatch_keeps_input_order_with_ids_and_modified_only(client: TestClient, seeded: Seeded) -> None:
    shas = seeded.shas
    queries = [
        {"commit": shas[LLAMA3][1]},
        {"commit": shas[LLAMA2][1]},
        {"package": PKG, "version": shas[LLAMA2][2]},
        {"package": PKG},
    ]
    results = client.post("/v1/querybatch", json={"queries": queries}).json()["results"]
    assert [[v["id"] for v in r.get("vulns", [])] for r in results[:3]] == [
        [_adv(seeded, LLAMA3, 1)], [], [_adv(seeded, LLAMA2, 2)]]
    assert results[1] == {}  # nothing matches: {} as osv.dev answers
    assert set(results[0]["vulns"][0]) == {"id", "modified"}
    assert "next_page_token" in results[3] and "next_page_token" not in results[0]


def test_invalid_queries_are_400_naming_the_problem(client: TestClient, seeded: Seeded) -> None:
    cases = [
        ({}, "needs a commit"),
        ({"commit": "xyz"}, "commit"),
        ({"commit": seeded.shas[LLAMA2][0][:10]}, "full 40-hex"),
        ({"commit": seeded.shas[LLAMA2][0], "version": "v1"}, "mutually exclusive"),
        ({"package": {"ecosystem": "PyPI", "name": "x"}, "version": "1"}, "ecosystem"),
        ({"package": {"ecosystem": "GIT", "name": "not a url"}}, "package.name"),
        ({"package": {"ecosystem": "GIT", "name": "http://[::1/org/name"}}, "package.name"),  # malformed
        ({"package": PKG, "page_token": "!!bogus"}, "page_token"),
        ({"colour": "red"}, "colour"),
    ]
    for body, needle in cases:
        response = client.post("/v1/query", json=body)
        assert response.status_code == 400, body
        error = response.json()["error"]
        assert error["code"] == "bad_request" and needle in error["message"], (body, error)
    not_json = client.post("/v1/query", content=b"{nope", headers={"content-type": "application/json"})
    assert not_json.status_code == 400 and "JSON" in not_json.json()["error"]["message"]
    batch = client.post("/v1/querybatch", json={"queries": [{"commit": seeded.shas[LLAMA2][0]}, {}]})
    assert batch.status_code == 400 and "queries[1]" in batch.json()["error"]["message"]
    assert client.post("/v1/querybatch", json={"q": []}).status_code == 400


def test_the_api_serves_the_record_the_export_writes(client: TestClient, feeds_store: Store, seeded: Seeded) -> None:
    """One "as published" function (advisories.osv_export.published_osv) behind the API and the export."""
    stored = feeds_store.advisories.records()
    assert stored
    files = export_files(stored)
    for advisory in stored:
        exported = json.loads(files[f"GIT/{advisory.id}.json"])
        assert client.get(f"/v1/vulns/{advisory.id}").json() == exported, advisory.id
    page = client.post("/v1/query", json={"package": PKG}).json()["vulns"]
    assert page and all(v == json.loads(files[f"GIT/{v['id']}.json"]) for v in page)


def test_withdrawn_and_sparse_records_are_published_alike(seeded: Seeded) -> None:
    """The two former versions differed here: the API filled `id`/`modified`, the export only `withdrawn`."""
    base = next(iter(seeded.advisories.values()))
    withdrawn = dataclasses.replace(base, withdrawn=datetime(2024, 2, 1, 8, 30, tzinfo=UTC))
    sparse_osv = {k: v for k, v in base.osv.items() if k not in ("id", "modified")}
    sparse = dataclasses.replace(base, osv=sparse_osv, modified=datetime(2024, 3, 1, tzinfo=UTC))
    for record in (withdrawn, sparse):
        [served] = query_response([record], None)["vulns"]
        assert served == json.loads(export_files([record])[f"GIT/{record.id}.json"])
    assert query_response([withdrawn], None)["vulns"][0]["withdrawn"] == "2024-02-01T08:30:00Z"
    [served] = query_response([sparse], None)["vulns"]
    assert (served["id"], served["modified"]) == (base.id, "2024-03-01T00:00:00Z")


def test_nothing_matching_is_empty_and_the_header_tells_clean_from_unknown(client: TestClient, seeded: Seeded) -> None:
    clean = client.post("/v1/query", json={"package": PKG, "version": seeded.shas[LLAMA2][1]})
    assert clean.status_code == 200 and clean.json() == {}
    assert clean.headers["X-Hubwatch-Commit"] == "known"
    never = client.post("/v1/query", json={"package": PKG, "version": "ab" * 20})
    assert never.json() == {} and never.headers["X-Hubwatch-Commit"] == "unknown"
    bare = client.post("/v1/query", json={"commit": "cd" * 20})
    assert bare.json() == {} and bare.headers["X-Hubwatch-Commit"] == "unknown"
    held = client.post("/v1/query", json={"commit": seeded.shas[LLAMA2][1]})
    assert held.json() == {} and held.headers["X-Hubwatch-Commit"] == "known"
    hit = client.post("/v1/query", json={"commit": seeded.shas[LLAMA2][3]})
    assert hit.json()["vulns"] and hit.headers["X-Hubwatch-Commit"] == "known"
    assert "X-Hubwatch-Commit" not in client.post("/v1/query", json={"package": PKG}).headers


def test_querybatch_lists_the_queries_whose_commit_is_unknown(client: TestClient, seeded: Seeded) -> None:
    queries = [{"commit": "ab" * 20}, {"commit": seeded.shas[LLAMA2][1]}, {"package": PKG},
               {"package": PKG, "version": "cd" * 20}]  # fmt: skip
    answer = client.post("/v1/querybatch", json={"queries": queries})
    assert answer.json()["results"][0] == {} and answer.json()["results"][3] == {}
    assert answer.headers["X-Hubwatch-Unknown-Queries"] == "0,3"
    known = client.post("/v1/querybatch", json={"queries": queries[1:3]})
    assert known.headers["X-Hubwatch-Unknown-Queries"] == ""
