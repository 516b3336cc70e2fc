"""The browser tests' site: real histories polled from the hub emulator into a SQLite store, the
real app served by uvicorn on a free loopback port, and one system Chromium driven by Playwright.
The test modules name this module in `pytest_plugins`, so its session fixtures are registered once
for all of them (one site, one browser per run); there is no conftest.py here: other folders' tests
import names from the module `conftest`, which one here would shadow.

Histories: the bundled demo (meta-llama/Llama-2-7b-hf, 12 revisions), deepseek-ai/DeepSeek-R1
(tests/data, 4 revisions) and `evil-org/hostile`, written here, whose card, licence, config and
chat template carry `<script>`, an `onerror=` image, `javascript:` links and a payload that would
set `window.__pwned` if any of it ever ran; its card's `datasets:` names the two watched datasets
(tests/data/datasets: the synthetic hubwatch-test/reviews, 9 revisions with every dataset change
kind, and stanfordnlp/imdb's real metadata, 2 revisions), one that is not watched, and payloads.

Chromium is Debian's package (`/usr/bin/chromium`, installed by `.ci/run`; Playwright's own
download cannot work here). Without it the tests skip with the reason, unless CI is set
(`CI=true`, or `HUBWATCH_TEST_BROWSER=required` as `.ci/run` sets): then they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("HUBWATCH_TEST_CHROMIUM", "/usr/bin/chromium"))
DATA = Path(__file__).parent.parent / "data"
ARTIFACTS = Path(__file__).parent.parent.parent / "test-artifacts" / "screenshots"
WIDTHS = (400, 1280)

HOSTILE_REPO = "evil-org/hostile"
DATASETS = ("hubwatch-test/reviews", "stanfordnlp/imdb")  # watched; tests/data/datasets/ORG__NAME
# Each payload, if it ever ran, would open a dialog or set window.__pwned (the tests check both).
PAYLOADS = (
    "<script>window.__pwned = 1; alert('script')</script>",
    "<img src=x onerror=\"window.__pwned = 2; alert('img')\">",
    "[click me](javascript:window.__pwned=3;alert('md'))",
    "<a href=\"javascript:window.__pwned=4;alert('a')\">link</a>",
    "<svg onload=\"window.__pwned=5\"></svg>",
    "\"><script>window.__pwned=6</script>",
)
HOSTILE = " ".join(PAYLOADS)


def _required() -> bool:
    """True in CI: a missing browser is a failure there, not a skip."""
    ci = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}
    return ci or os.environ.get("HUBWATCH_TEST_BROWSER", "").strip().lower() == "required"


def _card(version: int) -> str:
    """A model card whose metadata (licence, tags, links) and text are hostile (JSON scalars are YAML)."""
    meta = {
        "license": f"other {HOSTILE} v{version}",
        "license_name": PAYLOADS[0],
        "license_link": "javascript:window.__pwned=7",
        "tags": [PAYLOADS[1], f"v{version}"],
        "base_model": f"javascript:window.__pwned=10//{version}",
        "datasets": [*DATASETS, "allenai/c4", PAYLOADS[0], "javascript:window.__pwned=11"],
    }
    front = "".join(f"{key}: {json.dumps(value)}\n" for key, value in meta.items())
    return (
        f"---\n{front}---\n"
        f"# Hostile card v{version}\n\n{HOSTILE}\n\n"
        "[a javascript link](javascript:window.__pwned=8) and "
        "<a href=\"javascript:window.__pwned=9\">raw html link</a>\n"
    )


def _write_hostile(folder: Path) -> None:
    """Three versions of a small Llama repo whose every remote string is hostile."""
    base: dict[str, Any] = json.loads((DATA / "configs/meta-llama__Llama-2-7b-hf/config.json").read_text())
    rows = ["version\tdate\tcommit\tmessage\twhat_changed\tsource"]
    for version in (1, 2, 3):
        vdir = folder / f"v{version}"
        vdir.mkdir(parents=True)
        config = {**base, "architectures": [f"LlamaForCausalLM{'' if version == 1 else PAYLOADS[0]}"],
                  "torch_dtype": "float16", "_name_or_path": HOSTILE,
                  "max_position_embeddings": 2048 * version, "num_hidden_layers": 24 + 4 * version}
        if version >= 2:
            config["auto_map"] = {"AutoModelForCausalLM": f"modeling_evil.Evil{version}"}
        (vdir / "config.json").write_text(json.dumps(config, indent=2))
        template = (
            "{% for m in messages %}" + PAYLOADS[version % len(PAYLOADS)] +
            "{{ m['content'] }}" + PAYLOADS[1] + "{% endfor %}" + ("<|assistant|>" if version == 3 else "")
        )
        tokenizer = {"chat_template": template, "eos_token": PAYLOADS[(version + 2) % len(PAYLOADS)],
                     "bos_token": "<s>", "model_max_length": 2048 * version}
        (vdir / "tokenizer_config.json").write_text(json.dumps(tokenizer, indent=2))
        (vdir / "generation_config.json").write_text(json.dumps({"eos_token_id": version, "bos_token_id": 1}))
        (vdir / "README.md").write_text(_card(version))
        if version >= 2:
            (vdir / "modeling_evil.py").write_text(f"# {HOSTILE}\nimport os\nos.system('echo {version}')\n")
        message = f"v{version} {PAYLOADS[version % len(PAYLOADS)]}".replace("\t", " ")
        rows.append(f"v{version}\t2025-03-0{version}\t\t{message}\thostile\tbrowser tests")
    (folder / "HISTORY.tsv").write_text("\n".join(rows) + "\n")


def _free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@dataclass(frozen=True)
class Site:
    """The running app: its base URL and what was seeded."""

    url: str
    repos: tuple[str, ...]  # the models
    datasets: tuple[str, ...] = DATASETS


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The real app over real polled histories, served by uvicorn on 127.0.0.1 (a free port)."""
    import uvicorn

    from hubwatch.domain.records import RepoId
    from hubwatch.feeds import create_app
    from hubwatch.hubsim import HubSim, demo_root
    from hubwatch.settings import Settings
    from hubwatch.storage import Store
    from hubwatch.tracker.hub import HubClient
    from hubwatch.tracker.poller import poll_repos

    root = tmp_path_factory.mktemp("browser_hub")
    for source in (demo_root() / "meta-llama__Llama-2-7b-hf", DATA / "histories/deepseek-ai__DeepSeek-R1"):
        (root / source.name).symlink_to(source.resolve(), target_is_directory=True)
    _write_hostile(root / HOSTILE_REPO.replace("/", "__"))
    (root / "datasets").mkdir()
    for dataset in DATASETS:
        folder = DATA / "datasets" / dataset.replace("/", "__")
        (root / "datasets" / folder.name).symlink_to(folder.resolve(), target_is_directory=True)
    repos = ("meta-llama/Llama-2-7b-hf", "deepseek-ai/DeepSeek-R1", HOSTILE_REPO)
    ids = [RepoId.parse(r) for r in repos] + [RepoId.parse(d, "dataset") for d in DATASETS]

    db = tmp_path_factory.mktemp("browser_db") / "hubwatch.db"
    store = Store.open(f"sqlite:///{db}")
    with HubSim(root, at=None) as sim:
        settings = Settings(database_url=f"sqlite:///{db}", hub_endpoint=sim.url)
        for repo_id in ids:
            store.watch(repo_id)
        poll_repos(ids, hub=HubClient.from_settings(settings), store=store, settings=settings)

    app = create_app(Settings(database_url=f"sqlite:///{db}"), store)
    sock = _free_socket()
    host, port = sock.getsockname()[:2]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="browser-site", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the app did not start under uvicorn")
        time.sleep(0.02)
    try:
        yield Site(f"http://{host}:{port}", repos)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        store.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless system Chromium for the whole run."""
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does)"
        if _required():
            pytest.fail(f"browser tests are required in CI: {reason}", pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go (git-ignored; CI keeps the folder). Emptied once per run."""
    if ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS
