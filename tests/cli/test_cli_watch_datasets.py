"""`hubwatch watch add datasets/ORG/NAME` and `--type dataset` (issue 33)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from hubwatch.cli import _register, cli


def _run(env: dict[str, str], *args: str) -> Result:
    _register()
    return CliRunner().invoke(cli, list(args), env=env)


def test_watch_add_a_dataset_either_way_and_list_remove_it(database_url: str) -> None:
    env = {"HUBWATCH_DATABASE_URL": database_url, "COLUMNS": "200"}
    added = _run(env, "watch", "add", "datasets/hubwatch-test/reviews")
    assert added.exit_code == 0 and "watching datasets/hubwatch-test/reviews" in added.output, added.output
    again = _run(env, "watch", "add", "hubwatch-test/reviews", "--type", "dataset")
    assert again.exit_code == 0 and "already watching datasets/hubwatch-test/reviews" in again.output, again.output
    model = _run(env, "watch", "add", "hubwatch-test/reviews")
    assert model.exit_code == 0 and "watching hubwatch-test/reviews" in model.output
    listed = _run(env, "watch", "list", "--json")
    rows = {(r["repo"], r["type"]) for r in json.loads(listed.output)}
    assert rows == {("datasets/hubwatch-test/reviews", "dataset"), ("hubwatch-test/reviews", "model")}
    clash = _run(env, "watch", "add", "datasets/a/b", "--type", "model")
    assert clash.exit_code == 2 and "is a dataset id" in clash.output
    refused = _run(env, "watch", "add", "spaces/a/b")
    assert refused.exit_code == 2 and "not spaces" in refused.output
    removed = _run(env, "watch", "remove", "datasets/hubwatch-test/reviews")
    assert removed.exit_code == 0 and "stopped watching datasets/hubwatch-test/reviews" in removed.output
    rows = {(r["repo"], r["type"]) for r in json.loads(_run(env, "watch", "list", "--json").output)}
    assert rows == {("hubwatch-test/reviews", "model")}


def test_a_watched_dataset_is_polled_read_as_data_and_its_pins_checked(
    database_url: str, hubsim_factory: Any, datasets_root: Path, tmp_path: Path
) -> None:
    """The whole path through the real huggingface_hub client and the emulator: `watch add
    datasets/…`, `poll`, the history in the dataset vocabulary (kinds, severities), and `check`
    answering `load_dataset` pins from it, while a model of the same org/name stays apart."""
    sim = hubsim_factory(root=datasets_root, at=None)
    env = {"HUBWATCH_DATABASE_URL": database_url, "HUBWATCH_HUB_ENDPOINT": sim.url, "HF_TOKEN": "", "COLUMNS": "200",
           "HUBWATCH_PUBLIC_URL": "https://hw.example"}
    assert _run(env, "watch", "add", "datasets/hubwatch-test/reviews").exit_code == 0
    polled = _run(env, "poll")
    assert polled.exit_code == 0 and "datasets/hubwatch-test/reviews: 9 new revisions stored" in polled.output, polled.output
    history = json.loads(_run(env, "history", "datasets/hubwatch-test/reviews", "--json").output)
    assert len(history) == 9
    changes = {(c["kind"], c["severity"], c["summary"]) for r in history[1:] for c in r["changes"]}
    kinds = {kind for kind, _, _ in changes}
    assert {"schema", "splits", "data_files", "subsets", "custom_code", "license"} <= kinds
    assert ("schema", "high", "default: column text renamed to review (string)") in changes
    assert any(k == "splits" and s == "high" and "contamination" in text for k, s, text in changes)
    assert any(k == "schema" and s == "high" and "ClassLabel names reordered" in text for k, s, text in changes)
    first, last = history[0]["sha"], history[-1]["sha"]
    # `hubwatch diff` of two stored revisions reads them as data too, as the poll did.
    diffed = _run(env, "diff", "datasets/hubwatch-test/reviews", history[2]["sha"], history[3]["sha"], "--json")
    assert diffed.exit_code == 0, diffed.output
    assert {(c["kind"], c["summary"]) for c in json.loads(diffed.output)["changes"]} == {
        (c["kind"], c["summary"]) for c in history[3]["changes"] if c["kind"] != "advisory"}
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "train.py").write_text(
        "from datasets import load_dataset\n"
        f'old = load_dataset("hubwatch-test/reviews", revision="{first}")\n'
        f'model = AutoModel.from_pretrained("hubwatch-test/reviews", revision="{first}")\n'
    )
    checked = _run(env, "check", str(tmp_path / "proj"), "--format", "json")
    assert checked.exit_code == 1, checked.output
    pins = {p["line"]: p for p in json.loads(checked.output)["pins"]}
    assert pins[2]["repo"] == "datasets/hubwatch-test/reviews" and pins[2]["status"] == "affected"
    assert {a["severity"] for a in pins[2]["advisories"]} >= {"high"}
    assert pins[3]["repo"] == "hubwatch-test/reviews" and pins[3]["status"] == "unknown"  # the model is not watched
    # Every link hubwatch writes for the dataset reaches its pages under /datasets/…: each advisory's web
    # reference and its text, and the pin's compare link to the revision to move to.
    page = "https://hw.example/datasets/hubwatch-test/reviews"
    records = json.loads(_run(env, "advisories", "--repo", "datasets/hubwatch-test/reviews", "--json").output)
    assert records
    for osv in records:
        (web,) = [r["url"] for r in osv["references"] if r["type"] == "WEB"]
        assert web.startswith(f"{page}/revisions/"), web
        assert f"Diff: {page}/revisions/" in osv["details"]
    assert pins[2]["suggested"]["compare_url"].startswith(f"{page}/compare/{first[:12]}...")
