"""`hubwatch history --limit N`: the newest N revisions of a long history, read as one page."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner, Result

from hubwatch.cli import _register, cli
from hubwatch.cli.poll import _LONG_HISTORY
from hubwatch.domain.records import ChangeRecord, Kind, RepoId, RevisionRecord, Severity
from hubwatch.advisories.reconcile import ADVISORY_MODEL
from hubwatch.storage import Store
from hubwatch.tracker.rederive import MODEL_KEY

REPO = RepoId("acme", "long")


def sha(i: int) -> str:
    return f"{i:040x}"


def filled(tmp_path: Path, depth: int) -> str:
    url = f"sqlite:///{tmp_path / 'hw.db'}"
    start = datetime(2024, 1, 1, tzinfo=UTC)
    with Store.open(url) as store:
        store.set_meta(MODEL_KEY, str(ADVISORY_MODEL))  # current: opening the runtime re-derives nothing
        store.watch(REPO)
        for i in range(depth):
            change = ChangeRecord(Kind.SPECIAL_TOKENS, Severity.HIGH, "generation_config.json:eos_token_id", f"rev {i}",
                                  {"file": "generation_config.json", "key": "eos_token_id", "old": i, "new": i + 1})
            store.save_revision(REPO, RevisionRecord(sha(i), sha(i - 1) if i else None, start + timedelta(hours=i),
                                                     f"commit {i}"), [], {}, [change], None, [])
    return url


def history(url: str, *args: str) -> Result:
    _register()
    return CliRunner().invoke(cli, ["history", str(REPO), *args], env={"HUBWATCH_DATABASE_URL": url, "COLUMNS": "120"})


def test_limit_shows_the_newest_revisions_oldest_first(tmp_path: Path) -> None:
    url = filled(tmp_path, 30)
    rows = json.loads(history(url, "--limit", "5", "--json").stdout)
    assert [r["title"] for r in rows] == [f"commit {i}" for i in range(25, 30)]
    assert rows[0]["parent"] == sha(24) and rows[-1]["changes"][0]["summary"] == "rev 29"
    table = history(url, "-n", "3")
    assert table.exit_code == 0, table.output
    out = " ".join(table.stdout.split())
    assert "the newest 3 of 30 revisions, oldest first" in out
    assert out.index("commit 27") < out.index("commit 28") < out.index("commit 29") and "commit 26" not in out


def test_a_limit_past_the_history_shows_it_all_and_a_bad_limit_is_refused(tmp_path: Path) -> None:
    url = filled(tmp_path, 4)
    rows = json.loads(history(url, "--limit", "50", "--json").stdout)
    assert [r["title"] for r in rows] == [f"commit {i}" for i in range(4)]
    assert "acme/long: 4 revisions, oldest first" in " ".join(history(url, "-n", "50").stdout.split())
    refused = history(url, "--limit", "0")
    assert refused.exit_code == 2 and "--limit" in refused.output


def test_a_long_history_printed_whole_points_to_the_limit(tmp_path: Path) -> None:
    url = filled(tmp_path, _LONG_HISTORY + 1)
    whole = history(url)
    assert whole.exit_code == 0, whole.output
    assert f"{_LONG_HISTORY + 1} revisions, oldest first" in whole.stdout
    assert "--limit 20" in whole.stderr and "--limit" not in whole.stdout
    assert "--limit" not in history(url, "-n", "20").stderr
