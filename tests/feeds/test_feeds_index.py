"""The index: search by name, filters by org, kind, severity and date as a plain GET form (no
script), the most important change first in each row and never folded under "+N more", and a
fixed number of queries whatever the filter."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from feeds_seed import HOSTILE, LLAMA2, LLAMA3, Seeded, change, client, feeds_store, seeded, when  # noqa: F401

from hubwatch.domain.records import ChangeRecord, FileRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.storage import Store

ALL = {str(LLAMA2), str(LLAMA3), str(HOSTILE)}


def _listed(html: str) -> set[str]:
    return set(re.findall(r'href="/models/([^"/]+/[^"/?#]+)"', html))


def test_search_and_filters_narrow_the_list(client: TestClient) -> None:
    cases = {
        "": ALL,
        "?q=&org=&kind=&severity=&since=": ALL,  # the form submitted empty
        "?q=llama-2": {str(LLAMA2)},
        "?q=LLAMA": {str(LLAMA2), str(LLAMA3)},  # any case
        "?q=a_m": set(),  # LIKE wildcards are literal
        "?q=%25": set(),
        "?org=evil-org": {str(HOSTILE)},
        "?kind=pickle": {str(LLAMA3)},
        "?kind=context,chat_template": {str(LLAMA2)},
        "?severity=critical": {str(HOSTILE)},
        "?severity=high&org=meta-llama": {str(LLAMA2), str(LLAMA3)},
        "?since=2023-07-22": {str(LLAMA3), str(HOSTILE)},
        "?since=2023-07-23T13:00:00Z": {str(HOSTILE)},
        "?q=llama&kind=pickle&since=2023-07-01": {str(LLAMA3)},
    }
    for query, expected in cases.items():
        response = client.get("/" + query)
        assert response.status_code == 200, (query, response.text)
        assert _listed(response.text) == expected, query
    assert "No watched model or dataset matches these filters." in client.get("/?q=nothing-like-this").text
    assert _listed(client.get("/orgs/meta-llama?kind=pickle").text) == {str(LLAMA3)}


def test_filtered_row_shows_the_newest_matching_revision(client: TestClient, seeded: Seeded) -> None:
    html = client.get("/?kind=chat_template").text
    assert f'/models/{LLAMA2}/revisions/{seeded.shas[LLAMA2][1]}"' in html  # not the newest revision
    assert "rendered prompt for multi-turn conversations changed" in html


def test_bad_filters_are_a_400_that_names_them(client: TestClient) -> None:
    for query, word in (("?since=yesterday", "since"), ("?kind=nope", "kind"), ("?severity=worst", "severity"),
                        ("?since=2023-07-22T10:00:00", "since")):
        response = client.get("/" + query)
        assert response.status_code == 400 and word in response.json()["error"]["message"], query


def test_the_form_is_plain_get_and_the_csp_allows_it(client: TestClient) -> None:
    response = client.get("/?q=llama&severity=high")
    html = response.text
    form = html[html.index("<form"):html.index("</form>")]
    assert 'method="get"' in form and 'name="q" value="llama"' in form and "<script" not in html
    assert '<option value="high" selected>' in form
    assert "form-action 'self'" in response.headers["content-security-policy"]


def test_most_severe_change_first_and_hazards_never_folded(client: TestClient, feeds_store: Store) -> None:
    repo = RepoId("acme", "many")
    feeds_store.watch(repo)
    changes: list[ChangeRecord] = [
        change(Kind.CHAT_TEMPLATE, Severity.HIGH, "tokenizer_config.json:chat_template", "chat template updated",
               "a", "b", "update"),
        *[change(Kind.METADATA, Severity.INFO, f"config.json:k{i}", f"k{i} 1 → 2", 1, 2) for i in range(8)],
        change(Kind.CUSTOM_CODE, Severity.HIGH, "modeling_x.py", "custom code added: modeling_x.py", None, None, "hazard"),
        change(Kind.CONTEXT, Severity.MEDIUM, "config.json:rope_scaling", "rope_scaling added", None, {"t": 1}, "hazard"),
    ]
    revision = RevisionRecord("9" * 40, None, when(26), "many things", "many things")
    assert feeds_store.save_revision(repo, revision, [FileRecord("config.json", 2)], {"config.json": b"{}"}, changes,
                                     None, [])
    html = client.get("/?q=acme").text
    row = html[html.index('href="/models/acme/many"'):html.index("</tr>", html.index('href="/models/acme/many"'))]
    code, template, rope = (row.index(t) for t in ("custom code added", "chat template updated", "rope_scaling added"))
    assert code < template  # a custom-code hazard before a chat-template update of the same severity
    assert template < rope < row.index("(+8 more)")  # every hazard at medium or above is shown, not folded
    assert "k3 1 → 2" not in row


def test_index_takes_a_fixed_number_of_queries_filtered_or_not(  # type: ignore[no-untyped-def]
    client: TestClient, feeds_store: Store, seeded: Seeded, count_selects
) -> None:
    query = "/?q=llama&kind=pickle&severity=high&since=2023-07-01"
    with count_selects(feeds_store) as plain:
        assert client.get("/").status_code == 200
    with count_selects(feeds_store) as few:
        assert client.get(query).status_code == 200
    for i in range(30):
        feeds_store.watch(RepoId("bulk", f"llama{i:02d}"))
    with count_selects(feeds_store) as filtered:
        html = client.get(query).text
    assert _listed(html) == {str(LLAMA3)}
    assert len(plain) <= 6
    # a change filter adds one fixed lookup (each row's newest change, to name one the filter hides)
    assert len(filtered) == len(few) <= len(plain) + 3


def test_a_change_filter_labels_the_column_and_names_a_newer_change(client: TestClient, seeded: Seeded) -> None:
    """Issue 31: with a filter on, the column shows the newest *matching* change; it must not read
    as the repo's latest change when a newer one exists."""
    html = client.get("/?kind=chat_template").text
    assert "Latest matching change" in html and "<th>Latest change</th>" not in html
    row = html[html.index(f'href="/models/{LLAMA2}"'):html.index("</tr>", html.index(f'href="/models/{LLAMA2}"'))]
    assert f'/models/{LLAMA2}/revisions/{seeded.shas[LLAMA2][1]}"' in row  # the matching one
    newest = seeded.shas[LLAMA2][-1]
    assert "newer change, not matching" in row and f'/models/{LLAMA2}/revisions/{newest}"' in row
    plain = client.get("/").text
    assert "<th>Latest change</th>" in plain and "newer change, not matching" not in plain
