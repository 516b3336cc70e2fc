"""The estimate panel (model page and /plan) and POST /api/v1/plan: the CLI's figures, settings as plain
GET/POST fields, errors that name the field, hostile input, and estimates of stored revisions."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fastapi.testclient import TestClient
from feeds_seed import LLAMA2, Seeded, client, feeds_store, llama2_config, seeded, sha, when  # noqa: F401

from hubwatch.domain.records import FileRecord, RepoId, RevisionRecord
from hubwatch.domain.snapshot import Snapshot
from hubwatch.feeds.builders.plan import stored_inputs
from hubwatch.storage import Store

CONFIGS = Path(__file__).parents[1] / "data" / "configs"
SMALL = RepoId("tiny-org", "tiny-llama")


def _cli(config: dict[str, Any], tmp_path: Path, *args: str) -> dict[str, Any]:
    """`hubwatch estimate --json` on `config` written to a file: the CLI's own figures."""
    from hubwatch.cli import _register, cli

    _register()  # what `main` does: the commands join the group
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(cli, ["estimate", str(path), "--json", *args])
    assert result.exit_code == 0, result.output
    entry: dict[str, Any] = json.loads(result.output)[0]
    return entry


def _cells(page: str, label: str) -> list[str]:
    """The text of the cells of the panel's table row whose first cell starts with `label`."""
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
        if cells and cells[0].startswith(label):
            return cells
    raise AssertionError(f"no row {label!r} in the page")


def _panel(page: str) -> str:
    start = page.index('id="estimate"')
    return page[start:]


def _latest_llama2_config() -> dict[str, Any]:
    return {**llama2_config(), "max_position_embeddings": 4096}  # the seed's last revision


def test_model_page_panel_has_the_clis_figures(client: TestClient, tmp_path: Path) -> None:
    args = ("--method", "qlora", "--batch", "2", "--seq-len", "1024", "--lora-rank", "32", "--epochs", "3",
            "--samples", "2000")
    cli = _cli(_latest_llama2_config(), tmp_path, *args)
    page = client.get(f"/models/{LLAMA2}?method=qlora&batch=2&seq_len=1024&lora_rank=32&epochs=3&samples=2000").text
    panel = _panel(page)
    assert f"{cli['params']['derived']:,}" in panel
    for method, label in (("full", "full fine-tune"), ("lora", "LoRA"), ("qlora", "QLoRA")):
        cells = _cells(panel, label)
        assert cells[1] == f"{cli['methods'][method]['peak_gb']:.1f} GB", (method, cells)
        assert cells[2] == f"{cli['methods'][method]['required_gb']:.1f} GB"
    assert "selected" in _cells(panel, "QLoRA")[0]
    for card in cli["cards"]:
        cells = _cells(panel, card["name"])
        for cell, stem in zip(cells[1:], ("full_finetune", "lora", "qlora", "serve"), strict=True):
            n = card[f"{stem}_batch"]
            assert cell.startswith("does not fit" if n == 0 else str(n)), (card["name"], stem, cell)
    cost = cli["cost"]
    assert f"{cost['hours']:,.2f} h on {cost['cards']}× {cost['card']}" in panel
    assert f"${cost['usd']:,.2f}" in panel and "3 epochs × 2,000 samples of 1024 tokens" in panel
    terms = cli["methods"]["qlora"]["terms"]
    biggest = max(terms, key=terms.get)
    qlora_terms = panel[panel.index("QLoRA: the terms alive"):]
    qlora_terms = qlora_terms[:qlora_terms.index("</details>")]
    assert _cells(qlora_terms, biggest.replace("_", " "))[1] == f"{terms[biggest]:.2f} GB"
    assert "<details open><summary>QLoRA: the terms" in panel  # the selected method's terms are open
    nodes = cli["structure"]["nodes"]
    assert f"{len(nodes)} modules with output shapes" in panel
    assert f"<code>{nodes[-1]['name']}</code></td><td>{nodes[-1]['type']}</td><td>" \
           f"{' × '.join(map(str, nodes[-1]['output_shape']))}</td>" in panel
    assert 'value="2"' in panel and '<option value="qlora" selected>' in panel  # the form keeps the settings


def test_default_panel_equals_the_clis_defaults(client: TestClient, tmp_path: Path) -> None:
    cli = _cli(_latest_llama2_config(), tmp_path)
    panel = _panel(client.get(f"/models/{LLAMA2}").text)
    assert _cells(panel, "LoRA")[1] == f"{cli['methods']['lora']['peak_gb']:.1f} GB"
    assert "sequence length 2048, batch 1, LoRA r=16" in panel
    assert f"{cli['cost']['hours']:,.2f} h on" in panel and "on the cheapest card that fits" in panel


def test_the_stack_setting_matches_the_cli(client: TestClient, tmp_path: Path) -> None:
    cli = _cli(_latest_llama2_config(), tmp_path, "--stack", "unsloth", "--method", "qlora")
    panel = _panel(client.get(f"/models/{LLAMA2}?stack=unsloth&method=qlora").text)
    assert "unsloth stack" in panel and '<option value="unsloth" selected>' in panel
    assert _cells(panel, "QLoRA")[1] == f"{cli['methods']['qlora']['peak_gb']:.1f} GB"
    api = client.post("/api/v1/plan", json={"repo": str(LLAMA2), "settings": {"stack": "unsloth", "method": "qlora"}})
    assert api.json()["memory"]["methods"]["qlora"] == cli["methods"]["qlora"]


def test_settings_change_the_panel(client: TestClient) -> None:
    default = _panel(client.get(f"/models/{LLAMA2}").text)
    bigger = _panel(client.get(f"/models/{LLAMA2}?batch=8&seq_len=4096").text)
    assert _cells(default, "LoRA")[1] != _cells(bigger, "LoRA")[1]
    costed = _panel(client.get(f"/models/{LLAMA2}?card=H200&method=full").text)
    assert "× H200" in costed and "on the cheapest card" not in costed
    serve = _panel(client.get(f"/models/{LLAMA2}?method=serve").text)
    assert "Inference has no training cost" in serve


@pytest.mark.parametrize(("query", "field", "needle"), [
    ("batch=abc", "batch", "expected a whole number, got 'abc'"),
    ("batch=0", "batch", "must be at least 1"),
    ("method=sideways", "method", "choose one of: full, lora, qlora, serve"),
    ("precision=fp4", "precision", "choose one of"),
    ("stack=deepspeed", "stack", "choose one of: hf, torchtune"),
    ("card=Z80", "card", "unknown card 'Z80'"),
    ("epochs=-1", "epochs", "0 < epochs"),
    ("epochs=nan", "epochs", "finite"),
    ("samples=1.5", "samples", "whole number"),
    ("seq_len=0", "seq_len", "at least 1"),
    ("lora_rank=" + "9" * 80, "lora_rank", "longer than any valid value"),
])
def test_bad_settings_are_named_on_the_page(client: TestClient, query: str, field: str, needle: str) -> None:
    response = client.get(f"/models/{LLAMA2}?{query}")
    assert response.status_code == 200  # the rest of the model page still shows
    panel = html.unescape(_panel(response.text))
    assert f"Cannot estimate ({field}):" in panel and needle in panel
    api = client.post("/api/v1/plan", json={"repo": str(LLAMA2), **_api_value(query)})
    assert api.status_code == 400 and api.json()["error"]["code"] == "bad_request"
    assert field in api.json()["error"]["message"]


def _api_value(query: str) -> dict[str, Any]:
    """The same bad value as the API takes it: cost inputs at the top, memory settings under settings."""
    field, _, text = query.partition("=")
    value: Any = text
    try:
        value = json.loads(text)
    except ValueError:
        value = float("nan") if text == "nan" else text
    if field == "epochs" and text == "nan":
        return {"epochs": "nan"}
    return {field: value} if field in ("epochs", "samples", "card") else {"settings": {field: value}}


def test_custom_code_and_lints_with_fixes(client: TestClient) -> None:
    config = (CONFIGS / "microsoft__Phi-3-mini-128k-instruct" / "config.json").read_text()
    response = client.post("/plan", data={"config": config})
    assert response.status_code == 200
    panel = _panel(response.text)
    assert "custom code</span>" in panel and "standing hazard" in panel
    row = _cells(panel, "warning")
    assert row[1] == "custom-code-required" and row[3]  # the fix is shown
    assert "(no weight manifest: a pasted config has none)" in panel


def test_plan_page_and_hostile_pastes(client: TestClient) -> None:
    assert "<textarea" in client.get("/plan").text
    csp = client.get("/plan").headers["content-security-policy"]
    assert "form-action 'self'" in csp
    hostile = {"model_type": "<script>alert(1)</script>", "hidden_size": "<img src=x onerror=alert(1)>"}
    cases = [
        ("{not json", "config: not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ("[" * 5000 + "]" * 5000, "config: not valid JSON"),
        ('{"a": 1e999999}', "config"),
        (json.dumps(hostile), "config.hidden_size"),
        (json.dumps({**llama2_config(), "num_hidden_layers": 10**9}), "config.num_hidden_layers"),
        ("", "paste a config.json"),
    ]
    for text, needle in cases:
        response = client.post("/plan", data={"config": text})
        assert response.status_code == 400, text[:40]
        page = response.text
        assert needle in html.unescape(page), (text[:40], page[page.find("estimate-error"):][:300])
        assert "<script>alert" not in page and "<img src=x" not in page
    big = client.post("/plan", data={"config": "{" + " " * (600 * 1024) + "}"})
    assert big.status_code == 400 and "is more than the 524288 a config.json may have" in html.unescape(big.text)
    too_big = client.post("/plan", data={"config": "{" + "é" * (1024 * 1024) + "}"})  # 6 bytes each, encoded
    assert too_big.status_code == 413 and "at most 524288 bytes" in too_big.json()["error"]["message"]
    wrong_type = client.post("/plan", content=b'{"config": {}}', headers={"content-type": "application/json"})
    assert wrong_type.status_code == 415 and "/api/v1/plan" in wrong_type.json()["error"]["message"]


def test_plan_paste_matches_the_cli(client: TestClient, tmp_path: Path) -> None:
    config = llama2_config()
    cli = _cli(config, tmp_path, "--method", "full", "--precision", "bf16", "--cost-card", "A100-80GB")
    response = client.post("/plan", data={"config": json.dumps(config), "method": "full", "precision": "bf16",
                                          "card": "A100-80GB"})
    assert response.status_code == 200
    panel = _panel(response.text)
    assert _cells(panel, "full fine-tune")[1] == f"{cli['methods']['full']['peak_gb']:.1f} GB"
    assert f"{cli['cost']['hours']:,.2f} h on {cli['cost']['cards']}× A100-80GB" in panel


def test_plan_by_repo_and_revision(client: TestClient, seeded: Seeded) -> None:
    first = seeded.shas[LLAMA2][0]
    by_prefix = client.get(f"/plan?repo={LLAMA2}&revision={first[:8]}")
    assert by_prefix.status_code == 200 and f"at {first[:12]}, from the files hubwatch stored" in by_prefix.text
    assert "sequence length 2048" in by_prefix.text
    latest = client.post("/plan", data={"repo": str(LLAMA2), "revision": "", "seq_len": "512"})
    assert latest.status_code == 200 and seeded.shas[LLAMA2][-1][:12] in latest.text
    assert "sequence length 512" in latest.text
    for query, needle in ((f"repo={LLAMA2}&revision=deadbeef00", "revision: meta-llama/Llama-2-7b-hf has no stored"),
                          ("repo=nobody/nothing", "repo: nobody/nothing is not watched"),
                          ("repo=not a repo", "repo:")):
        response = client.get(f"/plan?{query}")
        assert response.status_code == 400 and needle in html.unescape(response.text), query


def test_api_plan_takes_repo_revision_and_cost(client: TestClient, seeded: Seeded, tmp_path: Path) -> None:
    first = seeded.shas[LLAMA2][0]
    body = {"repo": str(LLAMA2), "revision": first[:10], "epochs": 2, "samples": 500, "card": "L4",
            "settings": {"method": "qlora"}}
    result = client.post("/api/v1/plan", json=body).json()
    assert result["revision"] == first and result["model"] == str(LLAMA2)
    cost = result["memory"]["cost"]
    assert (cost["card"], cost["epochs"], cost["samples"], cost["method"]) == ("L4", 2, 500, "qlora")
    cli = _cli(llama2_config(), tmp_path, "--method", "qlora", "--epochs", "2", "--samples", "500", "--cost-card", "L4")
    assert cost == cli["cost"] and result["memory"]["methods"] == cli["methods"]
    latest = client.post("/api/v1/plan", json={"repo": str(LLAMA2)}).json()
    assert latest["revision"] == seeded.shas[LLAMA2][-1]
    errors = [
        ({"repo": "nobody/nothing"}, 404, "not watched"),
        ({"repo": str(LLAMA2), "revision": "deadbeef00"}, 400, "revision:"),
        ({"repo": str(LLAMA2), "config": {}}, 400, "not both"),
        ({}, 400, "not neither"),
        ({"config": llama2_config(), "revision": "abc1234"}, 400, "revision:"),
        ({"repo": str(LLAMA2), "samples": True}, 400, "samples:"),
        ({"repo": str(LLAMA2), "card": 7}, 400, "card:"),
    ]
    for request, status, needle in errors:
        response = client.post("/api/v1/plan", json=request)
        assert response.status_code == status, request
        assert needle in response.json()["error"]["message"], (request, response.json())


_FIELD_TEXT = st.one_of(st.text(max_size=12), st.integers(-10**12, 10**12).map(str),
                        st.floats(allow_nan=True, allow_infinity=True).map(repr), st.sampled_from(["lora", "H100", "hf"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["method", "stack", "seq_len", "batch", "lora_rank", "precision", "card",
                                        "epochs", "samples", "repo", "revision"]), _FIELD_TEXT, max_size=5))
def test_any_form_values_are_a_page_or_a_named_error(client: TestClient, fields: dict[str, str]) -> None:
    """Whatever the fields hold, /plan and the model page answer 200 or a 400 naming a field: never a 500."""
    for response in (client.post("/plan", data={"config": json.dumps(llama2_config()), **fields}),
                     client.get(f"/models/{LLAMA2}", params=fields)):
        assert response.status_code in (200, 400), (fields, response.text[:300])
        if response.status_code == 400 or "Cannot estimate" in response.text:
            assert re.search(r"Cannot estimate \((\w+)\)", response.text), fields


def _tiny_snapshot() -> tuple[dict[str, Any], Snapshot]:
    config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
              "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
              "vocab_size": 100, "max_position_embeddings": 256, "tie_word_embeddings": False,
              "torch_dtype": "bfloat16"}
    header = {"model.embed_tokens.weight": {"dtype": "BF16", "shape": [100, 64]},
              "lm_head.weight": {"dtype": "BF16", "shape": [100, 64]},
              "model.norm.weight": {"dtype": "BF16", "shape": [64]}}
    body = json.dumps(config).encode()
    tokenizer = json.dumps({"eos_token": "</s>", "pad_token": None}).encode()
    snapshot = Snapshot(sha=sha("tiny"), files={p: FileRecord(p, 1) for p in ("config.json", "tokenizer_config.json",
                                                                                "model.safetensors")},
                        contents={"config.json": body, "tokenizer_config.json": tokenizer},
                        safetensors={"model.safetensors": header})
    return config, snapshot


def test_stored_inputs_read_the_revision_as_the_tracker_does(feeds_store: Store) -> None:
    from hubwatch.tracker.estimate_inputs import estimator_inputs
    from hubwatch.tracker.pipeline import header_bytes, load_baseline

    _, snapshot = _tiny_snapshot()
    contents = {**snapshot.contents, "model.safetensors": header_bytes(snapshot.safetensors["model.safetensors"])}
    feeds_store.watch(SMALL)
    revision = RevisionRecord(snapshot.sha, None, when(1), "init", "init", ())
    assert feeds_store.save_revision(SMALL, revision, list(snapshot.files.values()), contents, [], None, [])
    # As the tracker reads the stored revision back (its baseline), and with the same figures as the fetched one.
    read = stored_inputs(feeds_store, SMALL, snapshot.sha)
    assert read == estimator_inputs(load_baseline(feeds_store, SMALL, snapshot.sha).snapshot)
    fetched = estimator_inputs(snapshot)
    assert read is not None and fetched is not None and read.manifest is not None and fetched.manifest is not None
    assert read.config == fetched.config and read.tokenizer_config == fetched.tokenizer_config
    assert set(read.manifest.tensors) == set(fetched.manifest.tensors)
    assert stored_inputs(feeds_store, SMALL, snapshot.sha[:9]) is not None


def test_checkpoint_delta_is_explained(client: TestClient, feeds_store: Store) -> None:
    from hubwatch.tracker.pipeline import header_bytes

    _, snapshot = _tiny_snapshot()
    contents = {**snapshot.contents, "model.safetensors": header_bytes(snapshot.safetensors["model.safetensors"])}
    feeds_store.watch(SMALL)
    revision = RevisionRecord(snapshot.sha, None, when(1), "init", "init", ())
    feeds_store.save_revision(SMALL, revision, list(snapshot.files.values()), contents, [], None, [])
    result = client.post("/api/v1/plan", json={"repo": str(SMALL)}).json()
    params = result["params"]
    assert params["checkpoint"] == 100 * 64 * 2 + 64 and params["delta_pct"] < 0 and params["explanation"]
    panel = _panel(client.get(f"/models/{SMALL}").text)
    assert f"{params['checkpoint']:,}" in panel and html.escape(params["explanation"]) in panel
    assert f"{params['delta_pct']:+.2f} %" in panel


def test_panels_are_cached_per_revision_and_settings(client: TestClient) -> None:
    client.get(f"/models/{LLAMA2}")
    client.get(f"/models/{LLAMA2}?batch=2")
    client.get(f"/models/{LLAMA2}")
    cache = client.app.state.estimate_panels  # type: ignore[attr-defined]
    assert len(cache._items) == 2


def test_a_polled_revision_estimates_as_the_cli_does_on_the_hub(hubsim_factory: Any, store: Store, data_dir: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """End to end: the tracker polls the emulator and stores the revision's files; the model page's panel
    and the API then give the checkpoint count and memory `hubwatch estimate org/name` reads from the hub."""
    from feeds_seed import make_settings

    from hubwatch.cli import main
    from hubwatch.feeds import create_app
    from hubwatch.settings import Settings
    from hubwatch.tracker.hub import HubClient
    from hubwatch.tracker.poller import poll_repos

    sim = hubsim_factory(root=data_dir / "hubsim", at=None)
    repo = RepoId.parse("hubsim-test/tiny-llama")
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    store.watch(repo)
    poll_repos([repo], hub=HubClient.from_settings(settings), store=store, settings=settings)
    monkeypatch.setenv("HUBWATCH_HUB_ENDPOINT", sim.url)
    with pytest.raises(SystemExit):
        main(["estimate", str(repo), "--json", "--method", "full", "--batch", "3"])
    (cli,) = json.loads(capsys.readouterr().out)
    assert cli["params"]["checkpoint"] and cli["params"]["checkpoint"] != cli["params"]["derived"]
    with TestClient(create_app(make_settings(), store)) as web:
        api = web.post("/api/v1/plan", json={"repo": str(repo), "settings": {"method": "full", "batch": 3}}).json()
        panel = _panel(web.get(f"/models/{repo}?method=full&batch=3").text)
    assert api["revision"] == cli["revision"] == sim.head(str(repo))
    assert api["params"] == cli["params"] and api["memory"]["methods"] == cli["methods"]
    assert api["findings"] == cli["findings"]
    assert f"{cli['params']['checkpoint']:,}" in panel and f"{cli['params']['delta_pct']:+.2f} %" in panel
    assert html.escape(cli["params"]["explanation"]) in panel
    assert _cells(panel, "full fine-tune")[1] == f"{cli['methods']['full']['peak_gb']:.1f} GB"


def _support(page: str) -> tuple[str, str, str]:
    """(the parameter number, the support level, its words) of the panel's "Parameters (derived)" line."""
    found = re.search(r'<dt>Parameters \(derived\)</dt><dd>([^<]*)<span class="support support-(\w+)">(.*?)</span></dd>',
                      _panel(page), re.S)
    assert found, _panel(page)[:600]
    return found.group(1).strip(), found.group(2), html.unescape(re.sub(r"</?strong>", "", found.group(3)))


def test_the_panel_says_how_far_the_count_is_modelled(client: TestClient, tmp_path: Path) -> None:
    """params.support next to the number, in words, as the CLI's JSON has it: a known family is modelled,
    an unknown architecture says it is approximate, what is guessed and the bound."""
    def support(config: dict[str, Any]) -> tuple[str, str, str]:
        return _support(client.post("/plan", data={"config": json.dumps(config)}).text)

    number, level, words = support(llama2_config())
    assert number == "6,738,415,616 (6.74 B)"
    assert (level, words) == ("modelled", "modelled — every mechanism the config describes is read; expected within 1%")
    odd = {**llama2_config(), "model_type": "made-up-arch", "architectures": ["MadeUpForCausalLM"]}
    _, level, words = support(odd)
    cli = _cli(odd, tmp_path)
    assert level == cli["params"]["support"]["level"] == cli["support"]["level"] == "approximate"
    assert words == cli["support"]["text"]
    assert words.startswith("approximate — ") and words.endswith("; expected within 25%")
    assert "made-up-arch" in words


def test_the_model_page_panel_says_the_level_next_to_the_number(client: TestClient) -> None:
    number, level, words = _support(client.get(f"/models/{LLAMA2}").text)
    assert number.startswith("6,738,") and level == "modelled" and words.endswith("expected within 1%")


def test_the_support_reason_is_escaped(client: TestClient) -> None:
    """A guessed reason carries the config's own text (its model_type): escaped, never markup."""
    hostile = {**llama2_config(), "model_type": "<script>alert(1)</script>", "architectures": ["XForCausalLM"]}
    page = client.post("/plan", data={"config": json.dumps(hostile)}).text
    _, level, words = _support(page)
    assert level == "approximate" and "<script>alert(1)</script>" in words
    assert "<script>alert(1)" not in _panel(page) and "&lt;script&gt;alert(1)&lt;/script&gt;" in _panel(page)


def test_does_not_fit_names_the_term_that_breaks_the_card(client: TestClient, tmp_path: Path) -> None:
    """The selected method on each card at the settings: a card it does not fit says which term breaks its
    budget, as `hubwatch estimate --json` says it (`verdicts`); a batch-1 "does not fit" cell names it too."""
    cli = _cli(_latest_llama2_config(), tmp_path, "--method", "full")
    misfits = [v for v in cli["verdicts"] if not v["fits"]]
    assert misfits and all(v["term"] for v in misfits)
    t4 = next(v for v in misfits if v["card"] == "T4")
    terms = cli["methods"]["full"]["terms"]
    assert t4["term"] == max(terms, key=terms.get)
    assert t4["line"] == (f"does not fit on T4 (16 GB): {t4['term'].replace('_', ' ')} is {t4['term_gb']:.1f} GB "
                          f"of a {t4['budget_gb']:.1f} GB budget")
    page = client.get(f"/models/{LLAMA2}?method=full").text
    listed = [html.unescape(li) for li in re.findall(r'<li class="nofit">(.*?)</li>', _panel(page), re.S)]
    assert listed == [v["line"] for v in misfits]
    cells = _cells(_panel(page), "T4")  # full fine-tune at batch 1 on a T4: the term, beside the card's budget
    assert cells[0] == f"T4 16 GB (budget {t4['budget_gb']:.1f} GB)", cells
    assert cells[1].startswith(f"does not fit: {t4['term'].replace('_', ' ')} {t4['term_gb']:.1f} GB"), cells
    plan = client.get(f"/plan?repo={LLAMA2}&method=full").text
    assert [html.unescape(li) for li in re.findall(r'<li class="nofit">(.*?)</li>', _panel(plan), re.S)] == listed
    api = client.post("/api/v1/plan", json={"repo": str(LLAMA2), "settings": {"method": "full"}}).json()
    assert api["memory"]["verdicts"] == cli["verdicts"] and api["support"] == cli["support"]


def test_an_unsupported_config_says_so_in_words_naming_the_key(client: TestClient, tmp_path: Path) -> None:
    """No number: the panel says `unsupported`, why and the key, as the CLI's JSON does, escaped."""
    from hubwatch.cli import _register, cli

    tower = {**llama2_config(), "vision_<b>config": {"model_type": "x", "hidden_size": 64, "num_hidden_layers": 2}}
    page = client.post("/plan", data={"config": json.dumps(tower)})
    assert page.status_code == 400
    found = re.search(r'<span class="support support-unsupported">(.*?)</span>', _panel(page.text), re.S)
    assert found, _panel(page.text)[:600]
    words = html.unescape(re.sub(r"</?strong>", "", found.group(1)))
    assert words.startswith("unsupported — the sub-config vision_<b>config") and words.endswith(": no number")
    assert "vision_<b>config" not in page.text  # escaped everywhere
    _register()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(tower))
    result = CliRunner().invoke(cli, ["estimate", str(path), "--json"])
    (entry,) = json.loads(result.output)
    assert entry["support"]["level"] == "unsupported" and entry["support"]["text"] == words


def test_a_cost_on_a_card_the_run_does_not_fit_says_why_it_is_a_split(client: TestClient, tmp_path: Path) -> None:
    cli = _cli(_latest_llama2_config(), tmp_path, "--method", "qlora", "--batch", "8", "--cost-card", "L4")
    l4 = next(v for v in cli["verdicts"] if v["card"] == "L4")
    assert not l4["fits"] and cli["cost"]["cards"] > 1
    page = _panel(client.get(f"/plan?repo={LLAMA2}&method=qlora&batch=8&card=L4").text)
    found = re.search(r'<p class="muted split">(.*?)</p>', page, re.S)
    assert found and html.unescape(found.group(1)) == (
        f"On one L4 (24 GB) the run does not fit: {l4['term'].replace('_', ' ')} is {l4['term_gb']:.1f} GB of a "
        f"{l4['budget_gb']:.1f} GB budget; the cost is of a {cli['cost']['cards']}-card split.")
