"""A commit that moves the estimate says so: parameters, memory per method and cards no longer fitting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hubwatch.settings import Settings
from hubwatch.domain.records import Kind, RepoId, Severity
from hubwatch.tracker.hub import HubClient
from hubwatch.tracker.poller import poll_repos

LLAMA2_LIKE = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}


def history_root(tmp_path: Path) -> Path:
    """A two-commit repo: a Llama-2-7B-shaped config, then a Llama-3-8B-shaped one (wider MLP, GQA, 128k vocab)."""
    repo = tmp_path / "acme__grow"
    grown = {**LLAMA2_LIKE, "intermediate_size": 14336, "num_key_value_heads": 8, "vocab_size": 128256}
    for version, config in (("v1", LLAMA2_LIKE), ("v2", grown)):
        (repo / version).mkdir(parents=True)
        (repo / version / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return tmp_path


def test_estimate_delta_is_a_change_and_part_of_the_advisory(hubsim_factory: Any, store: Any, tmp_path: Path) -> None:
    sim = hubsim_factory(root=history_root(tmp_path), at=None)
    settings = Settings(database_url="sqlite://", hub_endpoint=sim.url)
    repo = RepoId.parse("acme/grow")
    store.watch(repo)
    poll_repos([repo], hub=HubClient.from_settings(settings), store=store, settings=settings)
    first, second = store.history(repo)
    assert not [c for c in first.changes if c.path == "estimate"]  # nothing to compare the first with
    (moved,) = [c for c in second.changes if c.path == "estimate"]
    assert moved.kind is Kind.ARCHITECTURE
    assert "derived parameters 6,738,415,616 → 8,030,261,248" in moved.summary
    # memory grows for every training method, and the 24 GB cards are lost for QLoRA
    for method in ("Full fine-tune", "LoRA r=16 at 2048 tokens", "QLoRA r=16 at 2048 tokens"):
        assert method in moved.summary
    assert "no longer fits L4 24 GB" in moved.summary
    assert moved.severity is Severity.MEDIUM  # a card that no longer fits is more than a low note
    (advisory,) = [a for a in store.advisories.records(repo) if a.revision_sha == second.revision.sha]
    assert "no longer fits L4 24 GB" in advisory.osv["details"]
    estimate_rows = [c for c in advisory.osv["database_specific"]["changes"] if c["path"] == "estimate"]
    assert estimate_rows and "no longer fits" in estimate_rows[0]["summary"]
