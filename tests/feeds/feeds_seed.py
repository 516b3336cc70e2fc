"""Realistic stored history for the web app's tests, written through the real Store (SQLite).

Three repos: Llama-2-7b-hf (4 revisions: initial, a chat template fix, an eos change, a context
change), Llama-3.1-8B-Instruct in the same org (a pickle file added), and a hostile repo whose
remote text carries `<script>`, `]]>` and control characters.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hubwatch.estimator import analyze
from hubwatch.estimator.memory.report import estimate_revision
from hubwatch.feeds import create_app
from hubwatch.settings import Settings
from hubwatch.storage import Store
from hubwatch.domain.records import (
    AdvisoryRecord,
    ChangeRecord,
    FileRecord,
    Kind,
    RepoId,
    RevisionRecord,
    Severity,
)

LLAMA2 = RepoId("meta-llama", "Llama-2-7b-hf")
LLAMA3 = RepoId("meta-llama", "Llama-3.1-8B-Instruct")
HOSTILE = RepoId("evil-org", "hostile")
# No NUL: PostgreSQL text cannot hold it (see test_feeds_builders for NUL in feeds).
HOSTILE_TEXT = "eos <script>alert(1)</script> ]]> \x01\x07\x1b end"
ADMIN_TOKEN = "s3cret-admin"
WEBHOOK_SECRET = "hook-secret"


def sha(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def when(day: int, hour: int = 12) -> datetime:
    return datetime(2023, 7, day, hour, 0, tzinfo=UTC)


@dataclass
class Seeded:
    """What the seed wrote: shas per repo (oldest first) and advisory ids."""

    shas: dict[RepoId, list[str]] = field(default_factory=dict)
    advisories: dict[str, AdvisoryRecord] = field(default_factory=dict)
    received: list[RepoId] = field(default_factory=list)


def estimate(config: dict[str, Any]) -> dict[str, Any]:
    """What the tracker stores for a revision: the estimator's real output on `config`."""
    return estimate_revision(config).to_json()


def advisory(repo: RepoId, commit: str, date: datetime, kind: Kind, severity: Severity,
             summary: str, direction: str = "hazard") -> AdvisoryRecord:
    digest = hashlib.sha256(f"{repo}@{commit}".encode()).hexdigest()[:12]
    adv_id = f"x_HUBWATCH-{date.year}-{digest}" + ("-fix" if direction == "update" else "")
    url = repo.url()
    events = [{"introduced": commit}] if direction == "hazard" else [{"introduced": "0"}, {"fixed": commit}]
    stamp = date.strftime("%Y-%m-%dT%H:%M:%SZ")
    osv = {
        "schema_version": "1.7.5",
        "id": adv_id,
        "modified": stamp,
        "published": stamp,
        "summary": f"{repo}: {summary}",
        "details": f"{kind.value}/{severity.value}: {summary}",
        "affected": [{"package": {"ecosystem": "GIT", "name": url},
                      "ranges": [{"type": "GIT", "repo": url, "events": events}]}],
        "references": [{"type": "WEB", "url": f"{url}/commit/{commit}"}],
        "database_specific": {"source": "hubwatch", "repo": str(repo), "commit": commit,
                              "direction": direction, "kinds": [kind.value],
                              "max_severity": severity.value},
    }
    return AdvisoryRecord(adv_id, repo, commit, osv, date)


def _save(store: Store, seeded: Seeded, repo: RepoId, title: str, date: datetime,
          changes: list[ChangeRecord], est: dict[str, Any] | None, advise: list[tuple[Kind, Severity, str, str]],
          config: dict[str, Any]) -> str:
    shas = seeded.shas.setdefault(repo, [])
    commit = sha(f"{repo}:{len(shas)}:{title}")
    revision = RevisionRecord(commit, shas[-1] if shas else None, date, title, title, ("julien-c",))
    body = json.dumps(config).encode()
    records = [advisory(repo, commit, date, k, s, text, d) for k, s, text, d in advise]
    saved = store.save_revision(repo, revision, [FileRecord("config.json", len(body))], {"config.json": body},
                                changes, ("test-1", est) if est else None, records)
    assert saved
    shas.append(commit)
    seeded.advisories.update({r.id: r for r in records})
    return commit


def change(kind: Kind, severity: Severity, path: str, summary: str, old: Any, new: Any,
           direction: str = "hazard", **extra: Any) -> ChangeRecord:
    file, _, key = path.partition(":")
    return ChangeRecord(kind, severity, path, summary,
                        {"file": file, "key": key or None, "old": old, "new": new, **extra}, direction)


def llama2_config() -> dict[str, Any]:
    """Llama-2-7b-hf's real config.json, with the 2048-token context of its first upload."""
    path = Path(__file__).parent.parent / "data/configs/meta-llama__Llama-2-7b-hf/config.json"
    config: dict[str, Any] = json.loads(path.read_text())
    config["max_position_embeddings"] = 2048
    return config


def seed(store: Store) -> Seeded:
    s = Seeded()
    for repo in (LLAMA2, LLAMA3, HOSTILE):
        store.watch(repo)
    cfg = llama2_config()
    _save(store, s, LLAMA2, "Upload LlamaForCausalLM", when(18, 9), [],
          estimate(cfg), [], cfg)
    _save(store, s, LLAMA2, "Update chat template", when(19), [
        change(Kind.CHAT_TEMPLATE, Severity.HIGH, "tokenizer_config.json:chat_template",
               "rendered prompt for multi-turn conversations changed", "{{ old }}", "{{ new }}", "update",
               text_diff="--- old/tokenizer_config.json\n+++ new/tokenizer_config.json\n@@ -1 +1 @@\n-{{ old }}\n+{{ new }}",
               rendered_diff={
                   "multi_turn": {"old": "ok", "new": "ok",
                                  "diff": "--- old/multi_turn\n+++ new/multi_turn\n@@ -1 +1 @@\n"
                                          "-[INST] hi [/INST]\n+<s>[INST] hi [/INST]"},
                   "tool_call": {"old": "error: UndefinedError", "new": "ok"},
               }),
        change(Kind.METADATA, Severity.INFO, "config.json:transformers_version",
               "transformers_version 4.31.0 → 4.32.0", "4.31.0", "4.32.0"),
    ], estimate(cfg),
        [(Kind.CHAT_TEMPLATE, Severity.HIGH, "chat template corrected", "update")], cfg)
    _save(store, s, LLAMA2, "Update generation config", when(20), [
        change(Kind.SPECIAL_TOKENS, Severity.HIGH, "generation_config.json:eos_token_id",
               "eos_token_id 2 → [2, 32000]", 2, [2, 32000]),
    ], estimate(cfg),
        [(Kind.SPECIAL_TOKENS, Severity.HIGH, "eos_token_id became a list", "hazard")], cfg)
    _save(store, s, LLAMA2, "Longer context", when(21), [
        change(Kind.CONTEXT, Severity.MEDIUM, "config.json:max_position_embeddings",
               "max_position_embeddings 2048 → 4096", 2048, 4096,
               diff="--- a/config.json\n+++ b/config.json\n@@ -3 +3 @@\n-  \"max_position_embeddings\": 2048\n"
                    "+  \"max_position_embeddings\": 4096"),
    ], estimate({**cfg, "max_position_embeddings": 4096}),
        [(Kind.CONTEXT, Severity.MEDIUM, "context doubled", "hazard")], {**cfg, "max_position_embeddings": 4096})
    _save(store, s, LLAMA3, "Initial upload", when(22), [], None, [], cfg)
    _save(store, s, LLAMA3, "Add pytorch_model.bin", when(23), [
        change(Kind.PICKLE, Severity.HIGH, "pytorch_model.bin", "pytorch_model.bin added", None, "pytorch_model.bin"),
    ], None, [(Kind.PICKLE, Severity.HIGH, "pickle file added", "hazard")], cfg)
    _save(store, s, HOSTILE, f"title {HOSTILE_TEXT}", when(24), [
        change(Kind.SPECIAL_TOKENS, Severity.CRITICAL, "tokenizer_config.json:eos_token",
               HOSTILE_TEXT, "</s>", HOSTILE_TEXT),
    ], {"error": "unknown architecture <b>x</b>"},
        [(Kind.SPECIAL_TOKENS, Severity.CRITICAL, HOSTILE_TEXT, "hazard")], cfg)
    store.repos.record_poll(LLAMA2, "ok", None, when(25))
    return s


def make_settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": "sqlite://",
        "public_url": "https://hubwatch.example",
        "admin_token": ADMIN_TOKEN,
        "webhook_secret": WEBHOOK_SECRET,
        "osv_page_size": 2,
        **overrides,
    }
    return Settings(**values)


@pytest.fixture
def feeds_store(store: Store) -> Store:
    """The shared `store` fixture (a fresh SQLite file, or PostgreSQL when configured)."""
    return store


@pytest.fixture
def seeded(feeds_store: Store) -> Seeded:
    return seed(feeds_store)


@pytest.fixture
def client(feeds_store: Store, seeded: Seeded) -> Iterator[TestClient]:
    app = create_app(make_settings(), feeds_store, on_webhook=seeded.received.append)
    with TestClient(app) as test_client:
        yield test_client
