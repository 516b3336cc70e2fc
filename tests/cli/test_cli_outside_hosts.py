"""No connection to any host but the configured hub, seen at the socket, from the CLI a user runs.

`tests/tracker/test_tracker_outside_hosts.py` watches the requests of huggingface_hub's shared
client in one poll. This one watches below every client: each `hubwatch` command runs in a fresh
process (empty HF_HOME, no HF_* settings) whose `sitecustomize` records every name looked up
(`socket.getaddrinfo`) and every internet socket connected, whatever library opened it. The
commands are what a closed-network deployment runs: add a repo, poll it, estimate a hub repo,
show its history and check a pin.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__: list[str] = []

REPO = "meta-llama/Llama-2-7b-hf"

# Loaded by every Python process started with this folder on PYTHONPATH (children included).
_SITECUSTOMIZE = r'''
import os, socket

_LOG = os.environ.get("HUBWATCH_TEST_NET_LOG")
if _LOG:
    def _note(kind, host, port):
        with open(_LOG, "a", encoding="utf-8") as f:
            f.write(f"{kind} {host} {port}\n")

    _getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        _note("lookup", host, port)
        return _getaddrinfo(host, port, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo

    def _watched(method):
        def connect(self, address):
            if self.family in (socket.AF_INET, socket.AF_INET6):
                _note("connect", address[0], address[1])
            return method(self, address)
        return connect

    socket.socket.connect = _watched(socket.socket.connect)
    socket.socket.connect_ex = _watched(socket.socket.connect_ex)
'''


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hubwatch", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=180, check=False)


def test_cli_commands_connect_only_to_the_configured_hub(tmp_path: Path, hubsim_factory: Any) -> None:
    sim = hubsim_factory(at=None)
    hub = urlsplit(sim.url)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    log = tmp_path / "net.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "HUBWATCH_"))}
    env.update({
        "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "HF_HOME": str(tmp_path / "hf_home"),  # nothing cached: the library would fetch what it lacks
        "HUBWATCH_TEST_NET_LOG": str(log),
        "HUBWATCH_HUB_ENDPOINT": sim.url,
        "HUBWATCH_DATABASE_URL": f"sqlite:///{tmp_path / 'hw.db'}",
    })
    pins = tmp_path / "app"
    pins.mkdir()
    (pins / "serve.py").write_text(f'from_pretrained("{REPO}", revision="{sim.head(REPO)}")\n', encoding="utf-8")
    for args in (["watch", "add", REPO], ["poll"], ["estimate", REPO], ["history", REPO], ["check", str(pins)]):
        done = _run(args, env, tmp_path)
        # every command succeeds; `check` exits 1 when the pin it found is affected
        assert done.returncode in ((0, 1) if args[0] == "check" else (0,)), (args, done.stdout[-2000:],
                                                                             done.stderr[-3000:])
        assert "Traceback" not in done.stderr, (args, done.stderr[-3000:])
        if args[0] == "check":
            assert REPO in done.stdout, done.stdout[-2000:]  # it read the pin and answered it
    seen = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    connects = {line for line in seen if line.startswith("connect ")}
    lookups = {line.split()[1] for line in seen if line.startswith("lookup ")}
    # The commands reached the hub (a real poll and a hub estimate ran), and nothing else.
    assert connects == {f"connect {hub.hostname} {hub.port}"}, seen
    assert lookups <= {hub.hostname}, seen
