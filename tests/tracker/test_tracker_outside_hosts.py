"""No request to any host but the configured hub: a full poll (with estimates) in a fresh process.

huggingface_hub fetches an agent registry from its default endpoint the first time it builds
request headers (once per process, cached under HF_HOME), so the check runs in a new process
with an empty HF_HOME and no HF_* settings: a request hook on the library's shared client
records the origin of every request made while the tracker polls the emulator.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

__all__: list[str] = []

_SCRIPT = r"""
import json, sys
from huggingface_hub import get_session
from hubwatch.hubsim import HubSim, demo_root
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.requests_seen import origin_of
from hubwatch.tracker.scheduler import PollCycle
from hubwatch.domain.records import RepoId

seen = []
session = get_session()
hooks = session.event_hooks
session.event_hooks = {**hooks, "request": [*hooks.get("request", []), lambda r: seen.append(origin_of(str(r.url)))]}
sim = HubSim(demo_root(), at=None).start()
try:
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url, hub_timeout_s=10)
    with Store.open(f"sqlite:///{sys.argv[1]}") as store:
        store.watch(RepoId.parse("meta-llama/Llama-2-7b-hf"))
        outcomes = PollCycle(hub=HubClient.from_settings(settings), store=store, settings=settings, worker_id="w")()
        revisions = len(store.history(RepoId.parse("meta-llama/Llama-2-7b-hf")))
    print(json.dumps({"hub": origin_of(sim.url), "seen": sorted(set(seen)), "requests": len(seen),
                      "outcomes": [type(o).__name__ for o in outcomes], "revisions": revisions}))
finally:
    sim.stop()
"""


def test_a_full_poll_contacts_only_the_configured_hub(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "HUBWATCH_"))}
    env["HF_HOME"] = str(tmp_path / "hf_home")  # no cached registry: the library would fetch it
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path / "hw.db")], env=env, capture_output=True,
                          text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["revisions"] >= 2 and "NewRevisions" in report["outcomes"], report  # a real poll ran
    assert report["requests"] > 10, report
    assert report["seen"] == [report["hub"]], report  # every request went to the emulator
