"""The compare page and its JSON twin: every file's semantic diff between two stored revisions
(the diff engine on the stored snapshots), the rendered chat-template diff, the full templates,
the estimate deltas, and the advisories resolved and introduced; errors for bad ranges."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator


import pytest
from fastapi.testclient import TestClient
from feeds_seed import advisory, estimate, feeds_store, llama2_config, make_settings, when  # noqa: F401

from hubwatch.diff import diff_snapshots
from hubwatch.domain.records import FileRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.domain.snapshot import Snapshot
from hubwatch.feeds import create_app
from hubwatch.feeds.builders.compare import BadRange, parse_range
from hubwatch.storage import Store

REPO = RepoId("acme", "chatty")
# Long enough that the stored detail keeps only a digest: the pages must still show it in full.
OLD_TEMPLATE = "{% for m in messages %}[" + "x" * 2500 + "]{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
NEW_TEMPLATE = "</pre><script>alert(1)</script>{{ bos_token }}{% for m in messages %}<|" + "y" * 2500 + "|>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
SHAS = ["abcdef1" + "0" * 33, "abcdef1" + "1" * 33, "1234567" + "2" * 33]  # the first two share a prefix


def _files(template: str, code: bool, layers: int) -> dict[str, bytes]:
    config = {**llama2_config(), "num_hidden_layers": layers}
    files = {"config.json": json.dumps(config).encode(),
             "tokenizer_config.json": json.dumps({"chat_template": template, "bos_token": "<s>"}).encode()}
    if code:
        files["modeling_chatty.py"] = b"import os\nos.system('echo hi')\n"
    return files


def _save(store: Store, index: int, template: str, code: bool, layers: int, previous: Snapshot | None,
          advise: list[tuple[Kind, Severity, str, str]]) -> Snapshot:
    contents = _files(template, code, layers)
    listing = {p: FileRecord(p, len(b)) for p, b in contents.items()}
    snapshot = Snapshot(SHAS[index], listing, contents)
    changes = diff_snapshots(previous, snapshot)
    revision = RevisionRecord(SHAS[index], SHAS[index - 1] if index else None, when(10 + index), f"rev {index}", f"rev {index}")
    config = json.loads(contents["config.json"])
    records = [advisory(REPO, SHAS[index], when(10 + index), k, s, t, d) for k, s, t, d in advise]
    for record in records:  # the custom code goes away two revisions on: the hazard's range ends there
        if record.osv["database_specific"]["direction"] == "hazard":
            record.osv["affected"][0]["ranges"][0]["events"].append({"fixed": SHAS[2]})
    assert store.save_revision(REPO, revision, list(listing.values()), contents, changes,
                               ("test-1", estimate(config)), records)
    return snapshot


@pytest.fixture
def cmp_client(feeds_store: Store) -> Iterator[TestClient]:
    feeds_store.watch(REPO)
    first = _save(feeds_store, 0, OLD_TEMPLATE, False, 32, None, [])
    second = _save(feeds_store, 1, NEW_TEMPLATE, True, 32, first,
                   [(Kind.CUSTOM_CODE, Severity.HIGH, "custom code added", "hazard"),
                    (Kind.CHAT_TEMPLATE, Severity.HIGH, "chat template fixed", "update")])
    _save(feeds_store, 2, NEW_TEMPLATE, False, 40, second,
          [(Kind.CUSTOM_CODE, Severity.LOW, "custom code removed", "update")])
    with TestClient(create_app(make_settings(), feeds_store)) as client:
        yield client


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_compare_shows_every_file_diff_rendered_template_estimates_and_advisories(cmp_client: TestClient) -> None:
    response = cmp_client.get(f"/models/{REPO}/compare/{SHAS[0]}...{SHAS[1][:12]}")
    assert response.status_code == 200, response.text
    html, text = response.text, _text(response.text)
    assert "1 revision forward" in text
    # the diff engine's own changes between the stored snapshots
    assert "custom code added: modeling_chatty.py" in text and "Rendered prompt diff" in html
    assert 'class="add"' in html and "&lt;|" in html  # the new template's marker, escaped
    # both templates in full, collapsed, though the stored detail only has their digest
    assert "<details class=\"template\"><summary>Old chat template in full" in html
    assert "x" * 2500 in html and "y" * 2500 in html
    # estimate deltas: same config here, so unchanged
    assert re.search(r"parameters 6\.74 B 6\.74 B unchanged", text)
    # a pin moving from BASE to HEAD takes on the custom-code hazard and gets the template update
    introduced = text[text.index("takes on"):text.index("resolves")]
    assert "custom code added" in introduced and "chat template fixed" not in introduced
    assert "1 advisory" in introduced
    assert "chat template fixed" in text[text.index("resolves"):]
    assert 'href="https://huggingface.co/acme/chatty/commit/' in html
    # hostile template text stays text: in the full template, the text diff and the rendered prompts
    assert "<script>" not in html and "&lt;/pre&gt;&lt;script&gt;alert(1)" in html


def test_compare_further_apart_and_backwards_with_two_dots(cmp_client: TestClient) -> None:
    text = _text(cmp_client.get(f"/models/{REPO}/compare/{SHAS[0]}..{SHAS[2][:7]}").text)
    assert "2 revisions forward" in text
    assert re.search(r"parameters 6\.74 B 8\.\d\d B \+\d+\.\d%", text)  # 32 → 40 layers
    assert "custom code" not in text[text.index(" Changes "):]  # added then removed: no net change
    assert "custom code added" not in text  # nor a hazard at either end
    assert "chat template fixed" in text[text.index("resolves"):]
    back = _text(cmp_client.get(f"/models/{REPO}/compare/{SHAS[2][:7]}...{SHAS[1][:8]}").text)
    assert "1 revision back" in back and "custom code added: modeling_chatty.py" in back


def test_compare_json_twin(cmp_client: TestClient) -> None:
    body = cmp_client.get(f"/api/v1/models/{REPO}/compare/{SHAS[0]}...{SHAS[2][:7]}").json()
    assert body["base"]["sha"] == SHAS[0] and body["head"]["sha"] == SHAS[2] and body["revisions_between"] == 2
    kinds = {c["kind"] for c in body["changes"]}
    assert {"chat_template", "architecture"} <= kinds and "custom_code" not in kinds
    params = next(e for e in body["estimate"] if e["figure"] == "parameters")
    assert params["old"] < params["new"]
    assert len(body["advisories"]["resolved"]) == 2 and body["advisories"]["introduced"] == []  # two updates
    assert body["url"] == f"https://hubwatch.example/models/{REPO}/compare/{SHAS[0][:12]}...{SHAS[2][:12]}"


def test_compare_errors_name_what_was_wrong(cmp_client: TestClient) -> None:
    html = {"accept": "text/html"}
    missing = cmp_client.get(f"/models/{REPO}/compare/{SHAS[2][:7]}...fedcba9", headers=html)
    assert missing.status_code == 404 and "fedcba9" in missing.text
    ambiguous = cmp_client.get(f"/api/v1/models/{REPO}/compare/abcdef1...{SHAS[2][:7]}")
    assert ambiguous.status_code == 400 and ambiguous.json()["error"]["code"] == "ambiguous_revision"
    assert cmp_client.get(f"/models/{REPO}/compare/{SHAS[0]}", headers=html).status_code == 400
    assert cmp_client.get(f"/models/nobody/none/compare/{SHAS[0]}...{SHAS[1]}").status_code == 404


def test_revision_page_links_compare_with_latest_and_shows_both_templates(cmp_client: TestClient) -> None:
    html = cmp_client.get(f"/models/{REPO}/revisions/{SHAS[1]}").text
    assert f'href="/models/{REPO}/compare/{SHAS[1]}...{SHAS[2]}">compare with latest</a>' in html
    assert "x" * 2500 in html and "y" * 2500 in html  # old and new template, both in full
    latest = cmp_client.get(f"/models/{REPO}/revisions/{SHAS[2]}").text
    assert "compare with latest" not in latest
    # a removed code file says so; no expander holds only metadata
    assert "More detail" not in latest or '"direction"' not in latest


@pytest.mark.parametrize(("spec", "fault"), [("abc", "not a range"), ("abc1234...xyz", "head"), ("...abc1234", "base")])
def test_parse_range_refuses_with_the_reason(spec: str, fault: str) -> None:
    with pytest.raises(BadRange, match=fault):
        parse_range(spec)
    assert parse_range("ABCDEF1...1234567").base == "abcdef1"




def test_compare_gives_exactly_what_hubwatch_diff_computes(cmp_client: TestClient, feeds_store: Store) -> None:
    from hubwatch.feeds.builders.views import change_json
    from hubwatch.tracker.pipeline import load_baseline  # what `hubwatch diff ORG/NAME OLD NEW` reads

    body = cmp_client.get(f"/api/v1/models/{REPO}/compare/{SHAS[0]}...{SHAS[2]}").json()
    before, after = (load_baseline(feeds_store, REPO, s).snapshot for s in (SHAS[0], SHAS[2]))
    expected = json.loads(json.dumps([change_json(c, detail=True) for c in diff_snapshots(before, after)]))
    assert body["changes"] == expected and len(expected) >= 2


def test_a_fixed_hazard_links_the_compare_of_its_range(cmp_client: TestClient) -> None:
    advisories = cmp_client.get(f"/api/v1/models/{REPO}/compare/{SHAS[0][:8]}...{SHAS[1][:8]}").json()["advisories"]
    hazard = next(i for i in advisories["introduced"] if not i.endswith("-fix"))
    html = cmp_client.get(f"/advisories/{hazard}").text
    link = f'href="/models/{REPO}/compare/{SHAS[1]}...{SHAS[2]}">compare the introducing revision with the fix</a>'
    assert link in html  # full shas: a link never lands on an ambiguous prefix (abcdef1 is one here)
    assert cmp_client.get(f"/models/{REPO}/compare/{SHAS[1]}...{SHAS[2]}").status_code == 200
