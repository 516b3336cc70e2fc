"""A pin's standing through the real app: the JSON API, the revision page's verdict, the model page."""

from __future__ import annotations

from fastapi.testclient import TestClient
from feeds_seed import LLAMA2, Seeded, client, feeds_store, seeded  # noqa: F401

__all__: list[str] = []


def _standing(client: TestClient, sha: str, *ignore: str) -> dict[str, object]:
    query = "&".join(f"ignore={i}" for i in ignore)
    answer = client.get(f"/api/v1/models/{LLAMA2}/revisions/{sha}/standing" + (f"?{query}" if query else ""))
    assert answer.status_code == 200
    body: dict[str, object] = answer.json()
    return body


def test_standing_api_lacks_carries_and_suggests(client: TestClient, seeded: Seeded) -> None:
    shas = seeded.shas[LLAMA2]
    first = _standing(client, shas[0][:10])
    assert first["commit"] == shas[0] and first["known"] is True and first["newest"] == shas[3]
    lacks = first["lacks"]
    assert isinstance(lacks, list) and [a["direction"] for a in lacks] == ["update"]
    assert lacks[0]["severity"] == "high" and lacks[0]["ignored"] is False and lacks[0]["revision"] == shas[1]
    assert set(lacks[0]) >= {"id", "severity", "kinds", "summary", "direction", "ignored"}
    assert first["carries"] == [] and first["suggested"] == shas[1] and first["resolves"] == [lacks[0]["id"]]
    head = _standing(client, shas[3])
    carries = head["carries"]
    assert isinstance(carries, list) and [a["severity"] for a in carries] == ["high", "medium"]
    assert head["lacks"] == [] and head["suggested"] == shas[1]
    ids = [a["id"] for a in carries]
    assert sorted(head["resolves"]) == sorted(ids)  # type: ignore[arg-type]
    ignoring = _standing(client, shas[3], *ids)
    assert ignoring["ignored"] == sorted(ids) and ignoring["suggested"] is None
    assert _standing(client, shas[1])["suggested"] is None


def test_standing_api_unknown_commit_and_repo(client: TestClient) -> None:
    unknown = _standing(client, "ab" * 20)
    assert unknown["known"] is False and unknown["lacks"] == [] and unknown["suggested"] is None
    missing = client.get(f"/api/v1/models/nobody/nothing/revisions/{'ab' * 20}/standing")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_standing_api_gives_the_rendered_template_diff_on_the_way(client: TestClient, seeded: Seeded) -> None:
    first = _standing(client, seeded.shas[LLAMA2][0])
    way = first["on_the_way"]
    assert isinstance(way, list) and len(way) == 1
    assert way[0]["chat_template"] == []  # the seed's record carries no change detail


def _verdict(html: str) -> str:
    start = html.index('<div class="verdict">')
    return html[start:html.index("</div>", start)]


def test_revision_page_says_what_a_pin_lacks_and_where_to_move(client: TestClient, seeded: Seeded) -> None:
    shas = seeded.shas[LLAMA2]
    link = f'<a href="/models/{LLAMA2}/revisions/{shas[1]}"><code>{shas[1][:7]}</code></a>'
    first = _verdict(client.get(f"/models/{LLAMA2}/revisions/{shas[0]}").text)
    assert f'class="pin pin-bad">A pin here lacks 1 update (worst: high) — move to {link}.' in first
    assert f"update published at {link}: a pin here lacks it" in first
    assert f"Moving to {link} brings 1 update on the way and resolves 1 record." in first
    update = _verdict(client.get(f"/models/{LLAMA2}/revisions/{shas[1]}").text)
    assert 'class="pin pin-ok">A pin here is up to date: it lacks no update and carries no hazard.' in update
    assert "update published in this revision: pins before it lack it" in update
    eos = f'<a href="/models/{LLAMA2}/revisions/{shas[2]}"><code>{shas[2][:7]}</code></a>'
    head = _verdict(client.get(f"/models/{LLAMA2}/revisions/{shas[3]}").text)
    assert f"hazard introduced at {eos}, still carried" in head and "hazard introduced in this revision" in head


def test_no_page_says_fixed_in_this_revision(client: TestClient, seeded: Seeded) -> None:
    pages = [f"/models/{LLAMA2}"] + [f"/models/{LLAMA2}/revisions/{s}" for s in seeded.shas[LLAMA2]]
    for path in pages:
        assert "fixed in this revision" not in client.get(path).text.lower(), path


def test_markdown_twin_gives_the_latest_revisions_standing(client: TestClient, seeded: Seeded) -> None:
    shas = seeded.shas[LLAMA2]
    text = client.get(f"/models/{LLAMA2}.md").text
    assert (f"A pin at the latest revision carries 2 hazards (worst: high) — move to "
            f"[{shas[1][:7]}](https://hubwatch.example/models/{LLAMA2}/revisions/{shas[1]}).") in text  # fmt: skip
