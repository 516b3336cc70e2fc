"""Helpers for tracker tests that poll an edited copy of a real history through the emulator."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from hubwatch.settings import Settings
from hubwatch.domain.records import RepoId
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import PollOutcome, poll_repos


def copy_history(data_dir: Path, root: Path, folder: str = "Qwen__Qwen-7B") -> Path:
    """An editable copy of tests/data/histories/<folder> inside `root` (which the emulator serves)."""
    target = root / folder
    shutil.copytree(data_dir / "histories" / folder, target)
    return target


def poll_once(sim: Any, store: Any, repo: RepoId) -> PollOutcome:
    """Watch `repo` and poll it once against the emulator `sim`, as `hubwatch poll` does."""
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    store.watch(repo)
    (outcome,) = poll_repos([repo], hub=HubClient.from_settings(settings), store=store, settings=settings)
    return outcome
