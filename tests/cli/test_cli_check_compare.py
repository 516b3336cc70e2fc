"""`hubwatch check` links each suggestion to the web app's compare page when a web app is known
(`--server`, or HUBWATCH_PUBLIC_URL set), and prints no link when none is."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from conftest import ADVISED_SHAS

from hubwatch.cli import _register, cli

L1, L2 = ADVISED_SHAS["L1"], ADVISED_SHAS["L2"]


def _check(url: str, root: Path, *args: str, **env: str) -> str:
    _register()
    result = CliRunner().invoke(cli, ["check", str(root), *args],
                                env={"HUBWATCH_DATABASE_URL": url, "COLUMNS": "200", "HUBWATCH_PUBLIC_URL": None, **env})
    assert result.exit_code == 1, result.output
    return result.output


def test_suggestion_links_the_compare_page_when_a_public_url_is_set(advised_store_url: str, tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(f'AutoModel.from_pretrained("acme/llama-small", revision="{L2}")\n')
    expected = f"https://hw.example/models/acme/llama-small/compare/{L2[:12]}...{L1[:12]}"
    text = _check(advised_store_url, tmp_path, HUBWATCH_PUBLIC_URL="https://hw.example/")
    assert f"compare: {expected}" in text
    body = json.loads(_check(advised_store_url, tmp_path, "--json", HUBWATCH_PUBLIC_URL="https://hw.example"))
    assert body["pins"][0]["suggested"]["compare_url"] == expected
    # no web app known: no link (the default public URL is only where `serve` would listen)
    assert "compare:" not in _check(advised_store_url, tmp_path)
    assert "compare_url" not in json.loads(_check(advised_store_url, tmp_path, "--json"))["pins"][0]["suggested"]
