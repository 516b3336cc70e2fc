"""`hubwatch watch list` on an 80-column terminal: repo ids whole, errors as full lines."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from hubwatch.cli import _register, cli
from hubwatch.storage import Store
from hubwatch.domain.records import RepoId

LONG = RepoId("some-organisation", "a-rather-long-model-name-v2.5")


def test_watch_list_keeps_repo_ids_whole_and_errors_readable(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hw.db'}"
    with Store.open(url) as store:
        store.watch(LONG)
        store.watch(RepoId("nope", "nothing"))
        store.repos.record_poll(RepoId("nope", "nothing"), "not_found", "nope/nothing: repo not found (or private)",
                          datetime(2026, 1, 2, 3, 4, tzinfo=UTC))
    _register()
    result = CliRunner().invoke(cli, ["watch", "list"], env={"HUBWATCH_DATABASE_URL": url, "COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert str(LONG) in result.output and "…" not in result.output  # other columns fold instead
    assert "last error nope/nothing: repo not found (or private)" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
