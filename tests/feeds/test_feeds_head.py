"""`HEAD` on every `GET` route the app has: the GET's status and headers, no body (never 405)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from fastapi.testclient import TestClient
from feeds_seed import ADMIN_TOKEN, LLAMA2, Seeded, client, feeds_store, seeded  # noqa: F401


def _routes(routes: Iterable[Any], prefix: str = "") -> Iterator[tuple[str, set[str]]]:
    """(path, methods) of every route, into included routers and whatever FastAPI wraps them in."""
    for route in routes:
        sub = getattr(route, "original_router", None)
        if sub is not None:
            yield from _routes(sub.routes, prefix + getattr(route.include_context, "prefix", ""))
        elif getattr(route, "methods", None):
            yield prefix + route.path, set(route.methods)


def _fill(path: str, seeded: Seeded) -> str:
    shas = seeded.shas[LLAMA2]
    values = {
        "org": LLAMA2.org, "name": LLAMA2.name, "sha": shas[-1], "fmt": "atom", "vuln_id": next(iter(seeded.advisories)),
        "advisory_id": next(iter(seeded.advisories)), "spec": f"{shas[0][:7]}...{shas[-1][:7]}",
        "base": shas[0], "head": shas[-1],
    }

    def one(match: re.Match[str]) -> str:
        name = match.group(1).split(":")[0]
        assert name in values, f"no sample value for path parameter {name!r} of {path}: add one to this test"
        return values[name]

    return re.sub(r"\{([^}]+)\}", one, path)


def test_every_get_route_answers_head_with_the_get_headers_and_no_body(client: TestClient, seeded: Seeded) -> None:
    gets = [path for path, methods in _routes(client.app.routes) if "GET" in methods]  # type: ignore[attr-defined]
    assert len(gets) >= 15  # pages, feeds, badges, JSON API, OSV, ops
    for path in gets:
        if "/datasets/{org}/{name}" in path:
            continue  # a dataset's twins of the model routes: test_feeds_datasets answers HEAD on a seeded dataset
        url = _fill(path, seeded)
        headers = {"accept": "text/html", "authorization": f"Bearer {ADMIN_TOKEN}"}  # admin GETs too
        get = client.get(url, headers=headers)
        head = client.head(url, headers=headers)
        assert head.status_code == get.status_code != 405, (url, head.status_code, get.status_code)
        assert get.status_code < 400, (url, get.status_code, get.text[:200])
        assert head.content == b"", url
        for name in ("content-type", "etag", "content-security-policy", "content-length"):
            if name in get.headers and not (name == "content-length" and url == "/metrics"):
                assert head.headers.get(name) == get.headers[name], (url, name)


def test_head_on_a_post_only_route_is_still_405(client: TestClient) -> None:
    assert client.head("/v1/query").status_code == 405
    assert client.head("/static/style.css").status_code == 200


def test_csp_forbids_framing_and_allows_forms_only_to_self(client: TestClient) -> None:
    csp = client.get("/").headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "form-action 'self'" in csp and "script-src" not in csp


def test_hub_links_point_at_the_real_hub_whatever_api_endpoint_is_used(feeds_store: Any, seeded: Seeded) -> None:
    from feeds_seed import make_settings

    from hubwatch.feeds import create_app

    sha = seeded.shas[LLAMA2][-1]
    for settings, web in ((make_settings(hub_endpoint="http://127.0.0.1:9"), "https://huggingface.co"),
                          (make_settings(hub_web_url="https://hub.internal/"), "https://hub.internal")):
        with TestClient(create_app(settings, feeds_store)) as c:
            page = c.get(f"/models/{LLAMA2}/revisions/{sha}").text
            assert f'href="{web}/{LLAMA2}/commit/{sha}"' in page
            assert "127.0.0.1:9" not in page and "127.0.0.1:9" not in c.get(f"/models/{LLAMA2}").text
