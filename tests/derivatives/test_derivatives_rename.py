"""A derivative renamed upstream: its inherited advisory is republished under the current id (as
the repo's own advisories are), keeping its id, events and base; mirrors see a later `modified`."""

from __future__ import annotations

import httpx
from derivatives_scenario import BASE, STALE, Scenario, scenario  # noqa: F401  (the fixture)
from fastapi.testclient import TestClient

from hubwatch.advisories.advise_match import is_fixed
from hubwatch.advisories.inherit import is_inherited
from hubwatch.domain.records import RepoId
from hubwatch.feeds import create_app
from hubwatch.tracker.derivatives import check_inheritance

MOVED = RepoId.parse("famlab/chat-moved")


def test_a_renamed_derivative_carries_its_current_name(scenario: Scenario) -> None:
    scenario.advance(BASE)
    (before,) = [r for r in scenario.store.advisories.records(STALE) if is_inherited(r.osv)]
    assert httpx.post(f"{scenario.sim.url}/_sim/{STALE}/rename", json={"to": str(MOVED)}).status_code == 200
    scenario.poll()
    check_inheritance(scenario.store, scenario.settings)
    (after,) = [r for r in scenario.store.advisories.records(MOVED) if is_inherited(r.osv)]
    osv = after.osv
    assert after.id == before.id and after.modified > before.modified and not is_fixed(osv)
    url = MOVED.url(scenario.settings.hub_web_url)
    assert osv["affected"][0]["package"]["name"] == url and osv["affected"][0]["ranges"][0]["repo"] == url
    assert osv["affected"][0]["ranges"][0]["events"] == before.osv["affected"][0]["ranges"][0]["events"]
    assert osv["database_specific"]["repo"] == str(MOVED) and str(MOVED) in osv["summary"]
    assert str(STALE) not in str(osv) and osv["upstream"] == before.osv["upstream"]
    assert osv["database_specific"]["inherited"]["base"] == str(BASE)
    client = TestClient(create_app(scenario.settings, scenario.store))
    (vuln,) = client.post("/v1/query", json={"package": {"name": url, "ecosystem": "GIT"}}).json()["vulns"]
    assert vuln["id"] == after.id and vuln["affected"][0]["package"]["name"] == url

    scenario.advance(MOVED)  # the derivative takes the fix under its new name: closed
    (closed,) = [r for r in scenario.store.advisories.records(MOVED) if is_inherited(r.osv)]
    assert is_fixed(closed.osv) and str(STALE) not in str(closed.osv)
