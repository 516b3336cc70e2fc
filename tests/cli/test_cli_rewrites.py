"""What `hubwatch poll` and `hubwatch history` say about a force-push."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from hubwatch.cli import _register, cli
from hubwatch.cli.poll import _outcome_line
from hubwatch.storage import Store
from hubwatch.domain.records import RepoId, RevisionRecord
from hubwatch.tracker.poller import Unchanged

REPO = RepoId("acme", "pushed")
A, B, C = "a" * 40, "b" * 40, "c" * 40


def test_poll_line_says_rewritten() -> None:
    line = _outcome_line(Unchanged(REPO, A, (B, C)))
    assert "rewritten" in line and "acme/pushed" in line and "aaaaaaaaaaaa" in line and "2 stored revisions" in line
    assert "unchanged" in _outcome_line(Unchanged(REPO, A))


def _rewritten(tmp_path: Path) -> str:
    """A store of a, b, c whose head a force-push moved back to a (b and c dropped): its URL."""
    url = f"sqlite:///{tmp_path / 'hw.db'}"
    when = datetime(2024, 5, 1, tzinfo=UTC)
    with Store.open(url) as store:
        for sha, parent in ((A, None), (B, A), (C, B)):
            store.save_revision(REPO, RevisionRecord(sha, parent, when, f"commit {sha[0]}"), [], {}, [], None, [])
        store.revisions.record_rewrite(REPO, C, A, [B, C], datetime(2024, 6, 1, 12, 30, tzinfo=UTC))
    return url


def test_history_marks_dropped_revisions_and_lists_the_rewrite(tmp_path: Path) -> None:
    url = _rewritten(tmp_path)
    _register()
    result = CliRunner().invoke(cli, ["history", str(REPO)], env={"HUBWATCH_DATABASE_URL": url, "COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert out.count("no longer on the main branch (force-push)") == 2
    assert "history rewritten (seen 2024-06-01 12:30 UTC): cccccccccccc → aaaaaaaaaaaa" in out


def test_history_lists_the_restore_after_the_rewrite(tmp_path: Path) -> None:
    url = _rewritten(tmp_path)
    with Store.open(url) as store:
        assert store.revisions.move_head(REPO, B, datetime(2024, 6, 2, 8, 0, tzinfo=UTC))  # upstream pushed b back
        assert not store.revisions.move_head(REPO, B, datetime(2024, 6, 3, tzinfo=UTC))  # already there: nothing again
        (restore,) = store.revisions.restores(REPO)
        assert (restore.old_head, restore.new_head, restore.restored) == (A, B, (B,))
    _register()
    result = CliRunner().invoke(cli, ["history", str(REPO)], env={"HUBWATCH_DATABASE_URL": url, "COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert out.count("no longer on the main branch (force-push)") == 1  # c only: b is back
    rewritten = out.index("history rewritten (seen 2024-06-01 12:30 UTC): cccccccccccc → aaaaaaaaaaaa")
    restored = out.index("history restored (seen 2024-06-02 08:00 UTC): aaaaaaaaaaaa → bbbbbbbbbbbb, back on the "
                         "main line bbbbbbbbbbbb")
    assert rewritten < restored
