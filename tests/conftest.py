"""Fixtures shared across the test suite (each block is owned by the area named in its header)."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent
DATA = TESTS / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The test data folder (histories, configs)."""
    return DATA


# ---- storage: `database_url` (sqlite + postgres) and `store` fixtures (owner: storage) -------
# The postgres params need HUBWATCH_TEST_POSTGRES_URL (a server URL, e.g.
# postgresql://postgres@127.0.0.1:5432/test): unset → skipped; set but unreachable → FAIL.
# Each test gets its own fresh, empty database (SQLite: a new file; PostgreSQL: a new schema in a
# database made for the test session), dropped afterwards, so parallel runs never collide.
import os as _os  # noqa: E402
import uuid as _uuid  # noqa: E402
from collections.abc import Iterator as _Iterator  # noqa: E402

_PG_ENV = "HUBWATCH_TEST_POSTGRES_URL"


def _pg_conninfo(url: str) -> str:
    """The URL as libpq takes it (no SQLAlchemy driver suffix)."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme.split('+')[0]}{sep}{rest}"


def _pg_admin(url: str):  # type: ignore[no-untyped-def]
    import psycopg
    from sqlalchemy import make_url

    try:
        return psycopg.connect(_pg_conninfo(url), autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        reason = str(exc).strip()
    shown = make_url(url).render_as_string(hide_password=True)
    pytest.fail(
        f"PostgreSQL at {shown} (from {_PG_ENV}) is unreachable: {reason}\n"
        f"fix: start PostgreSQL there, or unset {_PG_ENV} to skip the postgres tests",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def _postgres_session_db() -> _Iterator[str]:
    """A database of this test session (one per process, so parallel runs never meet), dropped at the end."""
    from sqlalchemy import make_url

    base = _os.environ.get(_PG_ENV, "").strip()
    if not base:
        pytest.skip(f"{_PG_ENV} is not set: PostgreSQL tests skipped")
    name = f"hubwatch_s_{_uuid.uuid4().hex[:16]}"
    with _pg_admin(base) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(base).set(database=name).render_as_string(hide_password=False)
    finally:
        with _pg_admin(base) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def postgres_url(_postgres_session_db: str) -> _Iterator[str]:
    """URL of a new, empty PostgreSQL schema of its own (search_path set in the URL), dropped afterwards.

    A schema per test inside a database per session: as isolated as a database per test for
    hubwatch (every object it creates lands in the schema), at a fraction of the cost
    (CREATE/DROP DATABASE take a second each on a busy machine; a schema takes milliseconds).
    """
    from sqlalchemy import make_url

    schema = f"hubwatch_t_{_uuid.uuid4().hex[:16]}"
    with _pg_admin(_postgres_session_db) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    url = make_url(_postgres_session_db).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with _pg_admin(_postgres_session_db) as admin:
            admin.execute("SET lock_timeout = '10s'")
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """URL of a fresh, empty database: a new SQLite file, or a new PostgreSQL schema (see postgres_url)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'hubwatch.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def store(database_url: str):  # type: ignore[no-untyped-def]
    """A migrated Store on `database_url`, closed after the test."""
    from hubwatch.notify.policy import NotifyPolicy
    from hubwatch.storage import Store

    opened = Store.open(database_url, notify=NotifyPolicy())
    try:
        yield opened
    finally:
        opened.close()


# ---- hub emulator: `histories_root`, `hubsim_factory`, `hubsim` (owner: hubwatch/hubsim) -------
# A real HTTP server (uvicorn in a background thread, free port) that the official
# huggingface_hub client talks to: `HfApi(endpoint=sim.url, token=False)`. Test-only histories
# with weights.json (synthesised safetensors) and a gated repo are in tests/data/hubsim/.
from collections.abc import Callable as _Callable  # noqa: E402
from typing import Any as _Any  # noqa: E402


@pytest.fixture(scope="session")
def histories_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of symlinks: every tests/data/histories/<org>__<name> plus the bundled demo repo
    (meta-llama/Llama-2-7b-hf, 12 revisions). Read-only: do not write into it (the links point
    at the checked-in data); build your own folder under tmp_path for edited histories."""
    from hubwatch.hubsim import demo_root

    root = tmp_path_factory.mktemp("histories_root")
    for source in (DATA / "histories", demo_root()):
        for folder in sorted(source.iterdir()):
            if folder.is_dir() and "__" in folder.name:
                (root / folder.name).symlink_to(folder.resolve(), target_is_directory=True)
    return root


@pytest.fixture(scope="session")
def datasets_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ROOT with every tests/data/datasets/<org>__<name> linked under `datasets/` (served as
    dataset repos) beside one model, hubsim-test/tiny-llama. Read-only, like `histories_root`."""
    root = tmp_path_factory.mktemp("datasets_root")
    (root / "datasets").mkdir()
    for folder in sorted((DATA / "datasets").iterdir()):
        if folder.is_dir() and "__" in folder.name:
            (root / "datasets" / folder.name).symlink_to(folder.resolve(), target_is_directory=True)
    tiny = DATA / "hubsim" / "hubsim-test__tiny-llama"
    (root / tiny.name).symlink_to(tiny.resolve(), target_is_directory=True)
    return root


@pytest.fixture
def hubsim_factory(histories_root: Path) -> _Iterator[_Callable[..., _Any]]:
    """Start emulators: `sim = hubsim_factory(root=None, at="v1", **options)` → a started HubSim.

    `root` defaults to `histories_root`; `at="v1"` shows only each repo's first version
    (`at=None`: every version). Options: `page_size=2` (small pages to test Link paging),
    `faults={...}` or a FaultConfig (error_rate, latency_ms, rate_limit, retry_after, truncate,
    invalid_json, …), `webhook=url`, `webhook_secret=s`. Drive it with `sim.url`,
    `sim.advance("org/name") -> sha` (reveals the next version), `sim.head(repo)`,
    `sim.reset(at=None)`, `sim.set_faults(rate_limit=1, retry_after=0)`. Every emulator started
    here is stopped after the test.
    """
    from hubwatch.hubsim import HubSim

    started: list[_Any] = []

    def start(root: Path | str | None = None, at: str | int | None = "v1", **options: _Any) -> _Any:
        sim = HubSim(root if root is not None else histories_root, at=at, **options).start()
        started.append(sim)
        return sim

    yield start
    for sim in started:
        sim.stop()


@pytest.fixture
def hubsim(hubsim_factory: _Callable[..., _Any]) -> _Any:
    """A running HubSim on `histories_root` with every repo at v1 (see `hubsim_factory`)."""
    return hubsim_factory()


# ---- advisories: `advised_store_url` (owner: hubwatch/advisories/advise + check) -----------------------
# A SQLite store filled through Store.save_revision with advisories built by plan_advisories,
# matching the pins of tests/data/checkproj:
#   acme/llama-small: L1 = 0123…4567 (first) → L2 = 89ab…cdef adds a pickle (high risk)
#                     → L3 fixes the chat template (medium fix: L1 and L2 affected)
#   acme/tiny:        T1 = fedcba9… (first) → T2 licence change (medium risk; T1 clean)
ADVISED_SHAS = {
    "L1": "0123456789abcdef0123456789abcdef01234567",
    "L2": "89abcdef0123456789abcdef0123456789abcdef",
    "L3": "3" * 40,
    "T1": "fedcba9" + "0" * 33,
    "T2": "1" * 40,
}


def fill_advised_store(url: str) -> None:
    """Save the two histories above into the store at `url` the way the tracker does."""
    from datetime import datetime, timezone

    from hubwatch.notify.policy import NotifyPolicy
    from hubwatch.settings import Settings
    from hubwatch.storage import Store
    from hubwatch.domain.records import ChangeRecord, Kind, RepoId, RevisionRecord, Severity
    from hubwatch.advisories.advise import plan_advisories

    def change(kind: Kind, sev: Severity, file: str, key: str | None, old: object, new: object,
               direction: str) -> ChangeRecord:
        path = f"{file}:{key}" if key else file
        return ChangeRecord(kind, sev, path, f"{path}: {old} → {new}",
                            {"file": file, "key": key, "old": old, "new": new}, direction)

    s = ADVISED_SHAS
    histories = {
        RepoId("acme", "llama-small"): [
            (s["L1"], None, []),
            (s["L2"], s["L1"], [change(Kind.PICKLE, Severity.HIGH, "pytorch_model.bin", None, None, 1, "hazard")]),
            (s["L3"], s["L2"], [change(Kind.CHAT_TEMPLATE, Severity.MEDIUM, "tokenizer_config.json",
                                       "chat_template", "bad", "good", "update")]),
        ],
        RepoId("acme", "tiny"): [
            (s["T1"], None, []),
            (s["T2"], s["T1"], [change(Kind.LICENSE, Severity.MEDIUM, "README.md", "license", "mit", "other",
                                       "hazard")]),
        ],
    }
    settings = Settings()
    store = Store.open(url, notify=NotifyPolicy())
    try:
        for repo, revisions in histories.items():
            store.watch(repo)
            for day, (sha, parent, changes) in enumerate(revisions, start=1):
                revision = RevisionRecord(sha, parent, datetime(2024, 6, day, tzinfo=timezone.utc), f"commit {day}")
                advisories = plan_advisories(repo, revision, changes, store.advisories.records(repo), settings)
                assert store.save_revision(repo, revision, [], {}, changes, None, advisories)
    finally:
        store.close()


@pytest.fixture
def advised_store_url(database_url: str) -> str:
    """URL of a fresh store (SQLite; PostgreSQL too when configured) holding the histories above."""
    fill_advised_store(database_url)
    return database_url


# ---- query counting: `count_selects` (owner: storage/feeds scale tests) -----------------------
# Pages over many repos must take a fixed number of queries; tests count what the store runs.
from contextlib import contextmanager as _contextmanager  # noqa: E402


@pytest.fixture
def count_selects() -> _Callable[[_Any], _Any]:
    """`with count_selects(store) as seen:` → `seen` lists the SELECT statements run in the block."""

    @_contextmanager
    def counting(store: _Any) -> _Iterator[list[str]]:
        import sqlalchemy as sa

        seen: list[str] = []

        def listen(conn, cursor, statement, params, context, executemany):  # type: ignore[no-untyped-def]
            if statement.lstrip().upper().startswith("SELECT"):
                seen.append(statement)

        sa.event.listen(store.engine, "before_cursor_execute", listen)
        try:
            yield seen
        finally:
            sa.event.remove(store.engine, "before_cursor_execute", listen)

    return counting


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the advisory records the store decodes during the test, in order (clear it between reads)."""
    import hubwatch.storage.advisories.advisories as stored

    seen: list[str] = []
    original = stored._record

    def counting(row: _Any) -> _Any:
        seen.append(row.id)
        return original(row)

    monkeypatch.setattr(stored, "_record", counting)
    return seen
