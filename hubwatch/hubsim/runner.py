"""Runs the emulator with uvicorn: in a background thread (`HubSim`, for tests and the demo) or in front."""

from __future__ import annotations

import copy
import socket
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Self

import uvicorn
import uvicorn.config

from hubwatch.hubsim import modes
from hubwatch.hubsim.app import create_app
from hubwatch.hubsim.control import WebhookSender
from hubwatch.hubsim.faults import FaultConfig
from hubwatch.hubsim.repos import load_root
from hubwatch.hubsim.state import SimState, parse_at

__all__ = ["HubSim", "bind", "build_state", "demo_root", "serve_forever"]


def demo_root() -> Path:
    """The bundled demo history (meta-llama/Llama-2-7b-hf, 12 real revisions)."""
    return Path(__file__).parent / "demo"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0 picks a free one), so the real port is known before serving."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP (not 0), or asyncio leaves Nagle on for accepted connections: +40 ms per response
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def build_state(
    root: Path,
    *,
    at: str | int | None = None,
    faults: FaultConfig | Mapping[str, object] | None = None,
    page_size: int | None = None,
    webhook: str | None = None,
    webhook_secret: str | None = None,
    conversion_lag: bool = False,
) -> SimState:
    """Load `root` and wrap it in a live state (raises HistoryError / ValueError naming the problem)."""
    if page_size is not None and page_size < 1:
        raise ValueError(f"page_size must be at least 1, got {page_size}")
    config = faults if isinstance(faults, FaultConfig) or faults is None else FaultConfig.from_mapping(faults)
    sender = WebhookSender(webhook, webhook_secret) if webhook else None
    return SimState(load_root(root), at=parse_at(at), faults=config, page_size=page_size, on_advance=sender,
                    conversion_lag=conversion_lag)  # fmt: skip


def _server(state: SimState, log_level: str) -> uvicorn.Server:
    # Every log line goes to stderr: stdout carries only the "listening on" line, so a parent that
    # reads that line and never drains the pipe cannot block the server.
    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    for handler in log_config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"
    config = uvicorn.Config(
        create_app(state),
        log_level=log_level,
        log_config=log_config,
        lifespan="off",
        access_log=log_level in {"info", "debug"},
    )
    return uvicorn.Server(config)


def serve_forever(state: SimState, sock: socket.socket, log_level: str = "info") -> None:
    """Serve on `sock` in this thread until interrupted (Ctrl-C / SIGTERM)."""
    _set_base_url(state, url_of(sock))
    _server(state, log_level).run(sockets=[sock])


def _set_base_url(state: SimState, url: str) -> None:
    if isinstance(state.on_advance, WebhookSender):
        state.on_advance.base_url = url


class HubSim:
    """A running emulator in a background thread: `with HubSim(root, at="v1") as sim: sim.url …`.

    `advance(repo_id)` reveals the next version and returns its sha; `reset()`, `set_faults()`
    and `head()` drive it the way the `/_sim` routes do. `stop()` shuts it down (idempotent).
    """

    def __init__(
        self,
        root: Path | str | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        at: str | int | None = None,
        faults: FaultConfig | Mapping[str, object] | None = None,
        page_size: int | None = None,
        webhook: str | None = None,
        webhook_secret: str | None = None,
        conversion_lag: bool = False,
    ) -> None:
        self.root = Path(root) if root is not None else demo_root()
        self.state = build_state(
            self.root, at=at, faults=faults, page_size=page_size, webhook=webhook, webhook_secret=webhook_secret,
            conversion_lag=conversion_lag,
        )
        self._host, self._port = host, port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._url: str | None = None
        self._sock: socket.socket | None = None

    @property
    def url(self) -> str:
        if self._url is None:
            raise RuntimeError("HubSim is not started; call start() or use it as a context manager")
        return self._url

    def start(self, timeout: float = 10.0) -> Self:
        if self._thread is not None:
            return self
        sock = bind(self._host, self._port)
        self._url = url_of(sock)
        _set_base_url(self.state, self._url)
        self._server = _server(self.state, "warning")
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name=f"hubsim {self._url}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"hubsim did not start on {self._url}")
            time.sleep(0.01)
        self._sock = sock
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._server, self._thread = None, None

    def advance(self, repo_id: str, at: datetime | None = None) -> str:
        """Reveal the next version of `repo_id` (webhook sent if configured), listed as modified `at`
        (default now); returns the new sha."""
        return self.state.advance(repo_id, at).commit.sha

    def rewind(self, repo_id: str, to: str | int) -> str:
        """Force-push main back to version `to` (`advance` pushes the later ones back); the new head's sha."""
        return self.state.rewind(repo_id, to).sha

    def squash(self, repo_id: str) -> str:
        """Squash main's history into one commit without a parent (`super_squash_history`); its sha."""
        return self.state.squash(repo_id).sha

    def convert(self, repo_id: str) -> str | None:
        """Run the parquet converter on a dataset (with `conversion_lag`, what `advance` revealed is
        converted only then): the sha of its conversion of main's head, or None when it has none."""
        commit = self.state.convert(repo_id)
        return commit.sha if commit is not None else None

    def head(self, repo_id: str) -> str:
        """The sha `main` points at now."""
        return self.state.head(repo_id).sha

    def requests(self, *, reset: bool = False) -> dict[str, int]:
        """The hub requests answered: `seen`, `in_flight` now and `max_in_flight` (the most answered
        at once since the start or the last `reset=True`), as `GET /_sim/state` reports them."""
        return modes.concurrency(self.state, reset=reset)

    def reset(self, at: str | int | None = None) -> None:
        """Back to versions ≤ `at` (default: the start setting); faults back to the start ones."""
        self.state.reset(parse_at(at) if at is not None else self.state.start_at)

    def set_faults(self, faults: FaultConfig | Mapping[str, object] | None = None, **settings: object) -> None:
        """Replace the live faults, e.g. `set_faults(rate_limit=2, retry_after=0)`; no argument clears them."""
        if faults is None:
            faults = FaultConfig.from_mapping(settings)
        elif not isinstance(faults, FaultConfig):
            faults = FaultConfig.from_mapping(faults)
        self.state.faults.set(faults)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
