"""The derivatives page: the base and its derivatives with relation, last change, parameters and their
differences from the base, and the inherited advisories and notes each carries; the model page links it."""

from __future__ import annotations

import re

from derivatives_scenario import BASE, FIXED, OWN, STALE, Scenario, scenario  # noqa: F401  (the fixture)
from fastapi.testclient import TestClient

from hubwatch.domain.records import AdvisoryRecord, RepoId, RevisionRecord
from hubwatch.feeds import create_app


def _row(html: str, repo: str) -> str:
    for row in re.findall(r"<tr>(.*?)</tr>", html, flags=re.S):
        if f">{repo}</a></td>" in row:
            return str(row)
    raise AssertionError(f"no row for {repo}")


def test_derivatives_page_lists_derivatives_with_their_inherited_advisories(scenario: Scenario) -> None:
    scenario.advance(BASE)
    client = TestClient(create_app(scenario.settings, scenario.store))
    page = client.get(f"/models/{BASE}/derivatives")
    assert page.status_code == 200
    html = page.text
    (inherited,) = [a.id for a in scenario.store.advisories.records(STALE) if a.id.endswith("-inherited")]
    stale = _row(html, str(STALE))
    assert "finetune" in stale and inherited in stale and ">open<" in stale
    assert stale.count("+41.09 K") == 2  # three layers against the base's two: more parameters, derived and counted
    assert "adapter" in _row(html, str(OWN)) and "of its own" in _row(html, str(OWN))
    fixed = _row(html, str(FIXED))
    assert "same" in fixed and "-inherited" not in fixed and ">none<" in fixed
    # A derivative's derivatives page is its base's, saying what it is.
    own_page = client.get(f"/models/{OWN}/derivatives").text
    assert "is an adapter of" in own_page and str(STALE) in own_page
    # The model page links to it.
    assert f'/models/{STALE}/derivatives">base model and derivatives</a>' in client.get(f"/models/{STALE}").text


def test_the_first_family_urls_redirect_to_the_derivatives_pages(scenario: Scenario) -> None:
    client = TestClient(create_app(scenario.settings, scenario.store))
    for old, new in ((f"/models/{OWN}/family?x=1", f"/models/{OWN}/derivatives?x=1"),
                     (f"/api/v1/models/{BASE}/family", f"/api/v1/models/{BASE}/derivatives")):
        moved = client.get(old, follow_redirects=False)
        assert (moved.status_code, moved.headers["location"]) == (308, new)
        assert client.get(old).status_code == 200  # followed: the page itself
    assert client.get("/models/famlab/nobody/family").status_code == 404  # unknown: its 404, after the move


def test_the_closed_inherited_advisory_shows_as_closed(scenario: Scenario) -> None:
    scenario.advance(BASE)
    scenario.advance(STALE)
    html = TestClient(create_app(scenario.settings, scenario.store)).get(f"/models/{BASE}/derivatives").text
    assert "(closed)" in _row(html, str(STALE))


def test_the_derivatives_json_twin(scenario: Scenario) -> None:
    scenario.advance(BASE)
    client = TestClient(create_app(scenario.settings, scenario.store))
    body = client.get(f"/api/v1/models/{OWN}/derivatives").json()  # a derivative's derivatives page is its base's
    assert (body["repo"], body["base"], body["relation"]) == (str(OWN), str(BASE), "adapter")
    assert body["url"].endswith(f"/models/{BASE}/derivatives")
    rows = {c["repo"]: c for c in body["checkpoints"]}
    assert [c["repo"] for c in body["checkpoints"]][0] == str(BASE) and rows[str(BASE)]["relation"] == "base"
    stale = rows[str(STALE)]
    (inherited,) = stale["inherited"]
    assert inherited["status"] == "open" and inherited["id"].endswith("-inherited") and inherited["upstream"]
    assert stale["relation"] == "finetune" and stale["params"]["derived_delta"] == 41088
    assert stale["head"]["sha"] == scenario.store.head(STALE).sha
    assert rows[str(FIXED)]["inherited"] == [] and "of its own" in rows[str(OWN)]["notes"][0]
    head = client.head(f"/api/v1/models/{BASE}/derivatives")
    assert head.status_code == 200 and head.content == b"" and head.headers["content-type"] == "application/json"
    assert client.get("/api/v1/models/famlab/nobody/derivatives").status_code == 404
    scenario.advance(STALE)
    closed = client.get(f"/api/v1/models/{BASE}/derivatives").json()["checkpoints"]
    assert [c["inherited"][0]["status"] for c in closed if c["repo"] == str(STALE)] == ["closed"]


def test_the_model_page_links_the_derivatives_page_only_for_a_base_with_derivatives(scenario: Scenario) -> None:
    link = "base model and derivatives</a>"
    client = TestClient(create_app(scenario.settings, scenario.store))
    solo = RepoId("acme", "solo")
    scenario.store.watch(solo)
    assert link not in client.get(f"/models/{solo}").text  # a base with no watched derivative
    assert link in client.get(f"/models/{BASE}").text and link in client.get(f"/models/{OWN}").text
    for repo in (STALE, FIXED, OWN):  # the derivatives no longer watched: the base stands alone
        scenario.store.unwatch(repo)
    assert link not in client.get(f"/models/{BASE}").text
    scenario.store.watch(OWN)
    scenario.store.unwatch(BASE)  # a derivative of a base no longer watched
    assert link not in client.get(f"/models/{OWN}").text


def test_the_derivatives_page_decodes_only_the_inherited_records(scenario: Scenario, decoded: list[str]) -> None:
    """A derivative's own advisories, however many, are not read to list its inherited ones."""
    scenario.advance(BASE)
    decoded.clear()
    client = TestClient(create_app(scenario.settings, scenario.store))
    before = client.get(f"/models/{BASE}/derivatives").text
    few = len(decoded)
    head = scenario.store.head(STALE)
    own = [AdvisoryRecord(f"x_OWN-{i}", STALE, head.sha, {
        "id": f"x_OWN-{i}", "modified": "2024-01-01T12:00:00Z", "published": "2024-01-01T12:00:00Z",
        "affected": [{"package": {"ecosystem": "GIT", "name": STALE.url()},
                      "ranges": [{"type": "GIT", "repo": STALE.url(), "events": [{"introduced": head.sha}]}]}]},
        head.date, None) for i in range(30)]
    assert scenario.store.save_revision(STALE, RevisionRecord("f" * 40, head.sha, head.date, "own advisories"),
                                      [], {}, [], None, own)
    decoded.clear()
    after = client.get(f"/models/{BASE}/derivatives").text
    assert len(decoded) == few, decoded  # the new revision's own records were not decoded
    inherited = [a.id for a in scenario.store.advisories.records(STALE) if a.id.endswith("-inherited")]
    assert inherited and all(i in _row(before, str(STALE)) and i in _row(after, str(STALE)) for i in inherited)
