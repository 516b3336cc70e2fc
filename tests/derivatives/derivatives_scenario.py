"""The derivatives scenario of tests/derivatives (a fixture its tests import): famlab/base and its three
derivatives watched through the emulator's listing and polled; `advance` reveals a new version,
polls and checks inheritance."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hubwatch.domain.records import RepoId
from hubwatch.settings import Settings
from hubwatch.tracker.derivatives import check_inheritance, watch_with_derivatives
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import poll_repos

BASE = RepoId.parse("famlab/base")
STALE = RepoId.parse("famlab/chat-stale")
FIXED = RepoId.parse("famlab/chat-fixed")
OWN = RepoId.parse("famlab/chat-own")


@dataclass
class Scenario:
    sim: Any
    store: Any
    hub: HubClient
    settings: Settings
    url: str

    def poll(self) -> None:
        poll_repos([s.repo for s in self.store.repos.watched()], hub=self.hub, store=self.store, settings=self.settings)

    def advance(self, repo: RepoId) -> str:
        sha: str = self.sim.advance(str(repo))
        self.poll()
        check_inheritance(self.store, self.settings)
        return sha


@pytest.fixture
def scenario(hubsim_factory: Any, store: Any, database_url: str, data_dir: Path) -> Scenario:
    """The base and its derivatives at v1 everywhere, watched (base with --derivatives) and polled; nothing advised yet."""
    sim = hubsim_factory(root=data_dir / "derivatives", at="v1")
    settings = Settings(database_url=database_url, hub_endpoint=sim.url)
    fam = Scenario(sim, store, HubClient.from_settings(settings), settings, database_url)
    watch_with_derivatives(store, fam.hub, BASE)
    fam.poll()
    return fam
