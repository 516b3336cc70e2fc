"""Hostile text that PostgreSQL cannot store (NUL) polled through the emulator into the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tracker_polling import copy_history, poll_once

from hubwatch.domain.records import RepoId
from hubwatch.tracker.poller import NewRevisions

QWEN = RepoId.parse("Qwen/Qwen-7B")


def test_nul_in_commit_message_and_config_is_stored_as_replacement(
    hubsim_factory: Any, store: Any, data_dir: Path, tmp_path: Path
) -> None:
    folder = copy_history(data_dir, tmp_path)
    history = folder / "HISTORY.tsv"
    rows = history.read_text(encoding="utf-8").splitlines()
    cells = rows[3].split("\t")
    cells[3] = "update\x00 context"  # the commit title as the hub API returns it: with a NUL
    rows[3] = "\t".join(cells)
    history.write_text("\n".join(rows) + "\n", encoding="utf-8")
    config = folder / "v3" / "config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    data["model_type"] = "qwen\x00evil"
    data["weird\x00key"] = 1
    config.write_text(json.dumps(data), encoding="utf-8")

    sim = hubsim_factory(root=tmp_path, at=None)
    outcome = poll_once(sim, store, QWEN)
    assert isinstance(outcome, NewRevisions) and len(outcome.shas) == 3, outcome
    last = store.history(QWEN)[-1]
    assert last.revision.title == "update\ufffd context"
    texts = [c.summary for c in last.changes] + [c.path for c in last.changes]
    assert not any("\x00" in t for t in texts)
    # Shown escaped (\\u0000) or replaced (U+FFFD), never dropped: the change is still there.
    assert any("qwen" in t and "evil" in t for t in texts)
    assert any(t.startswith("config.json:weird") and t.endswith("key") for t in texts)
    assert store.repo_state(QWEN).state == "ok"
    # Polling again adds nothing: the sanitised text does not make the revision look new.
    again = poll_once(sim, store, QWEN)
    assert not isinstance(again, NewRevisions)
